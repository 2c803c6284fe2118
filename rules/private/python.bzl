"""Python toolchains per version and the settings that select them.

The Python version is configuration, not a repository environment variable:
`//rules/python:version` holds the version of the configuration a target is
built in ("3.12"), `//:python_versions` (a command-line flag) the versions
`//:wheels` fans out to. Rules that need Python facts (headers, SOABI,
EXT_SUFFIX, the cpXY tag) resolve `//rules/python:toolchain_type`; the
toolchains are declared by `local_python_repository` (one per interpreter,
each with `target_settings` on the version setting) and, last, a fallback
that carries no Python so that resolution never fails and the rule can say
what is wrong instead.
"""

load("@rocm_python//:versions.bzl", "PYTHON_VERSIONS", "SEARCHED")
load(":flags.bzl", "NO_PYTHON", "PYTHON_INDEPENDENT", "skipped_interpreters")
load(":providers.bzl", "PythonFactsInfo", "SettingInfo")

# Bazel >= 8 users get these from @rules_cc; on Bazel 7 they are globals.
_CcInfo = CcInfo  # buildifier: disable=native-cc-info

PYTHON_TOOLCHAIN_TYPE = Label("//rules/python:toolchain_type")

def _rocm_python_toolchain_impl(ctx):
    if not ctx.attr.version:
        # The fallback toolchain: resolution succeeds, python_facts() explains.
        return [platform_common.ToolchainInfo(python = None)]
    for key in ("interpreter", "ext_suffix", "python_tag"):
        if not getattr(ctx.attr, key):
            fail("{}: `{}` is required when `version` is set".format(ctx.label, key))
    if not ctx.attr.headers:
        fail("{}: `headers` is required when `version` is set".format(ctx.label))
    facts = PythonFactsInfo(
        version = ctx.attr.version,
        full_version = ctx.attr.full_version or ctx.attr.version,
        interpreter = ctx.attr.interpreter,
        headers = ctx.attr.headers[_CcInfo],
        soabi = ctx.attr.soabi,
        ext_suffix = ctx.attr.ext_suffix,
        python_tag = ctx.attr.python_tag,
        abi_tag = ctx.attr.abi_tag or ctx.attr.python_tag,
    )
    return [platform_common.ToolchainInfo(python = facts)]

rocm_python_toolchain = rule(
    implementation = _rocm_python_toolchain_impl,
    attrs = {
        "abi_tag": attr.string(doc = "Wheel ABI tag; default: python_tag."),
        "ext_suffix": attr.string(doc = "sysconfig EXT_SUFFIX."),
        "full_version": attr.string(doc = "Full version, e.g. 3.12.4; default: version."),
        "headers": attr.label(providers = [_CcInfo], doc = "cc_library with the Python headers."),
        "interpreter": attr.string(doc = "Absolute interpreter path (used by tests, never by build actions)."),
        "python_tag": attr.string(doc = "Wheel Python tag, e.g. cp312."),
        "soabi": attr.string(doc = "sysconfig SOABI."),
        "version": attr.string(doc = "Minor version, e.g. 3.12; empty declares the no-Python fallback."),
    },
    doc = "Declares one CPython installation for //rules/python:toolchain_type.",
)

def python_toolchain_attrs():
    """Attributes every rule calling python_facts() needs."""
    return {
        "_python_version": attr.label(
            default = Label("//rules/python:version"),
            providers = [SettingInfo],
            doc = "The configuration's Python version, to explain a missing toolchain.",
        ),
    }

def python_facts(ctx):
    """The PythonFactsInfo of the configuration's Python version, or a clear failure."""
    requested = ctx.attr._python_version[SettingInfo].value
    facts = ctx.toolchains[str(PYTHON_TOOLCHAIN_TYPE)].python
    if facts == None:
        if requested in (NO_PYTHON, PYTHON_INDEPENDENT):
            fail(("{} is built per Python version but no version is selected here. Build it " +
                  "through a python_wheels target (e.g. //:wheels), or directly with " +
                  "--//rules/python:version=3.12.").format(ctx.label))
        fail(("{}: Python {} is selected but no toolchain provides it: no interpreter for it " +
              "was found in {} (found: {}). Install it (e.g. `pyenv install {}`) or pass " +
              "python_interpreters to rules_rocm_dependencies().{}").format(
            ctx.label,
            requested,
            SEARCHED,
            ", ".join(PYTHON_VERSIONS) or "none",
            requested,
            skipped_interpreters(),
        ))
    if facts.version != requested:
        fail("{}: the Python toolchain for {} resolved for version setting '{}'; its target_settings are wrong".format(
            ctx.label,
            facts.version,
            requested,
        ))
    return facts

def per_python_compatible_with():
    """The target_compatible_with of per-version targets.

    They are skipped by `bazel build //...` in configurations that select no
    Python (they are built through //:wheels).
    """
    return select({
        str(Label("//rules/python:no_python")): [str(Label(_NO_VERSION_CONSTRAINT))],
        str(Label("//rules/python:python_independent")): [str(Label(_INDEPENDENT_CONSTRAINT))],
        "//conditions:default": [],
    })

# No platform has these (like @platforms//:incompatible), and Bazel's error
# for an explicitly requested incompatible target names only the constraint:
# the names say what is wrong and how to fix it.
_NO_VERSION_CONSTRAINT = "//rules/python:no_Python_version_selected.Build_per-Python_targets_through_python_wheels,_or_directly_with_a_version_setting_(docs/python.md)"
_INDEPENDENT_CONSTRAINT = "//rules/python:Python-independent_code_depends_on_a_per-Python_target.Move_that_dependency_to_a_per-Python_target_(docs/python.md)"
