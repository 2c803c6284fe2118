"""Test rules for tests/python (not public API)."""

# buildifier: disable=bzl-visibility
load("//rules/private:shell.bzl", "shell_quote")

# buildifier: disable=bzl-visibility
load("//rules/private:toolchain.bzl", "ROCM_WHEEL_TOOLCHAIN_TYPE", "rocm_wheel_tool")

def _manylinux_test_impl(ctx):
    wheels = [f for f in ctx.files.wheels if "-manylinux_" in f.basename]
    if not wheels:
        fail("{}: no manylinux-tagged wheels among {}".format(ctx.label, [f.basename for f in ctx.files.wheels]))
    tool = rocm_wheel_tool(ctx)
    lines = [
        "#!/usr/bin/env bash",
        "# Generated: rocm-wheel check and auditwheel (the reference implementation) must accept",
        "# each wheel's manylinux tag.",
        "set -euo pipefail",
        "check={}".format(shell_quote(tool.short_path)),
        "venv={}".format(shell_quote(ctx.attr.venv)),
        '[[ -x "$venv/bin/auditwheel" ]] || { echo "no auditwheel in $venv: run make setup first" >&2; exit 1; }',
    ]
    lines.append("for w in {}; do".format(" ".join([shell_quote(w.short_path) for w in wheels])))
    lines += [
        'declared=$(sed -E "s/.*-manylinux_2_([0-9]+)_x86_64\\.whl$/\\1/" <<<"$w")',
        '"$check" check "$w" || { echo "FAIL: rocm-wheel check rejects $w"; exit 1; }',
        'out=$("$venv/bin/auditwheel" show "$w")',
        # auditwheel also counts the symbol versions of the system ROCm
        # libraries a wheel loads (not shipped, allowlisted by rocm-wheel
        # check); it is the oracle only for wheels that load none.
        'if grep -q "libamdhip64" <<<"$out"; then echo "ok: $(basename "$w"): rocm-wheel check passes (loads ROCm from the system)"; continue; fi',
        'allowed=$(tr "\\n" " " <<<"$out" | sed -nE "s/.*consistent with the following platform tag: \\"manylinux_2_([0-9]+)_x86_64\\".*/\\1/p")',
        '[[ -n $allowed ]] || { echo "FAIL: $w: auditwheel gave no manylinux tag:"; echo "$out"; exit 1; }',
        '((allowed <= declared)) || { echo "FAIL: $w is tagged manylinux_2_$declared but needs manylinux_2_$allowed:"; echo "$out"; exit 1; }',
        'echo "ok: $(basename "$w"): rocm-wheel check passes; auditwheel: needs manylinux_2_$allowed, tagged manylinux_2_$declared"',
    ]
    lines.append("done")
    ctx.actions.write(ctx.outputs.executable, "\n".join(lines) + "\n", is_executable = True)
    return [DefaultInfo(runfiles = ctx.runfiles(files = wheels + [tool]))]

manylinux_test = rule(
    implementation = _manylinux_test_impl,
    attrs = {
        "venv": attr.string(mandatory = True, doc = "Venv with auditwheel (make setup)."),
        "wheels": attr.label_list(allow_files = [".whl"]),
    },
    test = True,
    toolchains = [str(ROCM_WHEEL_TOOLCHAIN_TYPE)],
    doc = "rocm-wheel check and auditwheel show agree with the manylinux tag of every manylinux wheel.",
)
