"""family_wheels_test: every per-family wheel holds only its family's code
and installs with pip."""

load("//rules:defs.bzl", "FamilyWheelsInfo")

# buildifier: disable=bzl-visibility
load("//rules/private/rules:rocm_wheel_toolchain.bzl", "ROCM_WHEEL_TOOLCHAIN_TYPE", "rocm_wheel_tool")

# buildifier: disable=bzl-visibility
load("//rules/private/util:shell.bzl", "shell_quote")

def _family_wheels_test_impl(ctx):
    by_family = ctx.attr.wheels[FamilyWheelsInfo].by_family
    if sorted(by_family.keys()) != sorted(ctx.attr.expected.keys()):
        fail("{}: wheels for {} but expectations for {}".format(ctx.label, sorted(by_family.keys()), sorted(ctx.attr.expected.keys())))
    tool = rocm_wheel_tool(ctx)
    lines = [
        "#!/usr/bin/env bash",
        "set -euo pipefail",
        "py={}/bin/python".format(shell_quote(ctx.attr.venv)),
        '[[ -x "$py" ]] || { echo "no $py: run make setup first" >&2; exit 1; }',
    ]
    for family, wheel in sorted(by_family.items()):
        lines.append('"$py" {} {} {} {} {} {}'.format(
            shell_quote(ctx.file._check.short_path),
            shell_quote(tool.short_path),
            shell_quote(wheel.short_path),
            shell_quote(family),
            shell_quote(ctx.attr.expected[family]),
            shell_quote(ctx.attr.distribution + "-" + family),
        ))
    lines.append('echo "PASS: {} family wheels"'.format(len(by_family)))
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(script, "\n".join(lines) + "\n", is_executable = True)
    return [DefaultInfo(
        executable = script,
        runfiles = ctx.runfiles(files = by_family.values() + [ctx.file._check, tool]),
    )]

family_wheels_test = rule(
    implementation = _family_wheels_test_impl,
    attrs = {
        "distribution": attr.string(mandatory = True, doc = "The fat wheel's distribution name."),
        "expected": attr.string_dict(mandatory = True, doc = "Family -> its targets, written out (comma list)."),
        "venv": attr.string(mandatory = True),
        "wheels": attr.label(mandatory = True, providers = [FamilyWheelsInfo]),
        "_check": attr.label(default = ":check_family_wheel.py", allow_single_file = True),
    },
    toolchains = [str(ROCM_WHEEL_TOOLCHAIN_TYPE)],
    test = True,
    doc = "Each family wheel: only its family's targets in every bundle, pip installs it, the plugin loads.",
)
