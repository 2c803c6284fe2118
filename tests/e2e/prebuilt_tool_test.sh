#!/usr/bin/env bash
# A new user's module gets rocm-wheel prebuilt, not compiled:
#  1. the release wheel (//tools/release:wheel, --config=release) names this
#     commit in its binary's --version;
#  2. served on 127.0.0.1 and declared with rocm.prebuilt_tool(urls, sha256)
#     (what rules_rocm's own release declaration does with the real URL), a
#     scratch module of one hip_library and one wheel builds with no rules_rust
#     and no crate repository in its module graph or output base and no Rustc
#     action; its wheel action runs the downloaded binary;
#  3. on an execution platform no prebuilt is declared for, a rule that runs
#     the tool fails at analysis saying how to provide one;
#  4. a module that declares no binary (rules_rocm has no release yet) fails
#     at analysis saying how to declare one, with no download attempted.
set -euo pipefail
source "$(dirname "$0")/../lib/scratch_test.sh"
PY="${ROCM_WHEEL_VENV:-$root/.venv}/bin/python"
[[ -x $PY ]] || fail "$PY missing: run \`make setup\` first"

ws=$(mktemp -d "${TMPDIR:-/tmp}/prebuilt_tool.XXXXXX")
server=""
cleanup() {
  [[ -n $server ]] && kill "$server" 2>/dev/null
  (cd "$ws/main" 2>/dev/null && "$BAZEL" --output_base="$ws/ob" shutdown >/dev/null 2>&1) || true
  rm -rf "$ws"
}
trap cleanup EXIT

echo "--- 1. the release wheel"
whl=$(cd "$root" && built_path //tools/release:wheel -- --config=release) || fail "bazel build --config=release //tools/release:wheel"
mkdir -p "$ws/serve" "$ws/unzip"
cp "$whl" "$ws/serve/"
name=$(basename "$whl")
(cd "$ws/unzip" && unzip -q "$ws/serve/$name")
version=$("$ws/unzip"/rocm_wheel-*.data/scripts/rocm-wheel --version)
commit=$(git -C "$root" rev-parse HEAD)
[[ $version == "rocm-wheel "*" (git $commit)" ]] || fail "--version of the release binary is '$version', want it to name git $commit"
sha=$(sha256sum "$ws/serve/$name" | cut -d' ' -f1)
read -r server port <<<"$(serve_directory "$ws/serve" "$ws/http.log")"

echo "--- 2. a new module, the tool prebuilt"
mkdir -p "$ws/main"
cd "$ws/main"
scratch_module tool_user "$root"
fixture prebuilt_tool/MODULE.bazel.in SHA256="$sha" PORT="$port" WHEEL="$name" >>MODULE.bazel
echo "build $(shared_disk_cache)" >>.bazelrc
cp "$root/tests/outputs/gfx/vadd.hip" .
cp "$RULES_ROCM_FIXTURES/prebuilt_tool/BUILD.bazel" .
ob="$ws/ob"
bz mod graph >"$ws/graph.txt" 2>"$ws/graph.err" || { cat "$ws/graph.err" >&2; fail "bazel mod graph"; }
expect_in "$ws/graph.txt" "rules_rocm@" "rules_python@"
! grep -q "rules_rust" "$ws/graph.txt" || fail "rules_rust is in the module graph of a module that uses rules_rocm: $(grep rules_rust "$ws/graph.txt")"
bz build --@rules_rocm//:gfx=gfx1201 --execution_log_json_file="$ws/exec.json" //:vadd //:wheel 2>"$ws/build.err" ||
  { tail -30 "$ws/build.err" >&2; fail "the module with the prebuilt tool"; }
[[ $("$PY" "$root/tests/lib/exec_log_count.py" "$ws/exec.json" Rustc .) == "0 0" ]] || fail "Rustc actions ran: the tool was compiled"
[[ $("$PY" "$root/tests/lib/exec_log_count.py" "$ws/exec.json" HipDeviceCompile 'gfx1201') != "0 0" ]] || fail "no device compile in the execution log (a vacuous check)"
bz aquery --@rules_rocm//:gfx=gfx1201 'outputs(".*tool_user-0.1.0-.*whl", //:wheel)' >"$ws/aquery.txt" 2>/dev/null
expect_in "$ws/aquery.txt" "rocm_wheel_release_x86_64_linux/rocm-wheel"
leftovers=$(ls "$ob/external" | grep -E 'rules_rust|rocm_wheel_crates' || true)
[[ -z $leftovers ]] || fail "the output base has rules_rust repositories: $leftovers"

echo "--- 3. no prebuilt for the execution platform"
expect_build_failure "$ws/arm.log" --nobuild --extra_execution_platforms=//:arm64_linux --platforms=//:arm64_linux //:pure
expect_in "$ws/arm.log" "no prebuilt rocm-wheel for this execution platform (prebuilt: x86_64-linux)" \
  "rocm.prebuilt_tool(platform = ..., path = "
# The release declaration lists no wheel until one is uploaded; once it
# does, a module that declares nothing downloads it (step 2's path).
if grep -q '^    wheels = {},$' "$root/rules/private/data/rocm_wheel_release.bzl"; then
  echo "--- 4. a module that declares no binary (no release yet)"
  sed -i '/^rocm.prebuilt_tool(/,/^)/d' MODULE.bazel
  ! grep -q prebuilt_tool MODULE.bazel || fail "the scratch module still declares a prebuilt tool"
  v=$(sed -n 's/^    version = "\(.*\)",$/\1/p' "$root/rules/private/data/rocm_wheel_release.bzl")
  expect_build_failure "$ws/none.log" --nobuild //:pure
  expect_in "$ws/none.log" "rocm-wheel $v has no release to download yet" \
    "make wheels\` writes dist/rocm_wheel-$v-*_<cpu>.whl" "rocm.prebuilt_tool(path = \"/abs/path/rocm-wheel\")"
  ! grep -qE 'Downloading|releases/download|github\.com|pythonhosted' "$ws/none.log" ||
    { cat "$ws/none.log" >&2; fail "a module that declares nothing tried to download"; }
else
  echo "--- 4. skipped: rules/private/data/rocm_wheel_release.bzl declares a release"
fi
echo "PASS"
