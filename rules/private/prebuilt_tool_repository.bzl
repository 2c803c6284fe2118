"""Repository rule for WORKSPACE mode: a prebuilt rocm-wheel as the toolchain.

Bzlmod builds the tool with rules_rust (//rules:rocm_wheel_default_toolchain). WORKSPACE mode
takes a binary built beforehand (`cargo build --release --locked
--manifest-path tools/Cargo.toml`, or `bazel build //tools:rocm-wheel` in
bzlmod), so WORKSPACE consumers need no rules_rust or crate_universe setup.
"""

load(":labels.bzl", "abs_label")

def _rocm_wheel_prebuilt_repository_impl(rctx):
    path = rctx.attr.path or rctx.os.environ.get("ROCM_WHEEL", "")
    if not path:
        fail("rules_rocm: WORKSPACE mode uses a prebuilt rocm-wheel, and none was given. " +
             "Build it (`cargo build --release --locked --manifest-path <rules_rocm>/tools/Cargo.toml`) " +
             "and pass rules_rocm_dependencies(rocm_wheel = \"/abs/path/rocm-wheel\") or " +
             "--repo_env=ROCM_WHEEL=/abs/path/rocm-wheel.")
    binary = rctx.path(path)
    if not binary.exists or binary.is_dir:
        fail(("rules_rocm: the prebuilt rocm-wheel {} does not exist (from {}); build it with " +
              "`cargo build --release --locked --manifest-path <rules_rocm>/tools/Cargo.toml` " +
              "and give its absolute path.").format(path, "rules_rocm_dependencies(rocm_wheel=)" if rctx.attr.path else "$ROCM_WHEEL"))
    rctx.symlink(binary, "rocm-wheel")
    rctx.file("BUILD.bazel", """\
load("{toolchain_bzl}", "rocm_wheel_toolchain")

package(default_visibility = ["//visibility:public"])

exports_files(["rocm-wheel"])

rocm_wheel_toolchain(
    name = "rocm_wheel",
    rocm_wheel = ":rocm-wheel",
)

toolchain(
    name = "toolchain",
    exec_compatible_with = [
        "@platforms//os:linux",
        "@platforms//cpu:x86_64",
    ],
    toolchain = ":rocm_wheel",
    toolchain_type = "{toolchain_type}",
)
""".format(
        toolchain_bzl = abs_label(Label("//rules/private:toolchain.bzl")),
        toolchain_type = abs_label(Label("//rules:rocm_wheel_toolchain_type")),
    ))

rocm_wheel_prebuilt_repository = repository_rule(
    implementation = _rocm_wheel_prebuilt_repository_impl,
    attrs = {
        "path": attr.string(doc = "Absolute path of a rocm-wheel binary; default: $ROCM_WHEEL."),
    },
    environ = ["ROCM_WHEEL"],
    doc = "The rocm_wheel toolchain over a prebuilt binary (WORKSPACE mode).",
)
