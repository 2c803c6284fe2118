"""rocm-wheel in one configuration, whatever rules_rocm's flags say.

Bazel 7 carries Starlark build settings into the exec configuration, so the
tool would otherwise be compiled once per Python version, per gfx target and
per `--//:gfx` value. This transition sets every rules_rocm setting to a
constant no user types (Bazel names output directories by the difference to
the top-level configuration: a constant that always differs keeps the path,
hence the action keys, the same across commands).
"""

load(":gfx.bzl", "DEVICE_CONFIGURATION_GFX")
load(":python.bzl", "PYTHON_INDEPENDENT")
load(":transitions.bzl", "ALLOWLIST_ATTRS", "FLAG_IN_TRANSITIONED_CONFIGURATIONS")

TOOL_CONFIGURATION = "(tool configuration)"

_CONSTANTS = {
    str(Label("//:gfx")): DEVICE_CONFIGURATION_GFX,
    str(Label("//:hip_bundle_compression")): TOOL_CONFIGURATION,
    str(Label("//:python_versions")): FLAG_IN_TRANSITIONED_CONFIGURATIONS,
    str(Label("//platforms/gfx:device_target")): TOOL_CONFIGURATION,
    str(Label("//rules/python:version")): PYTHON_INDEPENDENT,
    # Cargo's release profile: no debug info, whose compile directories
    # (sandbox paths, e.g. zstd-sys's C objects) made the binary differ
    # between output bases.
    "//command_line_option:compilation_mode": "opt",
}

def _tool_reset_impl(_settings, _attr):
    return _CONSTANTS

tool_reset_transition = transition(
    implementation = _tool_reset_impl,
    inputs = [],
    outputs = list(_CONSTANTS),
)

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
