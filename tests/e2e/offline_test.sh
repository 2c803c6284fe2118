#!/usr/bin/env bash
# Proves that `bazel build //:wheels` downloads nothing but cargo's crates:
# the crates are fetched first (the one permitted download), then //:wheels
# is built from a fresh output base inside a network namespace that has only
# loopback. Any http_archive, toolchain download or pip call would fail it.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v unshare >/dev/null || { echo "offline_test: unshare (util-linux) missing" >&2; exit 1; }
CARGO=${CARGO:-$(command -v cargo || echo "$HOME/.cargo/bin/cargo")}
"$CARGO" fetch --locked --manifest-path tools/Cargo.toml

base=$(mktemp -d "${TMPDIR:-/tmp}/rules_rocm_offline.XXXXXX")
cleanup() {
  bazel --output_base="$base" shutdown >/dev/null 2>&1 || true
  chmod -R u+w "$base" 2>/dev/null || true
  rm -rf "$base"
}
trap cleanup EXIT

# Sanity: the namespace really has no network.
if unshare --net sh -c 'ip link set lo up; exec getent hosts pypi.org' >/dev/null 2>&1; then
  echo "offline_test: the network namespace can still resolve pypi.org" >&2
  exit 1
fi
# Cargo may not touch the network either: the crates are in its cache.
unshare --net env CARGO_NET_OFFLINE=true bash -c '
  ip link set lo up
  exec bazel --output_base="$1" build --config=offline //:wheels "${@:2}"
' _ "$base" "$@"
echo "offline_test: //:wheels built with no network"
