"""rocm-wheel in one configuration, whatever rules_rocm's flags say.

The binary is built under tool_reset_transition (settings/transitions.bzl), which
sets every rules_rocm setting to a constant: one compile per build.
"""

load("//rules/private/settings:transitions.bzl", "ALLOWLIST_ATTRS", "tool_platform_transition", "tool_reset_transition")

def _forward_binary_impl(ctx):
    # A Starlark transition makes the attribute a list; the exec one does not.
    binary = ctx.attr.binary[0] if type(ctx.attr.binary) == "list" else ctx.attr.binary
    src = ctx.executable.binary
    out = ctx.actions.declare_file(ctx.label.name)
    ctx.actions.symlink(output = out, target_file = src, is_executable = True)
    return [DefaultInfo(
        executable = out,
        files = depset([out]),
        runfiles = ctx.runfiles([out]).merge(binary[DefaultInfo].default_runfiles),
    )]

tool_in_one_configuration = rule(
    implementation = _forward_binary_impl,
    attrs = ALLOWLIST_ATTRS | {
        "binary": attr.label(
            mandatory = True,
            executable = True,
            # An installed executable (a repository's file) as well as a
            # binary target.
            allow_files = True,
            cfg = tool_reset_transition,
        ),
    },
    executable = True,
    doc = "The binary built with rules_rocm's settings reset: one compile per build.",
)

exec_binary = rule(
    implementation = _forward_binary_impl,
    attrs = {"binary": attr.label(mandatory = True, executable = True, cfg = "exec")},
    executable = True,
    doc = "A binary built for the execution platform, as rule actions run the tool: through a " +
          "tool_in_one_configuration it is the toolchain's configuration, so its library crates are " +
          "the toolchain's (a tool's release wheel is built on the platform it is for).",
)

tool_for_platform = rule(
    implementation = _forward_binary_impl,
    attrs = ALLOWLIST_ATTRS | {
        "binary": attr.label(
            mandatory = True,
            executable = True,
            cfg = tool_platform_transition,
        ),
        "platform": attr.label(mandatory = True, doc = "The target platform, e.g. //platforms:linux_aarch64."),
    },
    executable = True,
    doc = "The binary cross-built for `platform`, in the tool's configuration otherwise (its wheel for that platform).",
)
