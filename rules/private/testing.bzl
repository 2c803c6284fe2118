"""wheel_install_test: installs wheels with pip into a fresh venv of each
Python version and runs a check script there."""

load(":shell.bzl", "INSTALL_TEST_ATTRS", "install_test_header", "install_test_script", "shell_quote", "venv_install_check_lines")

def _wheel_install_test_impl(ctx):
    wheels = ctx.files.wheels
    if not ctx.attr.interpreters:
        fail("{}: no Python interpreters given".format(ctx.label))
    lines = install_test_header("wheel_install_test", ctx.file.check, ctx.attr.distributions)
    lines.append('links="$tmp/wheels"; mkdir -p "$links"')
    lines += ['cp {} "$links/"'.format(shell_quote(f.short_path)) for f in wheels]
    for version, interpreter in sorted(ctx.attr.interpreters.items()):
        lines += venv_install_check_lines(version, interpreter)
    lines.append('echo "PASS: {} Python version(s)"'.format(len(ctx.attr.interpreters)))
    return [install_test_script(ctx, lines, wheels)]

wheel_install_test = rule(
    implementation = _wheel_install_test_impl,
    attrs = INSTALL_TEST_ATTRS | {
        "interpreters": attr.string_dict(doc = "Minor version -> interpreter path."),
        "wheels": attr.label_list(allow_files = [".whl"], doc = "Wheels offered to pip (--find-links)."),
    },
    test = True,
    doc = "pip-installs wheels (--no-index) into a venv per Python version and runs `check`.",
)
