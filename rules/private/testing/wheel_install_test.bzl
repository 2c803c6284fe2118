"""wheel_install_test: installs wheels with pip into a fresh venv of each
Python version and runs a check script there."""

load("//rules/private:providers.bzl", "PythonFactsInfo")
load("//rules/private/settings:transitions.bzl", "ALLOWLIST_ATTRS", "python_versions_attr_split")
load("//rules/private/util:python_versions.bzl", "is_minor_version")
load("//rules/private/util:shell.bzl", "INSTALL_TEST_ATTRS", "install_test_header", "install_test_script", "shell_quote", "venv_install_check_lines")

def _interpreters(ctx):
    """(version -> interpreter, runtime depsets): the explicit ones, else rules_python's per version."""
    if ctx.attr.interpreters:
        return dict(ctx.attr.interpreters), []
    found = {}
    runtimes = []
    for version, targets in ctx.split_attr._pythons.items():
        py = targets[PythonFactsInfo] if type(targets) != "list" else targets[0][PythonFactsInfo]
        found[version] = py.interpreter
        runtimes.append(py.runtime_files)
    return found, runtimes

def _check_versions(ctx):
    if ctx.attr.interpreters and ctx.attr.python_versions:
        fail("{}: give `interpreters` (explicit paths) or `python_versions` (rules_python's interpreters), not both".format(ctx.label))
    for v in ctx.attr.python_versions:
        if not is_minor_version(v):
            fail("{}: python_versions entry '{}' is not a minor version such as \"3.12\"".format(ctx.label, v))

def _wheel_install_test_impl(ctx):
    _check_versions(ctx)
    wheels = ctx.files.wheels
    interpreters, runtimes = _interpreters(ctx)
    if not interpreters:
        fail("{}: no Python versions to test".format(ctx.label))
    lines = install_test_header("wheel_install_test", ctx.file.check, ctx.attr.distributions)
    lines.append('links="$tmp/wheels"; mkdir -p "$links"')
    lines += ['cp {} "$links/"'.format(shell_quote(f.short_path)) for f in wheels]
    files = list(wheels)
    for version, interpreter in sorted(interpreters.items()):
        lines += venv_install_check_lines(version, interpreter)
        if type(interpreter) == "File":
            files.append(interpreter)
    lines.append('echo "PASS: {} Python version(s)"'.format(len(interpreters)))
    return [install_test_script(ctx, lines, files, depset(transitive = runtimes))]

wheel_install_test = rule(
    implementation = _wheel_install_test_impl,
    attrs = INSTALL_TEST_ATTRS | ALLOWLIST_ATTRS | {
        "interpreters": attr.string_dict(doc = "Minor version -> interpreter path; default: rules_python's interpreter of each of `python_versions`."),
        "python_versions": attr.string_list(doc = "Minor versions to test with rules_python's interpreters; default: every declared version (--//:python_versions=all)."),
        "wheels": attr.label_list(allow_files = [".whl"], doc = "Wheels offered to pip (--find-links)."),
        "_pythons": attr.label(
            default = Label("//rules/python:current_python"),
            cfg = python_versions_attr_split,
            providers = [PythonFactsInfo],
        ),
    },
    test = True,
    doc = "pip-installs wheels (--no-index) into a venv per Python version and runs `check`.",
)
