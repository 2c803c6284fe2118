#!/usr/bin/env bash
# Bazel workspace status for stamped builds:
#   bazel build --stamp --workspace_status_command=tools/workspace_status.sh //:wheels
# STABLE_* keys reach outputs only through rules_rocm's stamping actions
# (rules/private/actions/stamp.bzl); unstamped builds never read them.
# Commits of other source trees (e.g. XLA) are listed in
# ROCM_WHEEL_STAMP_COMMITS="xla=/path/to/xla rocm_jax=/path/to/rocm-jax" and
# printed as STABLE_COMMIT_<NAME>.
set -euo pipefail
commit=$(git rev-parse HEAD 2>/dev/null) || {
  echo "workspace_status.sh: $(pwd) is not a git checkout; cannot stamp a commit" >&2
  exit 1
}
echo "STABLE_GIT_COMMIT $commit"
if git diff --quiet HEAD -- 2>/dev/null; then echo "STABLE_GIT_DIRTY 0"; else echo "STABLE_GIT_DIRTY 1"; fi
for pair in ${ROCM_WHEEL_STAMP_COMMITS:-}; do
  name=${pair%%=*}
  dir=${pair#*=}
  [[ $name != "$pair" && -n $name ]] || {
    echo "workspace_status.sh: ROCM_WHEEL_STAMP_COMMITS entry '$pair' is not NAME=DIR" >&2
    exit 1
  }
  sha=$(git -C "$dir" rev-parse HEAD 2>/dev/null) || {
    echo "workspace_status.sh: $dir (for $name) is not a git checkout" >&2
    exit 1
  }
  echo "STABLE_COMMIT_$(tr '[:lower:]-' '[:upper:]_' <<<"$name") $sha"
done
