"""The Python of a configuration, from rules_python's toolchains.

rules_python is the Python toolchain: its python_version flag
(`@rules_python//python/config_settings:python_version`) is the version of a
configuration, which python_wheels' transitions set per `--//:python_versions`
entry and rules_python's own rules (`py_test(python_version = ...)`) set too.
Rules that need Python facts resolve rules_python's runtime toolchain and
compile against `@rules_python//python/cc:current_py_cc_headers`;
`python_facts()` turns both into a PythonFactsInfo (version, headers, SOABI,
EXT_SUFFIX, wheel tags) and says what is wrong when they do not fit.
"""

load("//rules/private:providers.bzl", "PythonFactsInfo", "SettingInfo")
load("//rules/private/settings:flags.bzl", "PYTHON_INDEPENDENT", "PYTHON_VERSION_SETTING", "declared_python_versions")

# Bazel >= 8 users get these from @rules_cc; on Bazel 7 they are globals.
_CcInfo = CcInfo  # buildifier: disable=native-cc-info

PYTHON_TOOLCHAIN_TYPE = Label("@rules_python//python:toolchain_type")

def python_toolchains():
    """The `toolchains` of rules calling python_facts(): optional, so a missing one is explained."""
    return [config_common.toolchain_type(PYTHON_TOOLCHAIN_TYPE, mandatory = False)]

def python_toolchain_attrs():
    """Attributes every rule calling python_facts() needs."""
    return {
        "_py_cc_headers": attr.label(
            default = Label("@rules_python//python/cc:current_py_cc_headers"),
            providers = [_CcInfo],
            doc = "The selected Python's headers (rules_python's C/C++ toolchain).",
        ),
        "_py_freethreaded": attr.label(
            default = Label("//rules/python:freethreaded_setting"),
            doc = "rules_python's py_freethreaded flag as a bool: whether the configuration's Python is free-threaded.",
        ),
        "_python_version": attr.label(
            default = Label(PYTHON_VERSION_SETTING),
            doc = "rules_python's python_version flag: the configuration's Python version.",
        ),
        "_target_aarch64": attr.label(default = Label("@platforms//cpu:aarch64")),
        "_target_x86_64": attr.label(default = Label("@platforms//cpu:x86_64")),
    }

def _multiarch(ctx):
    """The Debian-style multiarch triple CPython names its extensions with."""
    for attr_name, triple in (("_target_x86_64", "x86_64-linux-gnu"), ("_target_aarch64", "aarch64-linux-gnu")):
        if ctx.target_platform_has_constraint(getattr(ctx.attr, attr_name)[platform_common.ConstraintValueInfo]):
            return triple
    fail("{}: per-Python targets are built for Linux on x86_64 or aarch64 only".format(ctx.label))

def _requested_version(ctx):
    return ctx.attr._python_version[config_common.FeatureFlagInfo].value

def _requested_freethreaded(ctx):
    return ctx.attr._py_freethreaded[SettingInfo].value

def _runtime(ctx, requested):
    toolchain = ctx.toolchains[PYTHON_TOOLCHAIN_TYPE]
    runtime = toolchain.py3_runtime if toolchain else None
    if runtime == None:
        fail(("{}: Python {} is selected but no rules_python toolchain provides it. Register one: " +
              "python.toolchain(python_version = \"{}\") in MODULE.bazel, or a local runtime " +
              "(docs/python.md).").format(ctx.label, requested, requested.rstrip("t")))
    return runtime

def _minor(version):
    return ".".join(version.split(".")[:2])

def python_facts(ctx):
    """The PythonFactsInfo of the configuration's Python version, or a clear failure."""
    requested = _requested_version(ctx)
    if requested == PYTHON_INDEPENDENT:
        fail(("{} is built per Python version but this configuration is Python-independent: " +
              "move the dependency on it into a per-Python target (docs/python.md).").format(ctx.label))
    freethreaded = _requested_freethreaded(ctx)

    # The --//:python_versions entry: "3.14t" for a free-threaded 3.14.
    entry = _minor(requested) + ("t" if freethreaded else "")
    runtime = _runtime(ctx, entry)
    info = runtime.interpreter_version_info
    version = "{}.{}".format(info.major, info.minor)
    abi_flags = getattr(runtime, "abi_flags", "") or ""
    resolved = version + ("t" if "t" in abi_flags else "")
    if resolved != entry:
        fail(("{}: Python {} is selected but the rules_python toolchain that resolved is Python {} " +
              "(a toolchain that ignores the version or py_freethreaded matched). Register a toolchain " +
              "for {} (docs/python.md).").format(ctx.label, entry, resolved, entry))
    tag = "cp{}{}".format(info.major, info.minor)
    soabi = "cpython-{}{}{}-{}".format(info.major, info.minor, abi_flags, _multiarch(ctx))
    return PythonFactsInfo(
        version = entry,
        full_version = "{}.{}".format(version, info.micro) if info.micro != None else version,
        interpreter = runtime.interpreter or runtime.interpreter_path,
        runtime_files = runtime.files or depset(),
        headers = ctx.attr._py_cc_headers[_CcInfo],
        soabi = soabi,
        ext_suffix = "." + soabi + ".so",
        python_tag = tag,
        abi_tag = tag + abi_flags,
    )

def _current_python_impl(ctx):
    if _requested_version(ctx) == PYTHON_INDEPENDENT:
        # Reached only by a test given explicit interpreters, which reads nothing here.
        return [PythonFactsInfo(version = "")]
    return [python_facts(ctx)]

current_python = rule(
    implementation = _current_python_impl,
    attrs = python_toolchain_attrs(),
    toolchains = python_toolchains(),
    doc = "The configuration's PythonFactsInfo (//rules/python:current_python), for tests that run its interpreter.",
)

def per_python_compatible_with():
    """The target_compatible_with of per-version targets.

    They build in any configuration with a Python version (rules_python's
    default one at the top level), never in the Python-independent one.
    """
    return select({
        str(Label("//rules/python:python_independent")): [str(Label(_INDEPENDENT_CONSTRAINT))],
        "//conditions:default": [],
    })

# No platform has this (like @platforms//:incompatible), and Bazel's error
# for an explicitly requested incompatible target names only the constraint:
# the name says what is wrong and how to fix it.
_INDEPENDENT_CONSTRAINT = "//rules/python:No_Python_version_in_this_configuration.Build_per-Python_targets_through_python_wheels_or_set_the_rules_python_python_version_flag_(docs/python.md)"

def _rocm_python_toolchain_impl(ctx):
    fail(("{}: rocm_python_toolchain is gone: rules_rocm takes Python from rules_python's " +
          "toolchains. Register the interpreter with rules_python instead (python.toolchain, or " +
          "local_runtime_repo + local_runtime_toolchains_repo for an installed one); " +
          "docs/python.md, \"Migrating\". Declared versions: {}.").format(ctx.label, ", ".join(declared_python_versions())))

rocm_python_toolchain = rule(
    implementation = _rocm_python_toolchain_impl,
    attrs = {
        "abi_tag": attr.string(doc = "Deprecated."),
        "ext_suffix": attr.string(doc = "Deprecated."),
        "full_version": attr.string(doc = "Deprecated."),
        "headers": attr.label(doc = "Deprecated."),
        "interpreter": attr.string(doc = "Deprecated."),
        "python_tag": attr.string(doc = "Deprecated."),
        "soabi": attr.string(doc = "Deprecated."),
        "version": attr.string(doc = "Deprecated."),
    },
    doc = "Deprecated: fails, naming rules_python's replacement (docs/python.md).",
)
