"""Per-Python wheels and the set rule that builds them for every version.

- rocm_python_wheel: a wheel whose tags (cpXY-cpXY-<platform>) come from the
  configuration's Python toolchain, never from the BUILD file.
- python_wheels: the top of the graph (//:wheels). `per_python` goes through
  the split transition (one configuration per --//:python_versions entry),
  `python_independent` through the reset transition (one configuration for
  everything else, shared with the shared libraries the extensions link),
  `wheel_sets` as they configure themselves, `per_toolkit` wheel sets once
  per ROCm toolkit of --//rocm:toolkits (crossed with the Python versions
  inside them).
"""

load("//rules/private:providers.bzl", "KpackWheelInfo", "PythonWheelInfo", "PythonWheelSetInfo", "SettingInfo", "WheelInfo")
load("//rules/private/settings:transitions.bzl", "ALLOWLIST_ATTRS", "python_reset_transition", "python_split_transition", "toolkit_split_transition")
load(":kpack_wheels.bzl", "device_wheels", "host_with_extras", "kpack_aspect", "variant_wheel")
load(
    ":python_toolchain.bzl",
    "per_python_compatible_with",
    "python_facts",
    "python_toolchain_attrs",
    "python_toolchains",
)
load(":wheel.bzl", "rocm_wheel_lib")

def _python_wheel_impl(ctx):
    py = python_facts(ctx)
    tag = "{}-{}-{}".format(py.python_tag, py.abi_tag, ctx.attr.platform_tag)
    entries = rocm_wheel_lib.entries(ctx, ctx.attr.srcs) + rocm_wheel_lib.entries(ctx, ctx.attr.shared_srcs)
    sources = ctx.attr.srcs + ctx.attr.shared_srcs
    return rocm_wheel_lib.build(ctx, tag, entries, ctx.attr.platform_tag, sources) + [PythonWheelInfo(python = py)]

# The Python and ABI tags come from the configuration's Python toolchain.
_PYTHON_WHEEL_TAG_ATTRS = {
    "platform_tag": attr.string(
        default = "linux_x86_64",
        doc = "Platform tag, e.g. manylinux_2_28_x86_64 (the Python and ABI tags come from the configuration).",
    ),
}

_rocm_python_wheel = rule(
    implementation = _python_wheel_impl,
    attrs = dict(
        rocm_wheel_lib.attrs_with_tags(_PYTHON_WHEEL_TAG_ATTRS),
        shared_srcs = attr.label_list(
            allow_files = True,
            aspects = [kpack_aspect],
            cfg = python_reset_transition,
            doc = "Files or wheel_files targets that do not depend on Python (shared libraries the " +
                  "extensions link): configured once and copied into every version's wheel.",
        ),
        **dict(python_toolchain_attrs(), **ALLOWLIST_ATTRS)
    ),
    toolchains = rocm_wheel_lib.toolchains + python_toolchains(),
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

def _per_python_wheels(ctx):
    """Version -> wheel Files of the split `per_python`, and version -> PythonFactsInfo."""
    by_version = {}
    pythons = {}
    for version, targets in sorted(ctx.split_attr.per_python.items()):
        files = []
        for t in targets:
            if PythonWheelInfo not in t:
                fail("{}: per_python entry {} is not a rocm_python_wheel; put Python-independent wheels in python_independent".format(ctx.label, t.label))
            py = t[PythonWheelInfo].python
            if py.version != version:
                fail("{}: {} was built for Python {} in the {} configuration".format(ctx.label, t.label, py.version, version))
            pythons[version] = py
            files.extend(_wheel_files_of(t, ctx.label))
        by_version[version] = files
    return by_version, pythons

def _independent_wheels(ctx, variants):
    """The Python-independent wheels; their variant wheels appended to `variants`."""
    independent = []
    for t in ctx.attr.python_independent:
        if PythonWheelInfo in t:
            fail("{}: {} is a per-Python wheel; list it in per_python".format(ctx.label, t.label))
        if KpackWheelInfo in t:
            # Written here: --//:device_wheel_level does not reach the
            # Python-independent configuration (nor do device wheels, which
            # variant wheels need).
            devices = device_wheels(ctx, [t[KpackWheelInfo]], "_kpack")
            host = host_with_extras(ctx, t[WheelInfo].wheel, devices, "_kpack")
            independent.append(host)
            independent.extend(devices)
            variants.extend([v for v in [variant_wheel(ctx, host, devices, "_kpack")] if v])
        else:
            independent.extend(_wheel_files_of(t, ctx.label))
    return independent

def _per_python_device_wheels(ctx, by_version, variants):
    """The device wheels of the per-Python kpack wheels: once per distribution for every version.

    Their archives hold Python-independent code objects (hip_library through
    python_independent_deps), the same files in every version's wheel. Each
    version's host wheel gets the extras that name them, and its variant
    wheel (appended to `variants`).

    Returns:
      (device wheel Files, `by_version` with those host wheels replaced)
    """
    by_distribution = {}
    for targets in ctx.split_attr.per_python.values():
        for t in targets:
            if KpackWheelInfo in t:
                info = t[KpackWheelInfo]
                by_distribution.setdefault((info.distribution, info.version), []).append((info, t[WheelInfo].wheel))
    wheels = []
    hosts = {}
    for _, pairs in sorted(by_distribution.items()):
        devices = device_wheels(ctx, [info for info, _ in pairs], "_kpack")
        wheels.extend(devices)
        for _, host in pairs:
            hosts[host.path] = host_with_extras(ctx, host, devices, "_kpack")
            variants.extend([v for v in [variant_wheel(ctx, hosts[host.path], devices, "_kpack")] if v])
    return wheels, {v: [hosts.get(f.path, f) for f in files] for v, files in by_version.items()}

def _merge_wheel_set(s, by_version, pythons, independent, variants):
    independent.extend(s.independent)
    variants.extend(getattr(s, "variants", None) or [])
    for version, files in s.by_version.items():
        by_version[version] = by_version.get(version, []) + files
        pythons.setdefault(version, s.pythons[version])

def _merge_wheel_sets(ctx, by_version, pythons, independent, variants):
    """Adds the wheels of `wheel_sets` and of `per_toolkit` (once per toolkit).

    Returns wheel path -> the toolkit it was built with (per_toolkit's).
    """
    for t in ctx.attr.wheel_sets:
        _merge_wheel_set(t[PythonWheelSetInfo], by_version, pythons, independent, variants)
    toolkit_of = {}
    for toolkit, targets in sorted(ctx.split_attr.per_toolkit.items()):
        for t in targets:
            s = t[PythonWheelSetInfo]
            _merge_wheel_set(s, by_version, pythons, independent, variants)
            for f in s.independent + (getattr(s, "variants", None) or []) + [f for files in s.by_version.values() for f in files]:
                toolkit_of[f.path] = toolkit
    return toolkit_of

def _check_unique_names(label, files, toolkit_of):
    names = {}
    for f in files:
        other = names.get(f.basename)
        if other == f:
            continue
        if not other:
            names[f.basename] = f
            continue
        a, b = toolkit_of.get(other.path), toolkit_of.get(f.path)
        if a and b and a != b:
            fail(("{}: ROCm toolkits {} and {} both build {}: wheels are named after the ROCm major " +
                  "(jax-rocm$(ROCM_MAJOR)-...), so toolkits of one major collide; list one toolkit per " +
                  "ROCm line in --@rules_rocm//rocm:toolkits").format(label, a, b, f.basename))
        fail("{}: two wheels named {} ({} and {}): give one of them another distribution name".format(
            label,
            f.basename,
            other.short_path,
            f.short_path,
        ))

def _python_wheels_impl(ctx):
    # Variant wheels (--//:wheel_variants) apart: pip cannot install them,
    # so install tests take the other lists only.
    variants = []
    by_version, pythons = _per_python_wheels(ctx)
    per_python_devices, by_version = _per_python_device_wheels(ctx, by_version, variants)
    independent = _independent_wheels(ctx, variants) + per_python_devices
    toolkit_of = _merge_wheel_sets(ctx, by_version, pythons, independent, variants)
    all_files = independent + variants
    for v in by_version:
        all_files.extend(by_version[v])
    _check_unique_names(ctx.label, all_files, toolkit_of)
    return [
        DefaultInfo(files = depset(all_files)),
        PythonWheelSetInfo(
            by_version = by_version,
            independent = independent,
            pythons = pythons,
            variants = variants,
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
        per_toolkit = attr.label_list(
            cfg = toolkit_split_transition,
            providers = [PythonWheelSetInfo],
            doc = "python_wheels sets that depend on ROCm: built once per toolkit in " +
                  "--@rules_rocm//rocm:toolkits (default: the one --@rules_rocm//rocm:toolkit selects), " +
                  "each with its own compiler, libraries and $(ROCM_MAJOR); the other attributes' " +
                  "wheels are built once.",
        ),
        wheel_sets = attr.label_list(
            providers = [PythonWheelSetInfo],
            doc = "Other python_wheels sets (or rules wrapping one in a transition of their own, e.g. " +
                  "compiler options or the Python versions a project supports) whose wheels join this one.",
        ),
        _compression = attr.label(default = Label("//:hip_bundle_compression"), providers = [SettingInfo]),
        _device_wheel_level = attr.label(default = Label("//:device_wheel_level"), providers = [SettingInfo]),
        _wheel_variants = attr.label(default = Label("//:wheel_variants"), providers = [SettingInfo]),
        **ALLOWLIST_ATTRS
    ),
    # Device wheels (--//:hip_device_code=kpack) and variant wheels are written here, once for every Python version.
    toolchains = rocm_wheel_lib.toolchains,
    doc = "Every wheel: per-Python ones for each version in --//:python_versions, the rest once.",
)
