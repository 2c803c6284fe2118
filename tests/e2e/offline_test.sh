#!/usr/bin/env bash
# Proves that `bazel build //:wheels` downloads nothing but cargo's crates:
# the crates are fetched first (the one permitted download), then //:wheels
# is built from a fresh output base and an empty repository cache inside a
# network namespace that has only loopback. Any http_archive (even one
# pinned by sha256, which a shared repository cache would serve), toolchain
# download or pip call would fail it.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v unshare >/dev/null || { echo "offline_test: unshare (util-linux) missing" >&2; exit 1; }
cargo fetch --locked --manifest-path tools/Cargo.toml

base=$(mktemp -d "${TMPDIR:-/tmp}/rules_rocm_offline.XXXXXX")
cleanup() {
  bazel --output_base="$base/ob" shutdown >/dev/null 2>&1 || true
  chmod -R u+w "$base" 2>/dev/null || true
  rm -rf "$base"
}
trap cleanup EXIT
mkdir -p "$base/repository_cache"

# Sanity: the namespace really has no network.
if unshare --net sh -c 'ip link set lo up; exec getent hosts pypi.org' >/dev/null 2>&1; then
  echo "offline_test: the network namespace can still resolve pypi.org" >&2
  exit 1
fi
# Cargo may not touch the network either: the crates are in its cache.
unshare --net env CARGO_NET_OFFLINE=true bash -c '
  ip link set lo up
  exec bazel --output_base="$1/ob" build --repository_cache="$1/repository_cache" --distdir= //:wheels "${@:2}"
' _ "$base" "$@"
[[ -z $(find "$base/repository_cache" -type f) ]] || {
  echo "offline_test: the build put files into the empty repository cache:" >&2
  find "$base/repository_cache" -type f >&2
  exit 1
}
echo "offline_test: //:wheels built with no network and an empty repository cache"
