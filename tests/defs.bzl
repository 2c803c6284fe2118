"""Test rules used by this repository's own tests."""

# buildifier: disable=bzl-visibility
load("//rules/private/util:shell.bzl", "shell_quote")

def _wheel_tools_test_impl(ctx):
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    venv = shell_quote(ctx.attr.venv)
    lines = [
        "#!/usr/bin/env bash",
        "# Generated: the real packaging clients must accept every wheel.",
        "set -euo pipefail",
        "venv={}".format(venv),
        '[[ -x "$venv/bin/twine" ]] || { echo "no test tools in $venv: run make setup first" >&2; exit 1; }',
        'tmp="${TEST_TMPDIR:-$(mktemp -d)}"',
    ]
    for w in ctx.files.wheels:
        q = shell_quote(w.short_path)
        lines += [
            'echo "== {}"'.format(w.basename),
            '"$venv/bin/twine" check --strict {}'.format(q),
            '"$venv/bin/check-wheel-contents" {} {}'.format(" ".join([shell_quote(a) for a in ctx.attr.check_wheel_contents_args]), q),
            # `wheel unpack` verifies every RECORD hash and size.
            'rm -rf "$tmp/unpack" && "$venv/bin/wheel" unpack -d "$tmp/unpack" {}'.format(q),
        ]
    lines.append('echo "PASS: {} wheel(s)"'.format(len(ctx.files.wheels)))
    ctx.actions.write(script, "\n".join(lines) + "\n", is_executable = True)
    return [DefaultInfo(executable = script, runfiles = ctx.runfiles(files = ctx.files.wheels))]

wheel_tools_test = rule(
    implementation = _wheel_tools_test_impl,
    attrs = {
        "check_wheel_contents_args": attr.string_list(doc = "Extra check-wheel-contents options, e.g. --ignore=W002."),
        "venv": attr.string(mandatory = True),
        "wheels": attr.label_list(allow_files = [".whl"]),
    },
    test = True,
    doc = "twine check --strict, check-wheel-contents and wheel unpack on every wheel.",
)

def _venv_python_test_impl(ctx):
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(script, "\n".join([
        "#!/usr/bin/env bash",
        "set -euo pipefail",
        "py={}/bin/python".format(shell_quote(ctx.attr.venv)),
        '[[ -x "$py" ]] || { echo "no $py: run make setup first" >&2; exit 1; }',
        'exec "$py" {} {}'.format(shell_quote(ctx.file.script.short_path), " ".join([shell_quote(f.short_path) for f in ctx.files.data])),
    ]) + "\n", is_executable = True)
    return [DefaultInfo(executable = script, runfiles = ctx.runfiles(files = [ctx.file.script] + ctx.files.data))]

venv_python_test = rule(
    implementation = _venv_python_test_impl,
    attrs = {
        "data": attr.label_list(allow_files = True, doc = "Files passed to the script, in order."),
        "script": attr.label(allow_single_file = [".py"], mandatory = True),
        "venv": attr.string(mandatory = True),
    },
    test = True,
    doc = "`script` run by the test-tools venv's Python (packages from tools/requirements-dev.txt), with `data` as arguments.",
)
