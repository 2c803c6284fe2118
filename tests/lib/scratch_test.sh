# Sourced first by the e2e scripts that build a scratch module of their own
# (a downstream project pointing at this checkout): sets $root (this
# checkout), $BAZEL and a fixed locale, and brings in common.sh and
# rocm_wheel.sh.
export LC_ALL=C
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BAZEL=${BAZEL:-bazel}
source "$root/tests/lib/common.sh"
source "$root/tests/lib/rocm_wheel.sh"
