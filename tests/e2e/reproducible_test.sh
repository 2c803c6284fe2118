#!/usr/bin/env bash
# Reproducibility: two builds of //:wheels separated by
# `bazel clean --expunge` give byte-identical wheels (sha256) and identical
# action outputs. No disk or remote cache: the second build re-creates
# everything, the cargo-built rocm-wheel tool included (it must come out
# identical too). A timestamping action (//tests/remote:leak_time) must FAIL
# the same check: proof that it can fail.
#
# Runs in the checkout's normal output base (or RULES_ROCM_E2E_OUTPUT_BASE),
# where the tool is usually built already. Environment: REPRODUCIBLE_TEST_TARGETS (default //:wheels),
# REPRODUCIBLE_TEST_TIMEOUT (s, 1200).
set -euo pipefail
source "$(dirname "$0")/../remote/lib.sh"

read -r -a TARGETS <<<"${REPRODUCIBLE_TEST_TARGETS:-//:wheels}"
LEAK=//tests/remote:leak_time

e2e_require_tools
e2e_deadline "${REPRODUCIBLE_TEST_TIMEOUT:-1200}"
mkdir -p "$E2E_TMP"
RUN=$(mktemp -d "$E2E_TMP/reproducible.XXXXXX")
OB=$E2E_MAIN_OB
ok=0
cleanup() {
  e2e_shutdown_servers
  if ((ok)); then
    rm -rf "$RUN"
    rmdir "$E2E_TMP" 2>/dev/null || true
  else
    echo "reproducible_test: logs kept in $RUN" >&2
  fi
}
e2e_traps cleanup

# X1: `bazel clean` so that every action runs (the rules_rust-built tool
# among them), then the build.
e2e_bazel "$E2E_ROOT" "$OB" clean >/dev/null 2>&1
e2e_build "$RUN" X1 "$E2E_ROOT" "$OB" "${E2E_LOCAL_FLAGS[@]}" "${TARGETS[@]}"
e2e_build "$RUN" X1_leak "$E2E_ROOT" "$OB" "${E2E_LOCAL_FLAGS[@]}" "$LEAK"
tool_1=$(e2e_tool_sha "$E2E_ROOT" "$OB")
ob_dir=$(e2e_output_base "$E2E_ROOT" "$OB")

echo "--- bazel clean --expunge"
e2e_bazel "$E2E_ROOT" "$OB" clean --expunge >/dev/null 2>&1
[[ ! -e $ob_dir/external ]] || e2e_fail "bazel clean --expunge left $ob_dir/external behind"

# X2: everything from scratch.
e2e_build "$RUN" X2 "$E2E_ROOT" "$OB" "${E2E_LOCAL_FLAGS[@]}" "${TARGETS[@]}"
e2e_build "$RUN" X2_leak "$E2E_ROOT" "$OB" "${E2E_LOCAL_FLAGS[@]}" "$LEAK"
tool_2=$(e2e_tool_sha "$E2E_ROOT" "$OB")
[[ $tool_1 == "$tool_2" ]] ||
  e2e_fail "the rules_rust-built rocm-wheel differs after --expunge ($tool_1 vs $tool_2): its Rustc actions are not deterministic"
echo "rocm-wheel binary identical after --expunge: $tool_1"
e2e_check "$RUN" X1 X2 --max-hit-rate 0

if e2e_check "$RUN" X1_leak X2_leak --max-hit-rate 0 >"$RUN/X2_leak.check" 2>&1; then
  cat "$RUN/X2_leak.check"
  e2e_fail "the check passed on a timestamping action: it cannot detect what it is meant to"
fi
cat "$RUN/X2_leak.check"
grep -q 'DIFF NonHermetic -> .*/leak_time.txt' "$RUN/X2_leak.check" ||
  e2e_fail "X2_leak: the timestamp in leak_time.txt was not reported as differing"
echo "negative control caught: leak_time (output differs)"

ok=1
echo "reproducible_test: PASS"
