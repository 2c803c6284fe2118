#!/bin/sh
echo "rules_rocm offline shim: coverage is not available without @remote_coverage_tools" >&2
exit 1
