#!/usr/bin/env bash
# The rule reference (docs/rules/) against the .bzl sources; --self-test also
# breaks every attribute table once and expects each break to be reported.
set -euo pipefail
exec python3 tests/outputs/docs/check_rule_docs.py --self-test . "$@"
