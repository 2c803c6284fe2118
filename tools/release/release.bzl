"""rocm-wheel's release: the revision its binary names, and its glibc floor."""

load("@bazel_skylib//rules:common_settings.bzl", "BuildSettingInfo")

# buildifier: disable=bzl-visibility
load("//rules/private/actions:rocm_wheel.bzl", "rocm_wheel_glibc_floor")

# buildifier: disable=bzl-visibility
load("//rules/private/actions:stamp.bzl", "stamp_template")

# buildifier: disable=bzl-visibility
load("//rules/private/rules:rocm_wheel_toolchain.bzl", "ROCM_WHEEL_TOOLCHAIN_TYPE")

def _revision_env_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".env")
    if ctx.attr._stamp[BuildSettingInfo].value:
        stamp_template(ctx, "ROCM_WHEEL_REVISION=git {STABLE_GIT_COMMIT}\n", out, mnemonic = "RocmWheelRevision")
    else:
        # Unstamped builds stay cacheable: a constant, not the commit.
        ctx.actions.write(out, "ROCM_WHEEL_REVISION=unstamped build\n")
    return [DefaultInfo(files = depset([out]))]

revision_env = rule(
    implementation = _revision_env_impl,
    attrs = {"_stamp": attr.label(default = ":stamp")},
    doc = "A rustc_env_files file: ROCM_WHEEL_REVISION=git <commit> with --//tools/release:stamp " +
          "(--config=release). Not --stamp: the tool is compiled in the exec configuration, where " +
          "Bazel never stamps; a Starlark flag reaches it.",
)

def _glibc_floor_impl(ctx):
    out = ctx.actions.declare_file("{}/{}".format(ctx.label.name, ctx.file.binary.basename))
    rocm_wheel_glibc_floor(ctx, ctx.file.binary, ctx.attr.max, out)
    return [DefaultInfo(files = depset([out]))]

glibc_floor = rule(
    implementation = _glibc_floor_impl,
    attrs = {
        "binary": attr.label(allow_single_file = True, mandatory = True),
        "max": attr.string(mandatory = True, doc = "The oldest glibc it must load on, e.g. 2.17."),
    },
    toolchains = [str(ROCM_WHEEL_TOOLCHAIN_TYPE)],
    doc = "`<name>/<binary>`: `binary` with `rocm-wheel glibc-floor --max <max>` applied (Rust std's " +
          "weak references to newer glibc symbols lose their version).",
)
