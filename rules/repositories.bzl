"""WORKSPACE setup for rules_rocm (Bazel < 7 or WORKSPACE mode).

    load("@rules_rocm//rules:repositories.bzl", "rules_rocm_dependencies", "rules_rocm_toolchains")
    rules_rocm_dependencies()
    rules_rocm_toolchains()

@platforms and @rules_cc are expected from the caller (as every C++ workspace
already has them); rules_rocm downloads nothing itself. The rocm-wheel tool
is a prebuilt binary here (rules_rocm_dependencies(rocm_wheel = ...) or
$ROCM_WHEEL); bzlmod builds it from tools/ with rules_rust.
"""

load("//rules/private:hip_repository.bzl", "rocm_hip_repository")
load("//rules/private:prebuilt_tool_repository.bzl", "rocm_wheel_prebuilt_repository")
load("//rules/private:python_repository.bzl", "local_python_repository")

def rules_rocm_dependencies(python_interpreters = {}, rocm_wheel = ""):
    """Declares the repositories rules_rocm needs.

    Args:
      python_interpreters: optional {"3.12": "/path/to/python3.12"}; default:
        discover pyenv installations.
      rocm_wheel: absolute path of a prebuilt rocm-wheel binary (`cargo build
        --release --locked --manifest-path tools/Cargo.toml`); default:
        $ROCM_WHEEL (e.g. --repo_env=ROCM_WHEEL=...). Bzlmod builds it with
        rules_rust instead.
    """
    if not native.existing_rule("rocm_wheel_tools"):
        rocm_wheel_prebuilt_repository(name = "rocm_wheel_tools", path = rocm_wheel)
    if not native.existing_rule("rocm_python"):
        local_python_repository(name = "rocm_python", interpreters = python_interpreters)
    if not native.existing_rule("rocm_hip"):
        # ROCm from $ROCM_PATH, /opt/rocm or /usr; declare rocm_hip yourself
        # (rocm_hip_repository(rocm_path = ..., clang = ...)) to pin it.
        rocm_hip_repository(name = "rocm_hip")

def rules_rocm_toolchains():
    """Registers the default toolchains (the prebuilt rocm-wheel, HIP from the local ROCm, local Pythons)."""
    native.register_toolchains("@rocm_wheel_tools//:toolchain")
    native.register_toolchains("@rocm_hip//:toolchain")

    # One per discovered interpreter, then the no-Python fallback (order matters).
    native.register_toolchains("@rocm_python//:all", "@rocm_python//fallback:all")
