"""python_wheels_install_test: for every Python version a python_wheels target
was built for, pip-installs exactly that version's wheels plus the
Python-independent ones (`--no-index`) into a fresh venv of that version and
runs a check script there."""

load("//rules/private:providers.bzl", "PythonWheelSetInfo")
load("//rules/private/util:shell.bzl", "INSTALL_TEST_ATTRS", "install_test_header", "install_test_script", "shell_quote", "venv_install_check_lines")

def _python_wheels_install_test_impl(ctx):
    info = ctx.attr.wheels[PythonWheelSetInfo]
    if not info.by_version:
        fail("{}: {} built no per-Python wheels".format(ctx.label, ctx.attr.wheels.label))
    versions = ctx.attr.python_versions or sorted(info.by_version.keys())
    missing = [v for v in versions if v not in info.by_version]
    if missing:
        fail("{}: {} has no wheels for Python {} (it has {}): drop them from python_versions or build them (--//:python_versions)".format(
            ctx.label,
            ctx.attr.wheels.label,
            ", ".join(missing),
            ", ".join(sorted(info.by_version.keys())),
        ))
    lines = install_test_header("python_wheels_install_test", ctx.file.check, ctx.attr.distributions)
    all_files = list(info.independent) + ctx.files.extra_wheels + ctx.files.data
    runtimes = []
    for version in versions:
        wheels = info.independent + info.by_version[version] + ctx.files.extra_wheels
        all_files += info.by_version[version]
        py = info.pythons[version]
        interpreter = py.interpreter
        runtimes.append(py.runtime_files)
        if type(interpreter) == "File":
            all_files.append(interpreter)
        lines += [
            "",
            'links="$tmp/wheels-{v}"; rm -rf "$links"; mkdir -p "$links"'.format(v = version),
        ]
        lines += ['cp {} "$links/"'.format(shell_quote(f.short_path)) for f in wheels]
        lines += venv_install_check_lines(version, interpreter, ctx.attr.no_deps)
    lines.append('echo "PASS: Python {}"'.format(", ".join(versions)))
    return [install_test_script(ctx, lines, all_files, depset(transitive = runtimes))]

python_wheels_install_test = rule(
    implementation = _python_wheels_install_test_impl,
    attrs = INSTALL_TEST_ATTRS | {
        "data": attr.label_list(
            allow_files = True,
            doc = "More files for `check`, e.g. named in `args` as $(rootpath ...) (relative to $INSTALL_TEST_RUNFILES).",
        ),
        "extra_wheels": attr.label_list(
            allow_files = [".whl"],
            doc = "More wheels offered to pip in every version's venv (pip picks the compatible one), e.g. a dependency's per-version wheels.",
        ),
        "no_deps": attr.bool(
            doc = "Install only `distributions` (pip --no-deps): for wheels whose requirements cannot be offered.",
        ),
        "python_versions": attr.string_list(
            doc = "Test these versions of the set only (default: every version it was built for).",
        ),
        "wheels": attr.label(
            mandatory = True,
            providers = [PythonWheelSetInfo],
            doc = "A python_wheels target.",
        ),
    },
    test = True,
    doc = "pip-installs each version's wheel set into a venv of that version and runs `check`.",
)
