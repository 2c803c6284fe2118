"""rocm-wheel's release: the revision its binary names."""

load("@bazel_skylib//rules:common_settings.bzl", "BuildSettingInfo")

# buildifier: disable=bzl-visibility
load("//rules/private:stamp.bzl", "stamp_template")

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
