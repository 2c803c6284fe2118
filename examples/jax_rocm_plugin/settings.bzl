"""jax_settings: builds the example's wheels with the settings JAX's own build has.

- --cxxopt=-std=c++17, as JAX's and XLA's .bazelrc set: gcc 16 compiles
  C++20 by default and hip_library's host half C++17, and abseil picks
  ABI-visible types by the standard (ABSL_OPTION_USE_STD_SOURCE_LOCATION
  and _ORDERING are 2: std:: types under C++20, its own under C++17), so
  abseil, the gcc-compiled kernel libraries and the HIP kernels must agree.
- --//:python_versions=all means the versions JAX 0.10.2 supports
  (3.11-3.14), not every version this repository declares (3.10 too).

Set on this example's wheels only: the rest of the repository keeps its
configuration.
"""

load("//rules:defs.bzl", "PythonWheelSetInfo")

_CXXOPT = "//command_line_option:cxxopt"
_PYTHON_VERSIONS = str(Label("//:python_versions"))

# Requires-Python >=3.11; 3.14 is the newest JAX 0.10.2 ships.
JAX_PYTHON_VERSIONS = ["3.11", "3.12", "3.13", "3.14"]

def _jax_settings_impl(settings, _attr):
    opts = [o for o in settings[_CXXOPT] if not o.startswith("-std=")]
    versions = settings[_PYTHON_VERSIONS]
    return {
        _CXXOPT: opts + ["-std=c++17"],
        _PYTHON_VERSIONS: ",".join(JAX_PYTHON_VERSIONS) if versions == "all" else versions,
    }

_jax_settings_transition = transition(
    implementation = _jax_settings_impl,
    inputs = [_CXXOPT, _PYTHON_VERSIONS],
    outputs = [_CXXOPT, _PYTHON_VERSIONS],
)

def _jax_settings_rule_impl(ctx):
    actual = ctx.attr.actual[0]
    providers = [DefaultInfo(files = actual[DefaultInfo].files)]
    if PythonWheelSetInfo in actual:
        providers.append(actual[PythonWheelSetInfo])
    return providers

jax_settings = rule(
    implementation = _jax_settings_rule_impl,
    attrs = {
        "actual": attr.label(mandatory = True, cfg = _jax_settings_transition, doc = "The target built with JAX's settings."),
        "_allowlist_function_transition": attr.label(default = "@bazel_tools//tools/allowlists/function_transition_allowlist"),
    },
    doc = "`actual` built with -std=c++17 and JAX's Python versions (its DefaultInfo files and PythonWheelSetInfo).",
)
