"""Per-Python wheels and the set rule that builds them for every version.

- rocm_python_wheel: a wheel whose tags (cpXY-cpXY-<platform>) come from the
  configuration's Python toolchain, never from the BUILD file.
- python_wheels: the top of the graph (//:wheels). `per_python` goes through
  the split transition (one configuration per --//:python_versions entry),
  `python_independent` through the reset transition (one configuration for
  everything else, shared with the shared libraries the extensions link).
"""

load(":providers.bzl", "PythonWheelInfo", "PythonWheelSetInfo", "WheelInfo")
load(
    ":python.bzl",
    "PYTHON_TOOLCHAIN_TYPE",
    "per_python_compatible_with",
    "python_facts",
    "python_toolchain_attrs",
)
load(":toolchain.bzl", "ROCM_WHEEL_TOOLCHAIN_TYPE", "rocm_wheel_tool")
load(":transitions.bzl", "ALLOWLIST_ATTRS", "python_reset_transition", "python_split_transition")
load(":wheel.bzl", "WHEEL_ATTRS", "build_wheel", "map_files")

def _norm_prefix(p):
    p = p.strip("/")
    return p + "/" if p else ""

def _python_wheel_impl(ctx):
    py = python_facts(ctx)
    tag = "{}-{}-{}".format(py.python_tag, py.abi_tag, ctx.attr.platform_tag)
    prefix = _norm_prefix(ctx.attr.package_prefix)
    entries = map_files(ctx, ctx.attr.srcs, ctx.attr.strip_prefix, prefix)
    entries += map_files(ctx, ctx.attr.shared_srcs, ctx.attr.strip_prefix, prefix)
    providers = build_wheel(ctx, tag, entries)
    return providers + [PythonWheelInfo(python = py)]

_WHEEL_ATTRS = {k: v for k, v in WHEEL_ATTRS.items() if k not in ("python_tag", "abi_tag", "platform_tag")}

_rocm_python_wheel = rule(
    implementation = _python_wheel_impl,
    attrs = dict(
        _WHEEL_ATTRS,
        platform_tag = attr.string(
            default = "linux_x86_64",
            doc = "Platform tag, e.g. manylinux_2_28_x86_64 (the Python and ABI tags come from the configuration).",
        ),
        shared_srcs = attr.label_list(
            allow_files = True,
            cfg = python_reset_transition,
            doc = "Files or wheel_files targets that do not depend on Python (shared libraries the " +
                  "extensions link): configured once and copied into every version's wheel.",
        ),
        **dict(python_toolchain_attrs(), **ALLOWLIST_ATTRS)
    ),
    toolchains = [str(ROCM_WHEEL_TOOLCHAIN_TYPE), str(PYTHON_TOOLCHAIN_TYPE)],
    doc = "A wheel for the configuration's Python version, tagged cpXY-cpXY-<platform_tag>.",
)

def rocm_python_wheel(name, **kwargs):
    """A wheel for the configuration's Python version (see python_wheels).

    Args:
      name: target name.
      **kwargs: rocm_wheel's attributes (without python_tag/abi_tag) plus shared_srcs.
    """
    for k in ("python_tag", "abi_tag"):
        if k in kwargs:
            fail("rocm_python_wheel {}: `{}` comes from the configuration's Python toolchain; remove it".format(name, k))
    if "target_compatible_with" not in kwargs:
        kwargs["target_compatible_with"] = per_python_compatible_with()
    _rocm_python_wheel(name = name, **kwargs)

def _wheel_files_of(target, owner):
    if WheelInfo in target:
        return [target[WheelInfo].wheel]
    files = [f for f in target[DefaultInfo].files.to_list() if f.extension == "whl"]
    if not files:
        fail("{}: {} provides no wheel".format(owner, target.label))
    return files

def _python_wheels_impl(ctx):
    by_version = {}
    interpreters = {}
    for version, targets in sorted(ctx.split_attr.per_python.items()):
        files = []
        for t in targets:
            if PythonWheelInfo not in t:
                fail("{}: per_python entry {} is not a rocm_python_wheel; put Python-independent wheels in python_independent".format(ctx.label, t.label))
            py = t[PythonWheelInfo].python
            if py.version != version:
                fail("{}: {} was built for Python {} in the {} configuration".format(ctx.label, t.label, py.version, version))
            interpreters[version] = py.interpreter
            files.extend(_wheel_files_of(t, ctx.label))
        by_version[version] = files
    independent = []
    for t in ctx.attr.python_independent:
        if PythonWheelInfo in t:
            fail("{}: {} is a per-Python wheel; list it in per_python".format(ctx.label, t.label))
        independent.extend(_wheel_files_of(t, ctx.label))
    all_files = list(independent)
    for v in by_version:
        all_files.extend(by_version[v])
    return [
        DefaultInfo(files = depset(all_files)),
        PythonWheelSetInfo(
            by_version = by_version,
            independent = independent,
            interpreters = interpreters,
        ),
    ]

python_wheels = rule(
    implementation = _python_wheels_impl,
    attrs = dict(
        per_python = attr.label_list(
            cfg = python_split_transition,
            doc = "rocm_python_wheel targets: built once per version in --//:python_versions.",
        ),
        python_independent = attr.label_list(
            cfg = python_reset_transition,
            doc = "Wheels that do not depend on Python (the pjrt plugin, pure-Python wheels): built once.",
        ),
        **ALLOWLIST_ATTRS
    ),
    doc = "Every wheel: per-Python ones for each version in --//:python_versions, the rest once.",
)

def _wheel_shared_library_impl(ctx):
    lib = ctx.file.lib
    out = ctx.actions.declare_file(ctx.label.name + "/" + lib.basename)
    if ctx.attr.runpath:
        args = ["rpath", "set", lib.path, "--rpath", ":".join(ctx.attr.runpath), "--output", out.path]
    else:
        args = ["rpath", "remove", lib.path, "--output", out.path]
    ctx.actions.run(
        executable = rocm_wheel_tool(ctx),
        arguments = args,
        inputs = [lib],
        outputs = [out],
        mnemonic = "RocmWheelRpath",
        progress_message = "Setting the RUNPATH of %s for its wheel" % out.short_path,
    )
    return [DefaultInfo(files = depset([out]))]

wheel_shared_library = rule(
    implementation = _wheel_shared_library_impl,
    attrs = dict(
        lib = attr.label(
            allow_single_file = [".so"],
            mandatory = True,
            cfg = python_reset_transition,
            doc = "A Python-independent shared library (configured once for all Python versions).",
        ),
        runpath = attr.string_list(doc = "New DT_RUNPATH entries ($ORIGIN-relative); empty removes it."),
        **ALLOWLIST_ATTRS
    ),
    cfg = python_reset_transition,
    toolchains = [str(ROCM_WHEEL_TOOLCHAIN_TYPE)],
    doc = "A copy of a shared library with the RUNPATH it needs at its place inside a wheel " +
          "(`<name>/<basename>`), rewritten by `rocm-wheel rpath`.",
)
