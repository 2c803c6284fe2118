#!/usr/bin/env bash
# rocm-wheel's own wheels in DIST (`make tool-wheels`)
# as pip on this x86_64 host judges them: one wheel per CPU; the aarch64
# one refused here for its platform and nothing else, and accepted by the
# same pip asked for an aarch64 manylinux_2_17 target; each one's binary is
# for its CPU (the aarch64 one runs under qemu: //tools/release:aarch64_test).
set -euo pipefail
cd "$(dirname "$0")/../.."
dist=$(cd "${1:?usage: tool_wheels_test.sh DIST_DIR}" && pwd)
source tests/lib/common.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

shopt -s nullglob
x86=("$dist"/rocm_wheel-*-manylinux_2_17_x86_64.whl)
arm=("$dist"/rocm_wheel-*-manylinux_2_17_aarch64.whl)
((${#x86[@]} == 1)) || fail "want one rocm_wheel-*_x86_64.whl in $dist, found ${#x86[@]}"
((${#arm[@]} == 1)) || fail "want one rocm_wheel-*_aarch64.whl in $dist, found ${#arm[@]}"
python3 -m venv "$tmp/venv"
pip=$tmp/venv/bin/pip

# The control first: this pip installs the x86_64 wheel (its dry run).
"$pip" install --quiet --no-index --dry-run "${x86[0]}" || fail "pip on this x86_64 host refuses ${x86[0]##*/}"
if "$pip" install --quiet --no-index --dry-run "${arm[0]}" 2>"$tmp/arm.txt"; then
  fail "pip on this x86_64 host accepts ${arm[0]##*/}"
fi
grep -q "is not a supported wheel on this platform" "$tmp/arm.txt" ||
  { cat "$tmp/arm.txt" >&2; fail "pip refused ${arm[0]##*/} for another reason"; }
"$pip" install --quiet --no-index --dry-run --only-binary=:all: --platform manylinux_2_17_aarch64 \
  --target "$tmp/arm-target" "${arm[0]}" || fail "pip refuses ${arm[0]##*/} for an aarch64 target too"
# pip reads the tag from the file name only: the binary in each wheel must
# be for its CPU (readelf's Machine).
machine() {
  rm -rf "$tmp/unpacked"
  unzip -q "$1" 'rocm_wheel-*.data/scripts/rocm-wheel' -d "$tmp/unpacked" || fail "${1##*/} holds no scripts/rocm-wheel"
  readelf -h "$tmp/unpacked"/rocm_wheel-*.data/scripts/rocm-wheel | sed -n 's/^ *Machine: *//p'
}
[[ $(machine "${x86[0]}") == "Advanced Micro Devices X86-64" ]] || fail "${x86[0]##*/}'s binary is for $(machine "${x86[0]}")"
[[ $(machine "${arm[0]}") == AArch64 ]] || fail "${arm[0]##*/}'s binary is for $(machine "${arm[0]}")"
echo "tool_wheels_test: ${x86[0]##*/} installs here; ${arm[0]##*/} is refused here for its platform and accepted for aarch64"
