"""A test run under one rules_python Python version (its python_version flag)."""

_PYTHON_VERSION = "@rules_python//python/config_settings:python_version"

def _set_version_impl(_settings, attr):
    return {_PYTHON_VERSION: attr.python_version}

_set_version = transition(
    implementation = _set_version_impl,
    inputs = [],
    outputs = [_PYTHON_VERSION],
)

def _python_version_test_impl(ctx):
    test = ctx.attr.test[0]
    exe = ctx.actions.declare_file(ctx.label.name)
    ctx.actions.symlink(output = exe, target_file = test[DefaultInfo].files_to_run.executable, is_executable = True)
    return [DefaultInfo(
        executable = exe,
        runfiles = ctx.runfiles([exe]).merge(test[DefaultInfo].default_runfiles),
    )]

python_version_test = rule(
    implementation = _python_version_test_impl,
    attrs = {
        "python_version": attr.string(mandatory = True, doc = "rules_python's python_version for `test` and its deps."),
        "test": attr.label(mandatory = True, cfg = _set_version, executable = True, doc = "The test, built for `python_version`."),
    },
    test = True,
    doc = "Runs `test` built with --@rules_python//python/config_settings:python_version=<python_version>.",
)
