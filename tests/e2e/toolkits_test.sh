#!/usr/bin/env bash
# Declared ROCm toolkits, with real bits and no internet: a TheRock-layout
# tarball assembled from Debian sid's ROCm 6.4.3 / clang 21 packages
# (tests/toolkits/therock_fixture.sh), served on 127.0.0.1 and declared by
# URL + sha256 in a scratch downstream module next to the system ROCm 7.2
# (`path = "/usr"`):
#  1. --@rules_rocm//rocm:toolkit=therock_6_4: the pjrt example builds; its
#     code objects were compiled by the tarball's clang 21 (their .comment),
#     hold the rocPRIM sort, and the compile command lines name the toolkit
#     by execution-root paths; the wheel's name follows ROCm 6;
#  2. rocPRIM 6.4 refuses gfx950 at analysis with the library/version
#     message; the system toolkit (7.2) builds gfx950, the same BUILD file
#     names its wheel jax-rocm7-...; switching back refetches nothing;
#  3. a wrong sha256 fails naming both sums; an undeclared name fails
#     listing the declared ones;
#  4. with the server stopped, a new output base builds from the repository
#     cache; with a broken python3.13 first on PATH a HIP-only build still
#     works (rules_rocm runs no interpreter; Python comes from rules_python).
set -euo pipefail
export LC_ALL=C
root="$(cd "$(dirname "$0")/../.." && pwd)"
BAZEL=${BAZEL:-bazel}
source "$root/tests/lib/common.sh"
source "$root/tests/lib/rocm_wheel.sh"
PY="${ROCM_WHEEL_VENV:-$root/.venv}/bin/python"
[[ -x $PY ]] || fail "$PY missing: run \`make setup\` first"

ws=$(mktemp -d "${TMPDIR:-/tmp}/toolkits.XXXXXX")
server=""
cleanup() {
  [[ -n $server ]] && kill "$server" 2>/dev/null
  for ob in "$ws"/ob*; do
    [[ -d $ob ]] && (cd "$ws/main" && "$BAZEL" --output_base="$ob" shutdown >/dev/null 2>&1) || true
  done
  rm -rf "$ws"
}
trap cleanup EXIT

echo "--- TheRock-layout tarball from Debian's ROCm 6.4.3"
tarball=$(bash "$root/tests/toolkits/therock_fixture.sh" | tail -1)
[[ -f $tarball && -f $tarball.sha256 ]] || fail "therock_fixture.sh made no tarball + .sha256 ($tarball)"
sha=$(cut -d' ' -f1 "$tarball.sha256")
name=$(basename "$tarball")
mkdir -p "$ws/serve"
ln -s "$tarball" "$ws/serve/$name"
read -r server port <<<"$(serve_directory "$ws/serve" "$ws/http.log")"
url="http://127.0.0.1:$port/$name"
bad_sha=$(printf '%s' "$sha" | tr '0-9a-f' '1-9a-f0')

mkdir -p "$ws/main"
cd "$ws/main"
scratch_module toolkits_probe "$root"
use_prebuilt_tool "$root" || fail "no rocm-wheel to use as a prebuilt tool"
cat >>MODULE.bazel <<MOD

rocm = use_extension("@rules_rocm//rules:extensions.bzl", "rules_rocm")
rocm.toolkit(
    name = "therock_6_4",
    sha256 = "$sha",
    urls = ["$url"],
)
rocm.toolkit(
    name = "wrong_sum",
    sha256 = "$bad_sha",
    urls = ["$url"],
)
rocm.toolkit(
    name = "system",
    path = "/usr",
)
MOD
cat >>.bazelrc <<RC
build --repository_cache=$ws/repository_cache
build $(shared_disk_cache)
RC
cp "$root/tests/gfx/rocprim_sum.hip" "$root/tests/gfx/vadd.hip" .
cat >BUILD.bazel <<'BUILD'
load("@rules_rocm//rules:defs.bzl", "hip_library", "rocm_wheel")

hip_library(
    name = "vadd",
    srcs = ["vadd.hip"],
)

hip_library(
    name = "rocprim_user",
    srcs = ["rocprim_sum.hip"],
    rocm_libs = ["@rules_rocm//rocm:rocprim"],
)

rocm_wheel(
    name = "named_wheel",
    srcs = [":vadd"],
    distribution = "jax-rocm$(ROCM_MAJOR)-pjrt",
    toolchains = ["@rules_rocm//rocm:version"],
    version = "0.1.0",
)
BUILD

ob="$ws/ob1"
therock=(--@rules_rocm//rocm:toolkit=therock_6_4)
system=(--@rules_rocm//rocm:toolkit=system)
bz build @rules_rocm//tools:rocm-wheel 2>"$ws/build.err" || { tail -20 "$ws/build.err" >&2; fail "cannot build @rules_rocm//tools:rocm-wheel"; }
RW="$ob/$(bz cquery --output=files @rules_rocm//tools:rocm-wheel 2>/dev/null)"
[[ -x $RW ]] || RW="$(bz info execution_root 2>/dev/null)/$(bz cquery --output=files @rules_rocm//tools:rocm-wheel 2>/dev/null)"
[[ -x $RW ]] || fail "no rocm-wheel binary at $RW"

# extract LIB TARGET [BUNDLE]: TARGET's code object in LIB (from bundle BUNDLE), as a file.
extract() {
  local out="$ws/$2.${3:-0}.co"
  "$RW" bundle extract --target "$2" ${3:+--bundle "$3"} --output "$out" "$1" >/dev/null || fail "no $2 code object in $1"
  echo "$out"
}

echo "--- 1. the pjrt example on the tarball's ROCm 6.4 (gfx1100)"
bz build "${therock[@]}" --@rules_rocm//:gfx=gfx1100 @rules_rocm//examples/pjrt:wheel @rules_rocm//examples/pjrt:libxla_rocm7_kernels.so //:named_wheel 2>"$ws/build.err" ||
  { tail -40 "$ws/build.err" >&2; fail "the pjrt example on therock_6_4"; }
bin=$(bz info bazel-bin 2>/dev/null)
ext_bin="$bin/external/rules_rocm~/examples/pjrt"
whl=$(ls "$ext_bin"/jax_rocm6_pjrt-*.whl 2>/dev/null | head -1)
[[ -n $whl ]] || fail "no jax_rocm6_pjrt wheel in $ext_bin: $(ls "$ext_bin")"
"$RW" inspect "$whl" >"$ws/inspect.txt" || fail "rocm-wheel inspect $whl"
expect_in "$ws/inspect.txt" gfx1100
kernels=$ext_bin/libxla_rocm7_kernels.so
"$PY" "$root/tests/hip/check_kernels.py" "$kernels" --targets gfx1100 --bundles 2 xla_rocm7_vector_add >"$ws/kernels.txt" 2>&1 ||
  { cat "$ws/kernels.txt" >&2; fail "the example's code objects lack its kernels"; }
sorts=0
for b in 0 1; do
  co=$(extract "$kernels" gfx1100 "$b")
  readelf -p .comment "$co" >"$ws/comment.txt"
  expect_in "$ws/comment.txt" "clang version 21"
  sorts=$((sorts + $(readelf -Ws "$co" | grep -c 'rocprim.*\.kd$' || true)))
done
((sorts > 0)) || fail "no gfx1100 code object of $kernels holds a rocPRIM kernel"
ls "$bin"/jax_rocm6_pjrt-0.1.0-*.whl >/dev/null 2>&1 || fail "//:named_wheel is not jax-rocm6-pjrt on ROCm 6.4: $(ls "$bin")"
bz aquery "${therock[@]}" --@rules_rocm//:gfx=gfx1100 'mnemonic("HipDeviceCompile", //:vadd)' >"$ws/aquery.txt" 2>/dev/null
expect_in "$ws/aquery.txt" "external/rules_rocm~~rules_rocm~rocm_toolkit_therock_6_4/bin/clang++" \
  "--rocm-path=external/rules_rocm~~rules_rocm~rocm_toolkit_therock_6_4/toolkit"
! grep -qF -- "$ob" "$ws/aquery.txt" || fail "a device compile command line names the output base $ob"

echo "--- 2. rocPRIM 6.4 refuses gfx950; the system ROCm 7.2 builds it"
expect_build_failure "$ws/refuse.log" --nobuild "${therock[@]}" --@rules_rocm//:gfx=gfx950 //:rocprim_user
expect_in "$ws/refuse.log" "rocPRIM 3.4" "(ROCm 6.4) cannot compile device code for gfx950"
marker=$(ls "$ob"/external/@rules_rocm~~rules_rocm~rocm_toolkit_therock_6_4.marker)
before=$(stat -c %Y "$marker")
bz build "${system[@]}" --@rules_rocm//:gfx=gfx950 //:rocprim_user //:named_wheel 2>"$ws/build.err" ||
  { tail -40 "$ws/build.err" >&2; fail "gfx950 on the system toolkit"; }
readelf -p .comment "$(extract "$bin/_hip/rocprim_user/rocprim_sum.hip.pic.o" gfx950)" >"$ws/comment.txt"
expect_in "$ws/comment.txt" "clang version 22"
ls "$bin"/jax_rocm7_pjrt-0.1.0-*.whl >/dev/null 2>&1 || fail "//:named_wheel is not jax-rocm7-pjrt on the system ROCm 7.2"
bz build "${therock[@]}" --@rules_rocm//:gfx=gfx1100 //:vadd 2>"$ws/build.err" || { tail -20 "$ws/build.err" >&2; fail "back to therock_6_4"; }
[[ $(stat -c %Y "$marker") == "$before" ]] || fail "switching toolkits refetched therock_6_4"

echo "--- 3. a wrong sha256, an undeclared toolkit"
expect_build_failure "$ws/sum.log" --nobuild --@rules_rocm//rocm:toolkit=wrong_sum //:vadd
expect_in "$ws/sum.log" "$sha" "$bad_sha"
expect_build_failure "$ws/name.log" --nobuild --@rules_rocm//rocm:toolkit=therock_7 //:vadd
expect_in "$ws/name.log" "--@rules_rocm//rocm:toolkit=therock_7 names no declared ROCm toolkit; declared: local, system, therock_6_4, wrong_sum"

echo "--- 4. server stopped: a new output base from the repository cache; a broken python3.13 first on PATH"
kill "$server"
wait "$server" 2>/dev/null || true
server=""
mkdir -p "$ws/brokenpy"
printf '#!/bin/sh\necho "this python is broken on purpose" >&2\nexit 3\n' >"$ws/brokenpy/python3.13"
chmod +x "$ws/brokenpy/python3.13"
ob="$ws/ob2"
PATH="$ws/brokenpy:$PATH" bz build "${therock[@]}" --@rules_rocm//:gfx=gfx1100 //:vadd 2>"$ws/build.err" ||
  { tail -40 "$ws/build.err" >&2; fail "offline rebuild from the repository cache with a broken python3.13"; }
# rules_rocm runs no interpreter: @rocm_python only lists declared versions.
versions="$ob/external/rules_rocm~~rules_rocm~rocm_python/versions.bzl"
[[ ! -f $versions ]] || ! grep -q brokenpy "$versions" || fail "$versions names the broken interpreter"
echo "PASS"
