#!/usr/bin/env bash
# vendored_crates_test.sh CHECK_PY TOOLS_CARGO_TOML DEFS_BZL: runs the check
# over the runfiles' copies of tools/ and tools/3rdparty/crates.
set -euo pipefail
exec python3 "$1" "$(dirname "$2")" "$(dirname "$3")"
