"""The rocm_wheel toolchain: how rule actions reach the Rust CLI."""

ROCM_WHEEL_TOOLCHAIN_TYPE = Label("//rules:rocm_wheel_toolchain_type")

def _rocm_wheel_toolchain_impl(ctx):
    return [platform_common.ToolchainInfo(
        rocm_wheel = ctx.executable.rocm_wheel,
    )]

rocm_wheel_toolchain = rule(
    implementation = _rocm_wheel_toolchain_impl,
    attrs = {
        "rocm_wheel": attr.label(
            mandatory = True,
            executable = True,
            allow_single_file = True,
            cfg = "exec",
            doc = "The rocm-wheel binary (rules_rust-built, or prebuilt).",
        ),
    },
    doc = "Declares a rocm-wheel binary for the rocm_wheel toolchain type.",
)

def rocm_wheel_tool(ctx):
    """The rocm-wheel executable of the resolved toolchain."""
    return ctx.toolchains[str(ROCM_WHEEL_TOOLCHAIN_TYPE)].rocm_wheel

def _current_rocm_wheel_impl(ctx):
    return [DefaultInfo(files = depset([rocm_wheel_tool(ctx)]))]

current_rocm_wheel = rule(
    implementation = _current_rocm_wheel_impl,
    toolchains = [str(ROCM_WHEEL_TOOLCHAIN_TYPE)],
    doc = "The rocm-wheel binary of the resolved toolchain, exactly the file rule actions run " +
          "(rules_rust-built in the tool's exec configuration, or a prebuilt one): for scripts " +
          "and tests, `bazel build` then `cquery --output=files`. Building the tool's own " +
          "target at the top level would compile it a second time, in the target configuration.",
)

def _rocm_wheel_unavailable_impl(ctx):
    if ctx.attr.unreleased:
        fail(("rules_rocm: rocm-wheel {version} has no release to download yet, so a module using rules_rocm " +
              "declares the binary it runs. Get one from a rules_rocm checkout: `make wheels` writes " +
              "dist/rocm_wheel-{version}-*_<cpu>.whl (`pip install` it: the binary is <venv>/bin/rocm-wheel), or " +
              "`cargo build --release --locked --manifest-path <rules_rocm>/tools/Cargo.toml` " +
              "(target/release/rocm-wheel). Then in MODULE.bazel: " +
              "rocm = use_extension(\"@rules_rocm//rules:extensions.bzl\", \"rules_rocm\"); " +
              "rocm.prebuilt_tool(path = \"/abs/path/rocm-wheel\"). " +
              "Or register a rocm_wheel_toolchain of your own (docs/rules/toolchains.md).").format(version = ctx.attr.unreleased))
    fail(("rules_rocm: no prebuilt rocm-wheel for this execution platform (prebuilt: {}). " +
          "Build it (`cargo build --release --locked --manifest-path <rules_rocm>/tools/Cargo.toml`) " +
          "and declare it in MODULE.bazel: rocm.prebuilt_tool(platform = ..., path = \"/abs/path/rocm-wheel\"), " +
          "or register a rocm_wheel_toolchain of your own (docs/rules/toolchains.md).").format(ctx.attr.platforms))

rocm_wheel_unavailable = rule(
    implementation = _rocm_wheel_unavailable_impl,
    attrs = {
        "platforms": attr.string(doc = "The platforms that have a prebuilt binary, for the message."),
        "unreleased": attr.string(doc = "The rocm-wheel version, when no release of it exists to download."),
    },
    doc = "The last rocm_wheel toolchain: fails at analysis, saying how to provide the tool.",
)
