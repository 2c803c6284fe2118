# Sourced by e2e scripts.

# built_path LABEL [STARTUP OPTIONS...] [-- FLAGS...]: builds LABEL (one
# file) with the given startup options and build flags and prints its
# absolute path (external files resolve against the output base, built ones
# against the execution root). It is downloaded even when built remotely.
built_path() {
  local label=$1 bazel=${BAZEL:-bazel} rel
  shift
  local -a startup=() flags=()
  while (($#)) && [[ $1 != -- ]]; do
    startup+=("$1")
    shift
  done
  (($#)) && shift
  # toplevel needs the in-memory .d files that remote.bazelrc turns off
  # for remote-cache (a .d it does not download cannot be read).
  flags=("$@" --remote_download_outputs=toplevel --experimental_inmemory_dotd_files)
  "$bazel" "${startup[@]}" build "${flags[@]}" "$label" >/dev/null 2>&1 || {
    echo "built_path: bazel build $label failed" >&2
    return 1
  }
  rel=$("$bazel" "${startup[@]}" cquery "${flags[@]}" --output=files "$label" 2>/dev/null) || return 1
  case $rel in
    external/*) echo "$("$bazel" "${startup[@]}" info output_base 2>/dev/null)/$rel" ;;
    *) echo "$("$bazel" "${startup[@]}" info execution_root 2>/dev/null)/$rel" ;;
  esac
}

# rocm_wheel_path [STARTUP OPTIONS...] [-- FLAGS...]: built_path of
# //tools:rocm-wheel (the resolved toolchain's binary).
rocm_wheel_path() { built_path //tools:rocm-wheel "$@"; }

# use_prebuilt_tool ROOT: the scratch module in the current directory takes
# rocm-wheel as a prebuilt binary (the one the checkout at ROOT builds,
# copied here) through a rocm_wheel_toolchain registered ahead of
# rules_rocm's default, instead of compiling the tool's crates with
# rules_rust in its own output base: for tests of other things than the
# tool's build (clean_builds_test.sh builds it cold, as a new user does).
use_prebuilt_tool() {
  local root=$1 bin
  bin=$(cd "$root" && rocm_wheel_path) || {
    echo "use_prebuilt_tool: cannot build //tools:rocm-wheel in $root" >&2
    return 1
  }
  fixture_copy prebuilt_tool_toolchain prebuilt_rocm_wheel
  cp "$bin" prebuilt_rocm_wheel/rocm-wheel
  echo 'register_toolchains("//prebuilt_rocm_wheel:toolchain")' >>MODULE.bazel
}
