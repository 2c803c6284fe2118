"""jax_settings: builds the example's wheels with the settings JAX's own build has.

- --cxxopt=-std=c++17, as JAX's and XLA's .bazelrc set: gcc 16 compiles
  C++20 by default and hip_library's host half C++17, and abseil picks
  ABI-visible types by the standard (ABSL_OPTION_USE_STD_SOURCE_LOCATION
  and _ORDERING are 2: std:: types under C++20, its own under C++17), so
  abseil, the gcc-compiled kernel libraries and the HIP kernels must agree.
- -c opt, as JAX's .bazelrc sets: release wheels (at -O0 the modules are
  5 to 15 times larger than PyPI's).
- --//:python_versions: the versions JAX 0.10.2 supports (3.11-3.14, 3.14t)
  among those requested; none of them (--//:python_versions=3.10 in a module
  declaring it) builds no wheel here.

Set on this example's wheels only: the rest of the repository keeps its
configuration.
"""

load("//rules:defs.bzl", "PythonWheelSetInfo")

# buildifier: disable=bzl-visibility
load("//rules/private:providers.bzl", "PythonVersionsInfo")

_CXXOPT = "//command_line_option:cxxopt"
_MODE = "//command_line_option:compilation_mode"
_PYTHON_VERSIONS = str(Label("//:python_versions"))

# Requires-Python >=3.11; 3.14 is the newest JAX 0.10.2 ships, and 3.14t its
# free-threaded build (PyPI's jaxlib also has cp313t: not built here, this
# machine builds a free-threaded 3.14 only).
JAX_PYTHON_VERSIONS = ["3.11", "3.12", "3.13", "3.14", "3.14t"]

def _wanted(flag):
    """JAX's versions among those --//:python_versions asks for (validated where the flag is parsed)."""
    if flag.strip() == "all":
        return JAX_PYTHON_VERSIONS
    asked = [v.strip() for v in flag.split(",")]
    return [v for v in JAX_PYTHON_VERSIONS if v in asked]

def _jax_settings_impl(settings, _attr):
    opts = [o for o in settings[_CXXOPT] if not o.startswith("-std=")]

    # With none of JAX's versions asked for, `actual` is still analysed (for
    # all of them) but none of its wheels is returned, so none is built.
    versions = _wanted(settings[_PYTHON_VERSIONS]) or JAX_PYTHON_VERSIONS
    return {
        _CXXOPT: opts + ["-std=c++17"],
        _MODE: "opt",
        _PYTHON_VERSIONS: ",".join(versions),
    }

_jax_settings_transition = transition(
    implementation = _jax_settings_impl,
    inputs = [_CXXOPT, _PYTHON_VERSIONS],
    outputs = [_CXXOPT, _MODE, _PYTHON_VERSIONS],
)

def _jax_settings_rule_impl(ctx):
    actual = ctx.attr.actual[0]
    if PythonWheelSetInfo not in actual:
        return [DefaultInfo(files = actual[DefaultInfo].files)]
    wheels = actual[PythonWheelSetInfo]
    wanted = [v for v in JAX_PYTHON_VERSIONS if v in ctx.attr._python_versions[PythonVersionsInfo].versions]
    by_version = {v: files for v, files in wheels.by_version.items() if v in wanted}
    files = list(wheels.independent)
    for v in sorted(by_version):
        files.extend(by_version[v])

    # Variant wheels (--//:wheel_variants): the wanted versions' (their tags
    # name the version's ABI, as the set's per-Python wheels do).
    tags = ["-cp{}-".format(v.replace(".", "")) for v in wanted]
    variants = [f for f in getattr(wheels, "variants", None) or [] if "-cp" not in f.basename or [t for t in tags if t in f.basename]]
    return [
        DefaultInfo(files = depset(files + variants)),
        PythonWheelSetInfo(
            by_version = by_version,
            independent = wheels.independent,
            pythons = {v: py for v, py in wheels.pythons.items() if v in wanted},
            variants = variants,
        ),
    ]

jax_settings = rule(
    implementation = _jax_settings_rule_impl,
    attrs = {
        "actual": attr.label(mandatory = True, cfg = _jax_settings_transition, doc = "The target built with JAX's settings."),
        "_allowlist_function_transition": attr.label(default = "@bazel_tools//tools/allowlists/function_transition_allowlist"),
        "_python_versions": attr.label(default = "//:python_versions"),
    },
    doc = "`actual` built with -std=c++17, -c opt and JAX's Python versions (its DefaultInfo files and PythonWheelSetInfo).",
)
