#!/usr/bin/env bash
# Proves that `bazel build //:example_wheels` (every wheel of this
# repository's own examples: //:wheels less the real JAX plugin, whose
# third-party sources are pinned downloads by design) downloads nothing but
# crates from crates.io (rocm-wheel's, pinned by tools/Cargo.lock, and
# rules_rust's process_wrapper's tinyjson, pinned by rules_rust) and the
# selected sysroot's Debian packages (.bazelrc selects debian11, whose nine
# .deb files rules/private/data/debian11_packages.bzl pins by sha256).
#   1. prefetch: `bazel fetch //:example_wheels` with the network, into a scratch
#      repository cache; everything it downloaded must be such a crate.
#   2. a second repository cache gets exactly the files whose sha256 are
#      Cargo.lock's checksums (and tinyjson's): nothing else can be served.
#   3. //:example_wheels from a fresh output base with that cache, inside a network
#      namespace that has only loopback (the crates' BUILD files are checked
#      in: nothing reads the crates.io index).
#      Every repository is fetched anew there; the actions come from the
#      e2e tests' shared disk cache (`make bazel-test` fills it) where they
#      can: a download happens in a repository rule, and that actions
#      rebuild the same bytes from nothing is clean_builds_test.sh's job.
# Any other http_archive (even one pinned by sha256, which a shared
# repository cache would serve), toolchain download or pip call fails it.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib/common.sh
command -v unshare >/dev/null || fail "offline_test: unshare (util-linux) missing"

base=$(mktemp -d "${TMPDIR:-/tmp}/rules_rocm_offline.XXXXXX")
cleanup() {
  local ob
  for ob in "$base"/ob-* "$base"/control/ob-*; do
    [[ -d $ob ]] && bazel --output_base="$ob" shutdown >/dev/null 2>&1 || true
  done
  chmod -R u+w "$base" 2>/dev/null || true
  rm -rf "$base"
}
trap cleanup EXIT

# The permitted downloads: Cargo.lock's checksums, tinyjson's sha256 as
# rules_rust pins it, and the debian11 sysroot's packages.
allowed=$base/allowed.txt
{
  sed -n 's/^checksum = "\([0-9a-f]\{64\}\)"$/\1/p' tools/Cargo.lock
  sed -n 's/^ *"[^"]*\.deb": "\([0-9a-f]\{64\}\)",$/\1/p' rules/private/data/debian11_packages.bzl
  rr=$(bazel info output_base 2>/dev/null)/external/rules_rust~
  [[ -d $rr ]] || rr=/usr/share/bazel/rules/rust
  grep -A6 'name = "rules_rust_tinyjson"' "$rr/rust/private/repository_utils.bzl" |
    sed -n 's/.*sha256 = "\([0-9a-f]\{64\}\)".*/\1/p'
  # Its file:// registries (rules_rust and the modules only rules_rocm's
  # dev dependencies ask for): module resolution reads, and caches, their
  # files for every build.
  sed -n 's|.*--registry=file://\(/[^ ]*\).*|\1|p' /etc/bazel/bazelrc 2>/dev/null | while read -r reg; do
    [[ ! -d $reg ]] || find -L "$reg" -type f -exec sha256sum {} + | cut -d' ' -f1
  done
} | sort -u >"$allowed"
(($(wc -l <"$allowed") > 20)) || fail "found only $(wc -l <"$allowed") checksums in tools/Cargo.lock and rules_rust"

# 1. Prefetch with the network.
bazel --output_base="$base/ob-fetch" fetch --repository_cache="$base/prefetch_cache" //:example_wheels >"$base/fetch.log" 2>&1 ||
  { tail -30 "$base/fetch.log" >&2; fail "bazel fetch //:example_wheels failed"; }
bazel --output_base="$base/ob-fetch" shutdown >/dev/null 2>&1 || true
cas=content_addressable/sha256
mkdir -p "$base/repository_cache/$cas"
n=0
shopt -s nullglob
for d in "$base/prefetch_cache/$cas"/*/; do
  sha=$(basename "$d")
  grep -qx "$sha" "$allowed" || fail "bazel fetch //:example_wheels downloaded something that is not a pinned crate or sysroot package (sha256 $sha): $(ls "$d")"
  cp -r "$d" "$base/repository_cache/$cas/$sha"
  n=$((n + 1))
done
((n > 0)) || fail "the prefetch downloaded no crate at all (is the tool still built by rules_rust?)"
echo "offline_test: prefetched $n files, each a crate pinned by tools/Cargo.lock or rules_rust, or a sysroot package pinned by rules_rocm"

# 2./3. Sanity: the namespace really has no network.
if unshare --net sh -c 'ip link set lo up; exec getent hosts pypi.org' >/dev/null 2>&1; then
  fail "the network namespace can still resolve pypi.org"
fi
before=$(find "$base/repository_cache" -type f | sort)
read -ra cache_flags <<<"$(shared_disk_cache)"
unshare --net bash -c '
  ip link set lo up
  exec bazel --output_base="$1/ob-offline" build --repository_cache="$1/repository_cache" --distdir= //:example_wheels "${@:2}"
' _ "$base" "${cache_flags[@]}" "$@"
after=$(find "$base/repository_cache" -type f | sort)
[[ $before == "$after" ]] || { diff <(echo "$before") <(echo "$after") >&2; fail "the offline build changed the repository cache"; }
echo "offline_test: //:example_wheels built with no network, from a repository cache holding only the $n pinned crates and sysroot packages"

# Control: the check above can fail. A scratch module with one sha256-pinned
# http_archive, fetched once from a loopback server into a repository cache:
# offline, that cache serves it (what a shared cache would hide), and an empty
# one makes the same build fail.
ctl=$base/control
mkdir -p "$ctl/ws" "$ctl/shared_cache" "$ctl/empty_cache"
fixture_copy offline_control/pinned "$ctl/srv/pinned"
tar -C "$ctl/srv" --sort=name --mtime=@0 --owner=0 --group=0 -czf "$ctl/srv/pinned.tar.gz" pinned
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fixture offline_control/ws/MODULE.bazel.in SHA256="$(sha256sum "$ctl/srv/pinned.tar.gz" | cut -d' ' -f1)" PORT="$port" >"$ctl/ws/MODULE.bazel"
cp "$RULES_ROCM_FIXTURES/offline_control/ws/BUILD.bazel" "$ctl/ws/"
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
