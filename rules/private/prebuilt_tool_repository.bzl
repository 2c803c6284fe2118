"""Repository rule for WORKSPACE mode: a prebuilt rocm-wheel as the toolchain.

Bzlmod builds the tool with rules_rust (//rules:rocm_wheel_default_toolchain). WORKSPACE mode
takes a binary built beforehand (`cargo build --release --locked
--manifest-path tools/Cargo.toml`, or `bazel build //tools:rocm-wheel` in
bzlmod), so WORKSPACE consumers need no rules_rust or crate_universe setup.
"""

load(":labels.bzl", "abs_label")
load(":repository_utils.bzl", "attr_or_env", "write_template")

_BUILD_IT = "cargo build --release --locked --manifest-path <rules_rocm>/tools/Cargo.toml"

def detect_rocm_wheel(rctx):
    """The prebuilt binary to use, checked; writes nothing.

    Returns struct(binary = its path, source = where it was given).
    """
    given = attr_or_env(rctx, rctx.attr.path, "rules_rocm_dependencies(rocm_wheel=)", "ROCM_WHEEL")
    if not given.value:
        fail("rules_rocm: WORKSPACE mode uses a prebuilt rocm-wheel, and none was given. " +
             "Build it (`{}`) ".format(_BUILD_IT) +
             "and pass rules_rocm_dependencies(rocm_wheel = \"/abs/path/rocm-wheel\") or " +
             "--repo_env=ROCM_WHEEL=/abs/path/rocm-wheel.")
    binary = rctx.path(given.value)
    if not binary.exists or binary.is_dir:
        fail(("rules_rocm: the prebuilt rocm-wheel {} does not exist (from {}); build it with " +
              "`{}` and give its absolute path.").format(given.value, given.source, _BUILD_IT))
    return struct(binary = binary, source = given.source)

def _rocm_wheel_prebuilt_repository_impl(rctx):
    found = detect_rocm_wheel(rctx)
    rctx.symlink(found.binary, "rocm-wheel")
    write_template(rctx, "BUILD.bazel", "rocm_wheel_tools.BUILD.tpl", {
        "{TOOLCHAIN_BZL}": abs_label(Label("//rules/private:toolchain.bzl")),
        "{TOOLCHAIN_TYPE}": abs_label(Label("//rules:rocm_wheel_toolchain_type")),
    })

rocm_wheel_prebuilt_repository = repository_rule(
    implementation = _rocm_wheel_prebuilt_repository_impl,
    attrs = {
        "path": attr.string(doc = "Absolute path of a rocm-wheel binary; default: $ROCM_WHEEL."),
    },
    environ = ["ROCM_WHEEL"],
    doc = "The rocm_wheel toolchain over a prebuilt binary (WORKSPACE mode).",
)
