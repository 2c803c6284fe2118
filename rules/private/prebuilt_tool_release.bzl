"""The rocm-wheel release that modules using rules_rocm run (a prebuilt binary).

Written by `bazel run --config=release //tools/release:declare` when a
release is cut (docs/releasing.md): the version of tools/Cargo.toml, and per
execution platform the release wheel's URLs and sha256.
//tools/release:version_test keeps them equal to what the tool builds.
"""

ROCM_WHEEL_RELEASE = struct(
    version = "0.1.0",
    wheels = {
        "x86_64-linux": struct(
            urls = ["https://github.com/rocm/rules_rocm/releases/download/v0.1.0/rocm_wheel-0.1.0-py3-none-manylinux_2_31_x86_64.whl"],
            sha256 = "0000000000000000000000000000000000000000000000000000000000000000",
        ),
    },
)
