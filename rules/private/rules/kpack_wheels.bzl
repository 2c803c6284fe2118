"""kpack packaging (--//:hip_device_code=kpack, docs/kpack.md): the wheel side.

hip_library writes host objects whose fat-binary wrapper (`HIPK`) points at a
marker, and keeps each source's per-target code objects apart
(HipInfo.kpack_kernels). Here:

- kpack_aspect collects those code objects through everything a wheel's
  files are built from (wheel_files, cc_binary, python_extension, ...);
- kpack_wheel_info decides where the wheel's archives go;
- device_wheels writes one archive per GPU target (`rocm-wheel kpack
  archive`) and one device wheel per target, sub-family or family
  (--//:device_wheel_level) around them, named as rocm-bootstrap's
  device_dist_name: `<device_prefix>-<bundle>` (default prefix
  `<distribution>-device`);
- host_with_extras gives the host wheel one extra per GPU target its device
  wheels serve, `device-<target>`, and `device-all` (`rocm-wheel
  device-extras`, AMD's rule), where
  the level is known: in the wheel's own configuration, or in
  python_wheels above the configurations that pin it;
- variant_wheel writes it again as a variant wheel (--//:wheel_variants,
  `rocm-wheel variant`), in the same places.
"""

load("//rules/private:providers.bzl", "HipInfo", "KpackKernelsInfo", "KpackWheelInfo", "SettingInfo")
load("//rules/private/actions:rocm_wheel.bzl", "rocm_wheel_build", "rocm_wheel_device_extras", "rocm_wheel_kpack_archive", "rocm_wheel_variant")
load("//rules/private/data:gfx_families.bzl", "BOOTSTRAP_LEVELS", "bootstrap_bundle", "sort_gfx_targets")
load("//rules/private/util:wheel_names.bzl", "is_shared_object", "normalize_distribution", "wheel_file_name")

# Attributes through which a wheel's binaries reach hip_library targets.
_PROPAGATE = ["srcs", "deps", "implementation_deps", "shared_srcs", "shared_libs", "python_independent_deps", "lib", "actual", "dynamic_deps"]

def _kpack_aspect_impl(target, ctx):
    direct = target[HipInfo].kpack_kernels if HipInfo in target else []
    transitive = []
    for name in _PROPAGATE:
        value = getattr(ctx.rule.attr, name, None)
        for dep in (value if type(value) == "list" else [value]):
            if type(dep) == "Target" and KpackKernelsInfo in dep:
                transitive.append(dep[KpackKernelsInfo].kernels)
    return [KpackKernelsInfo(kernels = depset(direct, transitive = transitive))]

kpack_aspect = aspect(
    implementation = _kpack_aspect_impl,
    attr_aspects = _PROPAGATE,
    doc = "The kpack code objects (HipInfo.kpack_kernels) of every hip_library a target's files are built from.",
)

# The archives are searched for from each binary's directory up to three
# levels above it (actions/hip_compile.bzl, KPACK_SEARCH_PATHS).
_MAX_DEPTH = 3

def _common_dir(dirs):
    common = dirs[0].split("/") if dirs[0] else []
    for d in dirs[1:]:
        parts = d.split("/") if d else []
        n = 0
        for i in range(min(len(common), len(parts))):
            if common[i] != parts[i]:
                break
            n = i + 1
        common = common[:n]
    return "/".join(common)

def kpack_wheel_info(ctx, wheel, entries, targets, device_prefix):
    """KpackWheelInfo of a host wheel, or None when it is not a kpack build or has no kpack code.

    Args:
      ctx: the wheel rule's context (its `_device_code`, `kpack_dir`, $(ROCM_SDK_VERSION)).
      wheel: struct(distribution (expanded), version (as the wheel has it), platform_tag).
      entries: list of struct(path, file): the wheel's files.
      targets: the attribute targets the files came from (with KpackKernelsInfo).
      device_prefix: the device wheels' name prefix (Make variables expanded), or "" for `<distribution>-device`.
    """
    distribution, platform_tag = wheel.distribution, wheel.platform_tag
    if ctx.attr._device_code[SettingInfo].value != "kpack":
        return None
    kernels = depset(transitive = [t[KpackKernelsInfo].kernels for t in targets if KpackKernelsInfo in t])
    if not kernels.to_list():
        return None
    binaries = [e.path for e in entries if is_shared_object(e.path) and ".data/" not in e.path]
    kpack_dir = ctx.attr.kpack_dir
    if not kpack_dir:
        kpack_dir = _common_dir([b.rpartition("/")[0] for b in binaries])
        if not kpack_dir:
            fail(("{}: with --//:hip_device_code=kpack the archives go in the .kpack/ directory of a package; " +
                  "the wheel's shared objects ({}) share none: set kpack_dir").format(ctx.label, ", ".join(binaries)))
    for b in binaries:
        d = b.rpartition("/")[0]
        if d != kpack_dir and not d.startswith(kpack_dir + "/"):
            fail("{}: {} is not below kpack_dir '{}', whose .kpack/ its device code is searched in".format(ctx.label, b, kpack_dir))
        depth = len(d.split("/")) - len(kpack_dir.split("/"))
        if depth > _MAX_DEPTH:
            fail("{}: {} is {} directories below kpack_dir '{}'; the loader looks at most {} up: set kpack_dir closer".format(ctx.label, b, depth, kpack_dir, _MAX_DEPTH))
    sdk_version = ctx.var.get("ROCM_SDK_VERSION")
    if sdk_version == None:
        fail("{}: kpack device wheels pin the toolkit's TheRock SDK release, if it has one: add toolchains = [\"@rules_rocm//rocm:version\"]".format(ctx.label))
    device_prefix = device_prefix or distribution + "-device"
    if normalize_distribution(device_prefix) == normalize_distribution(distribution):
        fail("{}: device_prefix '{}' is the wheel's own name; its device wheels need names of their own (default: '{}-device')".format(ctx.label, device_prefix, distribution))
    fields = dict(
        distribution = distribution,
        device_prefix = device_prefix,
        version = wheel.version,
        platform_tag = platform_tag,
        kpack_dir = kpack_dir,
        kernels = kernels,
        sdk_version = sdk_version,
    )
    return KpackWheelInfo(device_wheels = device_wheels(ctx, [struct(**fields)], "_kpack"), **fields)

def _by_target(label, infos):
    """Target -> list of (key, object), merged over `infos` (the same wheel in several configurations)."""
    seen = {}
    for info in infos:
        for k in info.kernels.to_list():
            other = seen.get((k.key, k.target))
            if other and other.path != k.object.path:
                fail(("{}: {} for {} comes from two different builds ({} and {}): device wheels are built once for " +
                      "every Python version, so its hip_library must not depend on the Python version (link it " +
                      "through python_independent_deps)").format(label, k.key, k.target, other.short_path, k.object.short_path))
            seen[(k.key, k.target)] = k.object
    by_target = {}
    for (key, target), obj in seen.items():
        by_target.setdefault(target, []).append((key, obj))
    return {t: sorted(by_target[t]) for t in sort_gfx_targets(by_target.keys())}

def device_wheels(ctx, infos, subdir):
    """The device wheels of one host wheel, from one or more configurations of it.

    One archive per GPU target; one wheel per rocm-bootstrap bundle of
    --//:device_wheel_level holding its targets' archives, named as
    device_dist_name does: `<device_prefix>-<bundle>` (gfx1201, gfx12-0,
    gfx12).

    Args:
      ctx: a rule context with the rocm_wheel toolchain, `_compression` and `_device_wheel_level`.
      infos: structs with KpackWheelInfo's fields (but device_wheels), all of one distribution and version.
      subdir: output directory (under the rule's package) for the archives and wheels.

    Returns:
      list of Files: the device wheels ([] inside python_wheels' configurations,
      where python_wheels itself writes them).
    """
    level = ctx.attr._device_wheel_level[SettingInfo].value
    if level not in BOOTSTRAP_LEVELS:
        return []
    first = infos[0]
    compression = "none" if ctx.attr._compression[SettingInfo].value == "none" else "zstd"
    group = normalize_distribution(first.distribution)
    bundles = {}
    for target, kernels in _by_target(ctx.label, infos).items():
        archive = ctx.actions.declare_file("{}/{}/{}/{}.kpack".format(subdir, ctx.label.name, group, target))
        rocm_wheel_kpack_archive(ctx, group, target, compression, kernels, archive)
        bundles.setdefault(bootstrap_bundle(target, level), []).append((target, archive))
    return [_device_wheel(ctx, first, subdir, bundle, archives) for bundle, archives in bundles.items()]

def _device_wheel(ctx, first, subdir, bundle, archives):
    """The device wheel of one bundle: its targets' archives in `<kpack_dir>/.kpack/`."""

    # rocm-bootstrap's device_dist_name(prefix, bundle).
    distribution = "{}-{}".format(first.device_prefix, bundle.replace("_", "-"))
    requires = ["{}=={}".format(first.distribution, first.version)]
    if first.sdk_version and len(archives) == 1 and archives[0][0] == bundle:
        # Built against a TheRock SDK release, whose library device code
        # ships per target: pin exactly that release. A system ROCm's comes
        # with the system, and no index has a rocm-sdk-device of it.
        requires.append("rocm-sdk-device-{}=={}".format(bundle, first.sdk_version))
    manifest = ctx.actions.declare_file("{}/{}/{}/{}.wheel.json".format(subdir, ctx.label.name, normalize_distribution(first.distribution), bundle))
    ctx.actions.write(manifest, json.encode_indent({
        "distribution": distribution,
        "version": first.version,
        "tags": ["py3-none-" + first.platform_tag],
        "root_is_purelib": None,
        "metadata": {
            "summary": "{} device code for {} (kpack archives)".format(first.distribution, ", ".join([t for t, _ in archives])),
            "requires_dist": requires,
        },
        "entry_points": {},
        "files": [{"path": "{}/.kpack/{}.kpack".format(first.kpack_dir, t), "src": a.path} for t, a in archives],
        "rocm_sdk": None,
    }, indent = "  ") + "\n")
    out = ctx.actions.declare_file("{}/{}/{}".format(subdir, ctx.label.name, wheel_file_name(distribution, first.version, "py3-none-" + first.platform_tag)))
    rocm_wheel_build(ctx, manifest, [a for _, a in archives], out, 6)
    return out

def host_with_extras(ctx, host, device_wheels, subdir, out = None):
    """`host` (a wheel File) with extras for `device_wheels`; `host` itself when there are none.

    One extra per GPU target the device wheels serve (device-gfx1200,
    device-gfx1201, at every level) and device-all: only METADATA is
    rewritten, so a level switch rewrites the host wheels' METADATA and
    compiles nothing.

    Args:
      ctx: a rule context with the rocm_wheel toolchain.
      host: the host wheel as built.
      device_wheels: its device wheels (Files).
      subdir: output directory (under the rule's package) when `out` is None.
      out: the File to write, or None for `<subdir>/<rule name>/host/<host's name>`.
    """
    if not device_wheels:
        return host
    if not out:
        out = ctx.actions.declare_file("{}/{}/host/{}".format(subdir, ctx.label.name, host.basename))
    rocm_wheel_device_extras(ctx, host, device_wheels, out)
    return out

# The label of every variant wheel: one per build, not per gfx selection. A
# label must name one property set per package version on an index, and an
# index already holds one build per version (the plain host wheels of two
# builds share a file name and the index refuses them), so within what an
# index can hold `rocm` is unique; it stays the same whatever --//:gfx says,
# and the targets are in the property (amd :: gfx_arch), not the name.
WHEEL_VARIANT_LABEL = "rocm"

def variant_wheel(ctx, host, device_wheels, subdir):
    """`host` (with its extras) as the variant wheel WHEEL_VARIANT_LABEL, or None.

    None unless --//:wheel_variants is set and the host has device wheels
    (below python_wheels none has: the level is pinned there).

    Args:
      ctx: a rule context with the rocm_wheel toolchain and `_wheel_variants`.
      host: the host wheel File, its extras added.
      device_wheels: its device wheels (Files).
      subdir: output directory (under the rule's package).
    """
    if not device_wheels or not ctx.attr._wheel_variants[SettingInfo].value:
        return None
    name = "{}-{}.whl".format(host.basename[:-len(".whl")], WHEEL_VARIANT_LABEL)
    out = ctx.actions.declare_file("{}/{}/variant/{}".format(subdir, ctx.label.name, name))
    rocm_wheel_variant(ctx, host, device_wheels, WHEEL_VARIANT_LABEL, out)
    return out
