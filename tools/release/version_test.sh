#!/usr/bin/env bash
# The tool's wheel and the release declaration come from one version:
#   version_test.sh CRATE_VERSION RELEASE_VERSION PLATFORM=URL... -- CARGO_TOML WHEEL...
# - tools/Cargo.toml's [workspace.package] version, tools/crate.bzl's VERSION
#   (what Bazel compiles) and rules/private/data/rocm_wheel_release.bzl's version are equal;
# - every release URL names the wheel //tools/release builds for its
#   platform (same distribution, version and tag: x86_64-linux the
#   _x86_64 wheel, aarch64-linux the _aarch64 one); no URL at all means not
#   released yet (modules then declare their own binary, named at analysis).
set -euo pipefail
crate=$1 release=$2
shift 2
urls=()
while [[ $1 != -- ]]; do urls+=("$1"); shift; done
shift
cargo_toml=$1
shift
wheels=()
for w in "$@"; do wheels+=("$(basename "$w")"); done
fail() { echo "FAIL: $*" >&2; exit 1; }
cargo=$(awk '/^\[workspace.package\]/{p=1; next} /^\[/{p=0} p && /^version *=/{gsub(/[" ]/, "", $0); sub(/version=/, ""); print}' "$cargo_toml")
[[ $cargo == "$crate" ]] || fail "tools/Cargo.toml says $cargo, tools/crate.bzl's VERSION $crate: change both"
[[ $release == "$crate" ]] || fail "rules/private/data/rocm_wheel_release.bzl declares rocm-wheel $release, the tool is $crate: cut the release (docs/releasing.md: bazel run --config=release //tools/release:declare)"
if ((${#urls[@]} == 0)); then
  echo "PASS: rocm-wheel $crate: ${wheels[*]}, not released yet (no URL declared)"
  exit 0
fi
for pu in "${urls[@]}"; do
  platform=${pu%%=*} u=${pu#*=}
  want=""
  for w in "${wheels[@]}"; do
    [[ $w == *"_${platform%-linux}.whl" ]] && want=$w
  done
  [[ -n $want ]] || fail "release platform $platform: //tools/release builds no wheel for it (${wheels[*]})"
  [[ $(basename "$u") == "$want" ]] || fail "release URL $u ($platform) does not name $want, the wheel //tools/release builds for it"
done
echo "PASS: rocm-wheel $crate: ${wheels[*]}, declared at ${#urls[@]} URL(s)"
