"""rocm-wheel in one configuration, whatever rules_rocm's flags say.

The binary is built under tool_reset_transition (transitions.bzl), which
sets every rules_rocm setting to a constant: one compile per build.
"""

load(":transitions.bzl", "ALLOWLIST_ATTRS", "tool_reset_transition")

def _tool_in_one_configuration_impl(ctx):
    src = ctx.executable.binary
    out = ctx.actions.declare_file(ctx.label.name)
    ctx.actions.symlink(output = out, target_file = src, is_executable = True)
    return [DefaultInfo(
        executable = out,
        files = depset([out]),
        runfiles = ctx.runfiles([out]).merge(ctx.attr.binary[0][DefaultInfo].default_runfiles),
    )]

tool_in_one_configuration = rule(
    implementation = _tool_in_one_configuration_impl,
    attrs = ALLOWLIST_ATTRS | {
        "binary": attr.label(
            mandatory = True,
            executable = True,
            cfg = tool_reset_transition,
        ),
    },
    executable = True,
    doc = "The binary built with rules_rocm's settings reset: one compile per build.",
)
