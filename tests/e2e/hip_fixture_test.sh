#!/usr/bin/env bash
# The HIP repository rule (rules/private/repositories/hip_repository.bzl, hip_detect.bzl) on ROCm
# installations other than this machine's /usr: fixtures made here in the
# /opt/rocm / TheRock layout (include/hip, share/hip/version, lib/libamdhip64.so, lib/llvm/bin
# with wrapper scripts that run the build root's clang tools, lib/llvm/amdgcn/bitcode,
# include/rocprim), found through ROCM_PATH and HIP_CLANG_PATH by a scratch
# downstream module:
#  1. a fixture claiming HIP 6.2: @rocm_hip names the fixture's root, clang,
#     device library and runtime; the compile command lines (aquery) use
#     them; a hip_library + cc_binary builds and --@rules_rocm//:hip_bundle_compression=auto
#     gives a zstd (CCOB) bundle;
#  2. the same claiming HIP 6.1: auto gives an uncompressed bundle;
#  3. no device library, no libamdhip64.so: the repository's own message;
#  4. ROCm libraries and headers from the 6.2 fixture, which has a hipBLAS
#     (a version header and a stub libhipblas.so) and rocm-core's version
#     header: a hip_library spelling "rocm/include/..." and
#     "rocm/rocm_config.h" sees TF_ROCM_VERSION 60201 and hipBLAS 2.2.0 and
#     links -lhipblas from the fixture; the 6.1 fixture has no hipBLAS: using
#     @rules_rocm//rocm:hipblas fails at analysis naming the package;
#  5. a TheRock-like fixture whose release (rocm_version.h: 10.1.0) and HIP
#     (7.12) majors differ: names and $(ROCM_VERSION) follow the release
#     (jax-rocm10-*), compression follows HIP; found on the machine (a
#     system ROCm, no TheRock SDK release), its kpack device wheel pins the
#     host and no rocm-sdk-device package;
#  6. ROCm 6.4's refusals, with a fixture claiming HIP 6.4 and rocPRIM 3.4.1
#     whose device library has no gfx1250 ISA file: a rocPRIM user for
#     gfx950 fails at analysis naming library, version and fixes;
#     skip_unsupported_targets leaves gfx950 out with a warning; gfx1250
#     builds only self-contained code.
set -euo pipefail
source "$(dirname "$0")/../lib/scratch_test.sh"
PY="${ROCM_WHEEL_VENV:-$root/.venv}/bin/python"
[[ -x $PY ]] || fail "$PY missing: run \`make setup\` first (bundle_targets.py needs its zstandard)"
LLVM=$(llvm_bin)
[[ -x $LLVM/clang++ ]] || fail "$LLVM/clang++ missing: run this inside the build root (scripts/buildroot)"
resource_dir=$("$LLVM/clang" -print-resource-dir)
clang_major=$(basename "$resource_dir")
bitcode="$resource_dir/amdgcn/bitcode"
[[ -f $bitcode/ocml.bc ]] || fail "no device library at $bitcode (rocm-device-libs-<N>)"
[[ -f /usr/include/hip/hip_runtime.h && -e /usr/lib/x86_64-linux-gnu/libamdhip64.so && -f /usr/include/rocprim/rocprim_version.hpp ]] ||
  fail "the build root lacks HIP or rocPRIM (libamdhip64-dev, librocprim-dev)"

ws=$(mktemp -d "${TMPDIR:-/tmp}/hip_fixture.XXXXXX")
ob="$ws/ob"
trap '(cd "$ws/main" 2>/dev/null && "$BAZEL" --output_base="$ob" shutdown >/dev/null 2>&1) || true; rm -rf "$ws"' EXIT

# make_fixture DIR HIP_MAJOR.MINOR [without-device-lib|without-runtime|rocm-6.4-libraries|release=X.Y.Z]
make_fixture() {
  local dir=$1 major=${2%%.*} minor=${2#*.} omit=${3:-} f t
  mkdir -p "$dir/include/hip" "$dir/lib/llvm/bin" "$dir/lib/llvm/lib/clang/$clang_major" "$dir/lib/llvm/amdgcn"
  # HIP's headers, but the version header claims <major>.<minor>.
  for f in /usr/include/hip/*; do
    [[ $(basename "$f") == hip_version.h ]] || ln -s "$f" "$dir/include/hip/"
  done
  fixture hip_fixture/rocm/include/hip/hip_version.h.in MAJOR="$major" MINOR="$minor" >"$dir/include/hip/hip_version.h"
  # What clang reads for the HIP version (without it clang assumes 3.5 and
  # leaves out its HIP runtime wrapper headers).
  mkdir -p "$dir/share/hip"
  printf 'HIP_VERSION_MAJOR=%s\nHIP_VERSION_MINOR=%s\nHIP_VERSION_PATCH=0\n' "$major" "$minor" >"$dir/share/hip/version"
  if [[ $omit == rocm-6.4-libraries ]]; then
    # rocPRIM's headers, but its version header claims 3.4.1 (ROCm 6.4's).
    mkdir "$dir/include/rocprim"
    for f in /usr/include/rocprim/*; do
      [[ $(basename "$f") == rocprim_version.hpp ]] || ln -s "$f" "$dir/include/rocprim/"
    done
    printf '#pragma once\n#define ROCPRIM_VERSION_MAJOR 3\n#define ROCPRIM_VERSION_MINOR 4\n#define ROCPRIM_VERSION_PATCH 1\n#define ROCPRIM_VERSION 304001\n' \
      >"$dir/include/rocprim/rocprim_version.hpp"
  else
    ln -s /usr/include/rocprim "$dir/include/rocprim"
  fi
  [[ $omit == without-runtime ]] || ln -s /usr/lib/x86_64-linux-gnu/libamdhip64.so "$dir/lib/libamdhip64.so"
  # The fixture's clang has its own resource directory (as TheRock's does),
  # which holds the compiler headers but no device library: only the
  # fixture's lib/llvm/amdgcn/bitcode can provide it.
  for f in "$resource_dir"/*; do
    [[ $(basename "$f") == amdgcn ]] || ln -s "$f" "$dir/lib/llvm/lib/clang/$clang_major/"
  done
  printf '#!/bin/sh\nexec %s/clang++ -resource-dir=%s "$@"\n' "$LLVM" "$dir/lib/llvm/lib/clang/$clang_major" >"$dir/lib/llvm/bin/clang++"
  for t in clang-offload-bundler llvm-objcopy; do
    printf '#!/bin/sh\nexec %s/%s "$@"\n' "$LLVM" "$t" >"$dir/lib/llvm/bin/$t"
  done
  chmod +x "$dir"/lib/llvm/bin/*
  if [[ $omit == rocm-6.4-libraries ]]; then
    # As clang 21's: no ISA file for gfx1250.
    mkdir "$dir/lib/llvm/amdgcn/bitcode"
    for f in "$bitcode"/*; do
      [[ $(basename "$f") == oclc_isa_version_1250.bc ]] || ln -s "$f" "$dir/lib/llvm/amdgcn/bitcode/"
    done
  elif [[ $omit != without-device-lib ]]; then
    ln -s "$bitcode" "$dir/lib/llvm/amdgcn/bitcode"
  fi
  if [[ $omit == release=* ]]; then
    # rocm-core's header as TheRock writes it: the release, not HIP's version.
    local release=${omit#release=}
    mkdir -p "$dir/include/rocm-core"
    printf '#define ROCM_VERSION_MAJOR %s\n#define ROCM_VERSION_MINOR %s\n#define ROCM_VERSION_PATCH %s\n' \
      "${release%%.*}" "$(cut -d. -f2 <<<"$release")" "${release##*.}" >"$dir/include/rocm-core/rocm_version.h"
  fi
  if [[ $major.$minor == 6.2 ]]; then
    mkdir -p "$dir/include/hipblas" "$dir/include/rocm-core"
    printf '#define ROCM_VERSION_MAJOR 6\n#define ROCM_VERSION_MINOR 2\n#define ROCM_VERSION_PATCH 1\n' >"$dir/include/rocm-core/rocm_version.h"
    printf '#define hipblasVersionMajor 2\n#define hipblasVersionMinor 2\n#define hipblasVersionPatch 0\n' >"$dir/include/hipblas/hipblas-version.h"
    printf '#pragma once\n#include <hipblas/hipblas-version.h>\nextern "C" int hipblasFixtureCall(void);\n' >"$dir/include/hipblas/hipblas.h"
    echo 'int hipblasFixtureCall(void) { return 0; }' >"$ws/hipblas_stub.c"
    # A soname, as real ROCm libraries have: linked by path, DT_NEEDED is the soname.
    gcc -shared -fPIC -Wl,-soname,libhipblas.so -o "$dir/lib/libhipblas.so" "$ws/hipblas_stub.c" || fail "building the stub libhipblas.so"
  fi
}
make_fixture "$ws/rocm-6.2" 6.2
make_fixture "$ws/rocm-6.1" 6.1
make_fixture "$ws/rocm-10.1" 7.12 release=10.1.0
make_fixture "$ws/rocm-6.4" 6.4 rocm-6.4-libraries
make_fixture "$ws/rocm-nodevlib" 6.4 without-device-lib
make_fixture "$ws/rocm-noruntime" 6.4 without-runtime

mkdir -p "$ws/main"
cd "$ws/main"
cp "$root/tests/outputs/gfx/vadd.hip" "$root/tests/outputs/gfx/rocprim_sum.hip" .
scratch_module hip_fixture_probe "$root"
use_prebuilt_tool "$root" || fail "no rocm-wheel to use as a prebuilt tool"
echo "build --@rules_rocm//:gfx=gfx1201" >>.bazelrc
echo "build $(shared_disk_cache)" >>.bazelrc
fixture_copy hip_fixture/main .

# The checkout's own rocm-wheel (the fixture module builds no wheel).
RW=$(cd "$root" && BAZEL=$BAZEL rocm_wheel_path) || fail "cannot build //tools:rocm-wheel"
with_fixture() { echo --repo_env=ROCM_PATH="$1" --repo_env=HIP_CLANG_PATH="$1/lib/llvm/bin"; }

# bundle_format LIB: CCOB (compressed) or __CLANG_OFFLOAD_BUNDLE__ (plain),
# read with binutils' objcopy, not with the code under test.
bundle_format() {
  objcopy -O binary --only-section=.hip_fatbin "$1" "$ws/fatbin" || fail "objcopy .hip_fatbin of $1"
  local magic
  magic=$(head -c 24 "$ws/fatbin" | tr -d '\0')
  case $magic in
    CCOB*) echo CCOB ;;
    __CLANG_OFFLOAD_BUNDLE__) echo plain ;;
    *) echo "unknown:$magic" ;;
  esac
}

# check_fixture DIR RELEASE HIP_VERSION WANT_FORMAT WANT_INSPECT
check_fixture() {
  local dir=$1 version=$2 hip_version=$3 want_format=$4 want_inspect=$5 flags build_file lib rw got
  read -ra flags <<<"$(with_fixture "$dir")"
  echo "--- fixture $(basename "$dir")"
  bz build "${flags[@]}" --@rules_rocm//:hip_bundle_compression=auto //:libvadd.so 2>"$ws/build.err" ||
    { tail -40 "$ws/build.err" >&2; fail "$(basename "$dir"): build //:libvadd.so"; }
  build_file=$(find "$ob/external" -maxdepth 2 -path '*rocm_hip/BUILD.bazel' | head -1)
  [[ -n $build_file ]] || fail "no @rocm_hip BUILD file under $ob/external"
  for want in "ROCm root: $dir (\$ROCM_PATH)" \
    "device_lib_path = \"$dir/lib/llvm/amdgcn/bitcode\"" \
    "rocm_path = \"$dir\"" \
    "runtime_lib_dir = \"$dir/lib\"" \
    "rocm_version = \"$version\"" \
    "hip_version = \"$hip_version\""; do
    grep -qF -- "$want" "$build_file" || { cat "$build_file" >&2; fail "$(basename "$dir"): @rocm_hip lacks '$want'"; }
  done
  grep -qF "exec '$dir/lib/llvm/bin/clang++'" "$(dirname "$build_file")/bin/clang++" ||
    fail "$(basename "$dir"): @rocm_hip's clang++ does not run the fixture's: $(cat "$(dirname "$build_file")/bin/clang++")"
  # The device compile's command line names the fixture's root and device library.
  bz aquery "${flags[@]}" --@rules_rocm//:hip_bundle_compression=auto 'mnemonic("HipDeviceCompile", deps(//:libvadd.so))' >"$ws/aquery.txt" 2>"$ws/aquery.err" ||
    { tail -20 "$ws/aquery.err" >&2; fail "aquery"; }
  grep -qF -- "'--rocm-path=$dir'" "$ws/aquery.txt" || { head -60 "$ws/aquery.txt" >&2; fail "$(basename "$dir"): device compile without --rocm-path=$dir"; }
  grep -qF -- "'--rocm-device-lib-path=$dir/lib/llvm/amdgcn/bitcode'" "$ws/aquery.txt" ||
    fail "$(basename "$dir"): device compile without the fixture's device library"
  lib=$(bz cquery "${flags[@]}" --output=files //:libvadd.so 2>/dev/null)
  lib="$(bz info execution_root 2>/dev/null)/$lib"
  got=$(bundle_format "$lib")
  [[ $got == "$want_format" ]] || fail "$(basename "$dir"): --@rules_rocm//:hip_bundle_compression=auto gave a $got bundle, want $want_format"
  "$RW" inspect "$lib" >"$ws/inspect.txt" || fail "rocm-wheel inspect $lib"
  grep -qE "offload bundles: 1 \\(1 $want_inspect\\)" "$ws/inspect.txt" ||
    { cat "$ws/inspect.txt" >&2; fail "$(basename "$dir"): rocm-wheel inspect does not report 1 $want_inspect bundle"; }
  got=$("$PY" "$root/tests/lib/bundle_targets.py" "$lib") || fail "bundle_targets.py $lib"
  [[ $got == gfx1201 ]] || fail "$(basename "$dir"): the bundle holds [$got], want [gfx1201]"
  echo "ok: $(basename "$dir"): found at \$ROCM_PATH, built with its tools; auto compression -> $want_format"
}

# expect_repository_error DIR MESSAGE
expect_repository_error() {
  local dir=$1 want=$2 flags
  read -ra flags <<<"$(with_fixture "$dir")"
  echo "--- fixture $(basename "$dir")"
  expect_build_failure "$ws/err.log" "${flags[@]}" //:libvadd.so
  expect_in "$ws/err.log" "$want"
  echo "ok: $(basename "$dir"): $want"
}

check_fixture "$ws/rocm-6.2" 6.2.1 6.2 CCOB "zstd v[23]"
# No release version in the tree: HIP's, patch 0.
check_fixture "$ws/rocm-6.1" 6.1.0 6.1 plain uncompressed
check_fixture "$ws/rocm-10.1" 10.1.0 7.12 CCOB "zstd v[23]"

echo "--- names from the ROCm major: \$(ROCM_MAJOR) of @rules_rocm//rocm:version"
read -ra flags <<<"$(with_fixture "$ws/rocm-6.2")"
got=$(bz cquery "${flags[@]}" --output=files //:named_wheel 2>"$ws/cquery.err") || { tail -20 "$ws/cquery.err" >&2; fail "cquery //:named_wheel"; }
[[ $(basename "$got") == jax_rocm6_pjrt-0.1.0-py3-none-any.whl ]] || fail "rocm-6.2: the wheel is $got, want jax_rocm6_pjrt-0.1.0-py3-none-any.whl"
echo "--- release 10.1.0 with HIP 7.12: names follow the release; a system ROCm pins no SDK"
read -ra flags <<<"$(with_fixture "$ws/rocm-10.1")"
got=$(bz cquery "${flags[@]}" --output=files //:named_wheel 2>"$ws/cquery.err") || { tail -20 "$ws/cquery.err" >&2; fail "cquery //:named_wheel"; }
[[ $(basename "$got") == jax_rocm10_pjrt-0.1.0-py3-none-any.whl ]] || fail "rocm-10.1: the wheel is $got, want jax_rocm10_pjrt-0.1.0-py3-none-any.whl (ROCm's major, not HIP's 7)"
bz build "${flags[@]}" --@rules_rocm//:hip_device_code=kpack //:kpack_wheel 2>"$ws/build.err" ||
  { tail -40 "$ws/build.err" >&2; fail "rocm-10.1: build //:kpack_wheel with kpack device code"; }
device=$(bz cquery "${flags[@]}" --@rules_rocm//:hip_device_code=kpack --output=files //:kpack_wheel 2>/dev/null | grep -- '_device_gfx1201-') || fail "rocm-10.1: no gfx1201 device wheel among //:kpack_wheel's outputs"
[[ $(basename "$device") == vadd_rocm10_device_gfx1201-0.1.0-py3-none-*.whl ]] || fail "rocm-10.1: the device wheel is '$device'"
"$PY" - "$(bz info execution_root 2>/dev/null)/$device" <<'PYEOF' || fail "rocm-10.1: the device wheel's requirements"
import sys, zipfile
from email.parser import Parser
with zipfile.ZipFile(sys.argv[1]) as z:
    meta = Parser().parsestr(z.read("vadd_rocm10_device_gfx1201-0.1.0.dist-info/METADATA").decode())
want = ["vadd-rocm10==0.1.0"]
got = meta.get_all("Requires-Dist")
if got != want:
    sys.exit(f"Requires-Dist {got}, want {want}")
PYEOF
echo "ok: rocm-10.1 (HIP 7.12): jax_rocm10_pjrt, vadd_rocm10_device_gfx1201 pinning its host and no rocm-sdk package, zstd bundles"

echo "--- ROCm libraries and headers of a fixture"
read -ra flags <<<"$(with_fixture "$ws/rocm-6.2")"
bz build "${flags[@]}" //:libblas_user.so 2>"$ws/build.err" ||
  { tail -40 "$ws/build.err" >&2; fail "rocm-6.2: build //:libblas_user.so"; }
build_file=$(find "$ob/external" -maxdepth 2 -path '*rocm_hip/BUILD.bazel' | head -1)
grep -A12 'name = "hipblas"' "$build_file" | grep -qF 'version = "2.2.0"' ||
  { cat "$build_file" >&2; fail "rocm-6.2: @rocm_hip//:hipblas is not version 2.2.0"; }
readelf -d "$(bz info execution_root 2>/dev/null)/$(bz cquery "${flags[@]}" --output=files //:libblas_user.so 2>/dev/null)" |
  grep -qF '[libhipblas.so]' || fail "rocm-6.2: libblas_user.so does not link libhipblas.so"
read -ra flags <<<"$(with_fixture "$ws/rocm-6.1")"
expect_build_failure "$ws/err.log" "${flags[@]}" --nobuild //:libblas_user.so
expect_in "$ws/err.log" "hipBLAS: hipBLAS is not installed in the ROCm at $ws/rocm-6.1 ($ws/rocm-6.1/include/hipblas/hipblas-version.h is missing); install libhipblas-dev (Debian/Ubuntu) or hipblas"
echo "ok: rocm_headers, rocm_config.h and hipBLAS from the fixture; a missing hipBLAS named at analysis"
echo "--- ROCm 6.4's refusals (fixture: HIP 6.4, rocPRIM 3.4.1, no gfx1250 device library)"
read -ra flags <<<"$(with_fixture "$ws/rocm-6.4")"
# expect_analysis_error GFX TARGET NEEDLE...
expect_analysis_error() {
  local gfx=$1 target=$2
  shift 2
  expect_build_failure "$ws/err.log" "${flags[@]}" --nobuild --@rules_rocm//:gfx="$gfx" "$target"
  expect_in "$ws/err.log" "$@"
}
expect_analysis_error gfx950-dcgpu //:rocprim_user \
  "//:rocprim_user: rocPRIM 3.4.1 (ROCm 6.4) cannot compile device code for gfx950" \
  "128-bit atomics" "fixed in rocPRIM 4.0, ROCm 7.0" "drop gfx950 from --@rules_rocm//:gfx" "skip_unsupported_targets = True"
expect_analysis_error gfx1250 //:needs_device_lib "//:needs_device_lib" "accepts gfx1250 only with -nogpulib" "self_contained = True"
bz build "${flags[@]}" --@rules_rocm//:gfx=gfx950-dcgpu,gfx94X-dcgpu //:librocprim_skip.so >"$ws/skip.log" 2>&1 ||
  { tail -30 "$ws/skip.log" >&2; fail "rocm-6.4: build //:librocprim_skip.so"; }
expect_in "$ws/skip.log" "WARNING: //:rocprim_skip: no device code for gfx950: rocPRIM 3.4.1"
lib="$(bz info execution_root 2>/dev/null)/$(bz cquery "${flags[@]}" --@rules_rocm//:gfx=gfx950-dcgpu,gfx94X-dcgpu --output=files //:librocprim_skip.so 2>/dev/null)"
[[ $("$PY" "$root/tests/lib/bundle_targets.py" "$lib") == gfx942 ]] || fail "rocm-6.4: librocprim_skip.so must hold gfx942 code only"
echo "ok: rocm-6.4: gfx950 refused by rocPRIM 3.4.1, left out on request; gfx1250 only self-contained"
expect_repository_error "$ws/rocm-nodevlib" \
  "no AMDGPU device library (ocml.bc) for $ws/rocm-nodevlib/lib/llvm/bin/clang++"
expect_repository_error "$ws/rocm-noruntime" \
  "ROCm root $ws/rocm-noruntime has no libamdhip64.so; install the HIP runtime (libamdhip64-dev)"
echo "PASS"
