# Sourced by e2e scripts: rocm_wheel_path [BAZEL ARGS...] builds
# //tools:rocm-wheel with the given startup options/flags and prints the
# binary's absolute path (external files resolve against the output base,
# built ones against the execution root).
rocm_wheel_path() {
  local bazel=${BAZEL:-bazel} rel
  "$bazel" "$@" build //tools:rocm-wheel >/dev/null 2>&1 || {
    echo "rocm_wheel_path: bazel build //tools:rocm-wheel failed" >&2
    return 1
  }
  rel=$("$bazel" "$@" cquery --output=files //tools:rocm-wheel 2>/dev/null) || return 1
  case $rel in
    external/*) echo "$("$bazel" "$@" info output_base 2>/dev/null)/$rel" ;;
    *) echo "$("$bazel" "$@" info execution_root 2>/dev/null)/$rel" ;;
  esac
}
