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
  local ob
  for ob in "$base/ob" "$base"/control/ob-*; do
    [[ -d $ob ]] && bazel --output_base="$ob" shutdown >/dev/null 2>&1 || true
  done
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

# Control: the check above can fail. A scratch module with one sha256-pinned
# http_archive, fetched once from a loopback server into a repository cache:
# offline, that cache serves it (what a shared cache would hide), and an empty
# one makes the same build fail.
ctl=$base/control
mkdir -p "$ctl/srv/pinned" "$ctl/ws" "$ctl/shared_cache" "$ctl/empty_cache"
echo 'exports_files(["data.txt"])' >"$ctl/srv/pinned/BUILD.bazel"
echo "pinned" >"$ctl/srv/pinned/data.txt"
tar -C "$ctl/srv" --sort=name --mtime=@0 --owner=0 --group=0 -czf "$ctl/srv/pinned.tar.gz" pinned
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$ctl/ws/MODULE.bazel" <<MOD
module(name = "offline_control")

http_archive = use_repo_rule("@bazel_tools//tools/build_defs/repo:http.bzl", "http_archive")

http_archive(
    name = "pinned",
    sha256 = "$(sha256sum "$ctl/srv/pinned.tar.gz" | cut -d' ' -f1)",
    strip_prefix = "pinned",
    urls = ["http://127.0.0.1:$port/pinned.tar.gz"],
)
MOD
echo 'genrule(name = "g", srcs = ["@pinned//:data.txt"], outs = ["g.txt"], cmd = "cp $< $@")' >"$ctl/ws/BUILD.bazel"
ctl_bazel() { (cd "$ctl/ws" && bazel --output_base="$ctl/ob-$1" "${@:2}"); }
(cd "$ctl/srv" && exec python3 -m http.server --bind 127.0.0.1 "$port") >/dev/null 2>&1 &
server=$!
for _ in $(seq 50); do
  python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$port" 2>/dev/null && break
  sleep 0.2
done
fetched=0
ctl_bazel fetch build --repository_cache="$ctl/shared_cache" //:g >"$ctl/fetch.log" 2>&1 && fetched=1
kill "$server" 2>/dev/null || true
((fetched)) || { tail -20 "$ctl/fetch.log" >&2; echo "offline_test: control: the pinned archive did not fetch" >&2; exit 1; }
offline_ctl() {
  unshare --net bash -c 'ip link set lo up; cd "$1" && exec bazel --output_base="$2" build --repository_cache="$3" --distdir= //:g' \
    _ "$ctl/ws" "$ctl/ob-$1" "$2" >"$ctl/$1.log" 2>&1
}
offline_ctl shared "$ctl/shared_cache" ||
  { tail -20 "$ctl/shared.log" >&2; echo "offline_test: control: the shared cache did not serve the pinned archive" >&2; exit 1; }
if offline_ctl empty "$ctl/empty_cache"; then
  echo "offline_test: control: a pinned download built offline with an empty repository cache" >&2
  exit 1
fi
grep -q "pinned" "$ctl/empty.log" || { tail -20 "$ctl/empty.log" >&2; echo "offline_test: control failed for another reason" >&2; exit 1; }
echo "offline_test: control: the same check fails a build that needs a (cached) download"
