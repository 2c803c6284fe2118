"""rules_python's internal configuration for this machine's Bazel (7.7.1).

Debian's Bazel reports no release ("development version"), which
rules_python's own config repository reads as "the latest Bazel" and then
asks for Bazel 9 features (the launcher_maker toolchain type of py_test).
These are the values it computes for a stamped 7.7.1 on Linux, with its
defaults for the environment switches (RULES_PYTHON_ENABLE_PIPSTAR=1).
"""

config = struct(
    build_python_zip_default = False,
    supports_whl_extraction = False,
    enable_pystar = True,
    enable_pipstar = True,
    enable_deprecation_warnings = False,
    bazel_8_or_later = False,
    bazel_9_or_later = False,
    bazel_10_or_later = False,
    BuiltinPyInfo = getattr(getattr(native, "legacy_globals", None), "PyInfo", PyInfo),
    BuiltinPyRuntimeInfo = getattr(getattr(native, "legacy_globals", None), "PyRuntimeInfo", PyRuntimeInfo),
    BuiltinPyCcLinkParamsProvider = getattr(getattr(native, "legacy_globals", None), "PyCcLinkParamsProvider", PyCcLinkParamsProvider),
)
