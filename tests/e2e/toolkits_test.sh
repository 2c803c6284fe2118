#!/usr/bin/env bash
# Declared ROCm toolkits, with real bits and no internet: a TheRock-layout
# tarball assembled from Debian sid's ROCm 6.4.3 / clang 21 packages
# (tests/e2e/fixtures/toolkits/therock_fixture.sh), served on 127.0.0.1 and declared by
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
#     listing the declared ones; what device wheels pin follows where ROCm
#     came from ($(ROCM_SDK_VERSION)): the tarball its exact release
#     (6.4.3, from its file name), the system ROCm nothing, a path declared
#     with sdk_version that release; a malformed sdk_version fails naming it;
#  4. two ROCm lines in one invocation: //:wheels with
#     --@rules_rocm//rocm:toolkits=local,therock_6_4 and Pythons 3.12 and
#     3.14 builds jax-rocm6-* and jax-rocm7-* wheels for both (the cross
#     product) and the ROCm-independent wheel once per Python; the execution
#     log shows each device compile once per toolkit, the ROCm-independent
#     compile once per Python; each line's code objects carry its own
#     clang's .comment; installed side by side into a venv of each Python,
#     each line's extension imports (ROCm 6.4 from the tarball's lib/). Two
#     toolkits of one major, an undeclared one and a refused target fail
#     naming what to do;
#  5. with the server stopped, a new output base builds from the repository
#     cache; with a broken python3.13 first on PATH a HIP-only build still
#     works (rules_rocm runs no interpreter; Python comes from rules_python).
set -euo pipefail
source "$(dirname "$0")/../lib/scratch_test.sh"
source "$root/tests/lib/pythons.sh"
source "$root/tests/lib/therock_toolkit.sh"
PY="${ROCM_WHEEL_VENV:-$root/.venv}/bin/python"
[[ -x $PY ]] || fail "$PY missing: run \`make setup\` first"
# PYENV_ROOT: scripts/buildroot sets it (pyenv itself is not in the root).
py312=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12.*/bin/python3.12 2>/dev/null | sort -V | tail -1 || true)
[[ -x $py312 ]] || fail "no pyenv Python 3.12 (pyenv install 3.12; make setup)"
py314=/usr/bin/python3.14
[[ -x $py314 ]] || fail "$py314 missing: run this inside the build root (scripts/buildroot)"

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
serve_therock_fixture "$ws/serve"
server=$therock_server sha=$therock_sha url=$therock_url
bad_sha=$(printf '%s' "$sha" | tr '0-9a-f' '1-9a-f0')

mkdir -p "$ws/main"
cd "$ws/main"
scratch_module toolkits_probe "$root"
use_prebuilt_tool "$root" || fail "no rocm-wheel to use as a prebuilt tool"
declare_therock_toolkit
fixture toolkits/MODULE.bazel.in BAD_SHA256="$bad_sha" URL="$url" >>MODULE.bazel
local_pythons_module "$py312" "$py314"
cat >>.bazelrc <<RC
build --repository_cache=$ws/repository_cache
build $(shared_disk_cache)
RC
cp "$root/tests/outputs/gfx/rocprim_sum.hip" "$root/tests/outputs/gfx/vadd.hip" .
fixture_copy toolkits/probe .

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
whl=$(ls "$ext_bin"/example_rocm6_pjrt-*.whl 2>/dev/null | head -1)
[[ -n $whl ]] || fail "no example_rocm6_pjrt wheel in $ext_bin: $(ls "$ext_bin")"
"$RW" inspect "$whl" >"$ws/inspect.txt" || fail "rocm-wheel inspect $whl"
expect_in "$ws/inspect.txt" gfx1100
kernels=$ext_bin/libxla_rocm7_kernels.so
"$PY" "$root/tests/outputs/hip/check_kernels.py" "$kernels" --targets gfx1100 --bundles 2 xla_rocm7_vector_add >"$ws/kernels.txt" 2>&1 ||
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
expect_in "$ws/name.log" "--@rules_rocm//rocm:toolkit=therock_7 names no declared ROCm toolkit; declared: local, system, system_bad_sdk, system_sdk, therock_6_4, wrong_sum"
for pair in therock_6_4:6.4.3 system: local: system_sdk:7.13.0a20261201; do
  pin=(--@rules_rocm//rocm:toolkit="${pair%%:*}")
  bz build "${pin[@]}" //:sdk_pin 2>"$ws/build.err" || { tail -20 "$ws/build.err" >&2; fail "//:sdk_pin on ${pair%%:*}"; }
  got=$(cat "$(bz info execution_root 2>/dev/null)/$(bz cquery "${pin[@]}" --output=files //:sdk_pin 2>/dev/null)")
  [[ $got == "[${pair#*:}]" ]] || fail "toolkit ${pair%%:*}: device wheels would pin '$got', want '[${pair#*:}]'"
done
expect_build_failure "$ws/bad_sdk.log" --@rules_rocm//rocm:toolkit=system_bad_sdk //:sdk_pin
expect_in "$ws/bad_sdk.log" 'ROCm toolkit system_bad_sdk: sdk_version = "7.13" is not a TheRock SDK release'

echo "--- 4. two ROCm lines x two Pythons in one invocation"
lines=(--@rules_rocm//rocm:toolkits=local,therock_6_4 --@rules_rocm//:gfx=gfx1100)
bz build "${lines[@]}" --execution_log_json_file="$ws/exec.json" //:wheels 2>"$ws/build.err" ||
  { tail -40 "$ws/build.err" >&2; fail "//:wheels for local and therock_6_4"; }
exr=$(bz info "${lines[@]}" execution_root 2>/dev/null)
mapfile -t wheels < <(bz cquery "${lines[@]}" --output=files //:wheels 2>/dev/null | sed "s|^|$exr/|")
names=$(for w in "${wheels[@]}"; do basename "$w"; done | sort | tr '\n' ' ')
want="jax_rocm6_pjrt-0.1.0-py3-none-any.whl jax_rocm6_probe-0.1.0-cp312-cp312-linux_x86_64.whl jax_rocm6_probe-0.1.0-cp314-cp314-linux_x86_64.whl jax_rocm7_pjrt-0.1.0-py3-none-any.whl jax_rocm7_probe-0.1.0-cp312-cp312-linux_x86_64.whl jax_rocm7_probe-0.1.0-cp314-cp314-linux_x86_64.whl plain_probe-0.1.0-cp312-cp312-linux_x86_64.whl plain_probe-0.1.0-cp314-cp314-linux_x86_64.whl "
[[ $names == "$want" ]] || fail "//:wheels gave [$names], want [$want]"
count() { "$PY" "$root/tests/lib/exec_log_count.py" "$ws/exec.json" "$@"; }
[[ $(count HipDeviceCompile '/_hip/vadd/vadd\.hip\.gfx1100') == "2 2" ]] ||
  fail "vadd.hip's gfx1100 device compile ran $(count HipDeviceCompile '/_hip/vadd/vadd\.hip\.gfx1100') (spawns configurations) times, want once per toolkit (2 2)"
[[ $(count CppCompile '/_plain/plain_module\.pic\.o$') == "2 2" ]] ||
  fail "the ROCm-independent plain_module.c compiled $(count CppCompile '/_plain/plain_module\.pic\.o$') times, want once per Python (2 2)"
[[ $(count CppCompile '/_vadd/vadd_module\.pic\.o$') == "4 4" ]] ||
  fail "vadd_module.c compiled $(count CppCompile '/_vadd/vadd_module\.pic\.o$') times, want once per toolkit and Python (4 4)"
for w in "${wheels[@]}"; do
  case $w in */jax_rocm6_probe-*cp312*) r6=$w ;; */jax_rocm7_probe-*cp312*) r7=$w ;; esac
done
for pair in "6:$r6:21" "7:$r7:22"; do
  IFS=: read -r major whl clang <<<"$pair"
  mkdir -p "$ws/unzip$major"
  (cd "$ws/unzip$major" && unzip -q -o "$whl")
  so=$(ls "$ws/unzip$major"/jax_rocm"$major"_probe/_vadd*.so)
  readelf -p .comment "$(extract "$so" gfx1100)" >"$ws/comment.txt"
  expect_in "$ws/comment.txt" "clang version $clang"
done
toolkit_lib="$ob/external/rules_rocm~~rules_rocm~rocm_toolkit_therock_6_4/toolkit/lib"
[[ -e $toolkit_lib/libamdhip64.so.6 ]] || fail "no libamdhip64.so.6 in $toolkit_lib"
for interp in "$py312" "$py314"; do
  v=$("$interp" -c 'import sys; print("%d%d" % sys.version_info[:2])')
  venv="$ws/venv$v"
  "$interp" -m venv --clear "$venv"
  mine=()
  for w in "${wheels[@]}"; do [[ $w == *-cp$v-* ]] && mine+=("$w"); done
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/python" -m pip install -q --no-index --no-deps "${mine[@]}" ||
    fail "pip install both lines' cp$v wheels into one venv"
  (cd "$ws" && "$venv/bin/python" -I -c 'import jax_rocm7_probe._vadd as m, plain_probe._plain; assert m.launcher()') ||
    fail "Python $v: jax_rocm7_probe does not import"
  (cd "$ws" && LD_LIBRARY_PATH=$toolkit_lib "$venv/bin/python" -I -c 'import jax_rocm6_probe._vadd as m; assert m.launcher()') ||
    fail "Python $v: jax_rocm6_probe does not import with ROCm 6.4's libraries"
done
expect_build_failure "$ws/major.log" --nobuild --@rules_rocm//rocm:toolkits=local,system //:wheels
expect_in "$ws/major.log" "ROCm toolkits local and system both build jax_rocm7_" "list one toolkit per ROCm line in --@rules_rocm//rocm:toolkits"
expect_build_failure "$ws/undeclared.log" --nobuild --@rules_rocm//rocm:toolkits=local,therock_7 //:wheels
expect_in "$ws/undeclared.log" "--@rules_rocm//rocm:toolkits=local,therock_7 names no declared ROCm toolkit (therock_7); declared: local, system, system_bad_sdk, system_sdk, therock_6_4, wrong_sum"
expect_build_failure "$ws/lines_refuse.log" --nobuild "${lines[@]/gfx1100/gfx950}" //:rocprim_lines
expect_in "$ws/lines_refuse.log" "(ROCm 6.4) cannot compile device code for gfx950" "this is toolkit \`therock_6_4\`"

echo "--- 5. server stopped: a new output base from the repository cache; a broken python3.13 first on PATH"
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
