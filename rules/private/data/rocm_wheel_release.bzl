"""The rocm-wheel release that modules using rules_rocm run (a prebuilt binary).

Written by `bazel run --config=release //tools/release:declare` when a
release is cut (docs/releasing.md): the version of tools/Cargo.toml, and per
execution platform the release wheel's URLs and sha256.
//tools/release:version_test keeps them equal to what the tool builds.

Until a release is uploaded, `wheels` is empty: a module that declares no
binary of its own (rocm.prebuilt_tool) then fails at analysis saying how to
declare one, instead of downloading from an address that holds nothing.
"""

ROCM_WHEEL_RELEASE = struct(
    version = "0.1.0",
    wheels = {},
)
