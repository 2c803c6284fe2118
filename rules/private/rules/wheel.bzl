"""Wheel assembly: Starlark collects files and metadata into a JSON manifest,
`rocm-wheel build` (from the rocm_wheel toolchain) writes the wheel."""

load("//rules/private:providers.bzl", "GfxInfo", "SettingInfo", "WheelFilesInfo", "WheelInfo")
load("//rules/private/actions:rocm_wheel.bzl", "rocm_wheel_build", "rocm_wheel_rocm_runpath")
load("//rules/private/actions:stamp.bzl", "STAMP_ATTRS", "is_stamping", "stamp_template")
load("//rules/private/data:gfx_families.bzl", "therock_families")
load("//rules/private/util:labels.bzl", "repo_relative_path")
load("//rules/private/util:wheel_names.bzl", "is_shared_object", "normalize_distribution", "wheel_file_name")
load(":kpack_wheels.bzl", "host_with_extras", "kpack_aspect", "kpack_wheel_info", "variant_wheel")
load(":rocm_wheel_toolchain.bzl", "ROCM_WHEEL_TOOLCHAIN_TYPE")

def _package_path(label):
    return label.package

def _strip(path, prefix, owner):
    if not prefix:
        return path
    if path == prefix or not path.startswith(prefix + "/"):
        fail("{}: file {} is not under strip_prefix '{}'; set strip_prefix or map it with wheel_files".format(
            owner,
            path,
            prefix,
        ))
    return path[len(prefix) + 1:]

def _resolve_prefix(ctx, strip_prefix):
    # "/a/b" is relative to the repository root, "a/b" to this package,
    # "" means this package (the common case: sources next to the BUILD file).
    if strip_prefix.startswith("/"):
        return strip_prefix[1:].rstrip("/")
    pkg = _package_path(ctx.label)
    if not strip_prefix:
        return pkg
    return (pkg + "/" + strip_prefix if pkg else strip_prefix).rstrip("/")

def map_files(ctx, targets, strip_prefix, prefix):
    """Archive entries for `targets`: WheelFilesInfo as given, plain files by path."""
    entries = []
    base = _resolve_prefix(ctx, strip_prefix)
    for t in targets:
        if WheelFilesInfo in t:
            for e in t[WheelFilesInfo].entries:
                entries.append(struct(path = prefix + e.path, file = e.file))
            continue
        for f in t[DefaultInfo].files.to_list():
            rel = _strip(repo_relative_path(f), base, str(ctx.label))
            entries.append(struct(path = prefix + rel, file = f))
    return entries

def _norm_prefix(p):
    p = p.strip("/")
    return p + "/" if p else ""

def expand_vars(ctx, attribute, value):
    """`value` with Make variables ($(ROCM_MAJOR) from `toolchains`) expanded."""
    return ctx.expand_make_variables(attribute, value, {}) if "$" in value else value

def _wheel_files_impl(ctx):
    prefix = _norm_prefix(expand_vars(ctx, "prefix", ctx.attr.prefix))
    return [
        WheelFilesInfo(entries = map_files(ctx, ctx.attr.srcs, ctx.attr.strip_prefix, prefix)),
        DefaultInfo(files = depset(ctx.files.srcs)),
    ]

wheel_files = rule(
    implementation = _wheel_files_impl,
    attrs = {
        "prefix": attr.string(doc = "Archive directory the files are placed under; Make variables of `toolchains` expand ($(ROCM_MAJOR))."),
        "srcs": attr.label_list(allow_files = True, doc = "Files or wheel_files targets."),
        "strip_prefix": attr.string(doc = "Removed from each file's path: '/x' from the repository root, 'x' from this package, '' = this package."),
    },
    doc = "Maps files to archive paths inside a wheel.",
)

def _entry_points(ctx):
    groups = {}
    for group, specs in ctx.attr.entry_points.items():
        eps = {}
        for spec in [expand_vars(ctx, "entry_points", s) for s in specs]:
            if "=" not in spec:
                fail("{}: entry point '{}' in group '{}' must look like 'name = module:attr'".format(ctx.label, spec, group))
            k, v = spec.split("=", 1)
            eps[k.strip()] = v.strip()
        groups[group] = eps
    return groups

# Metadata attributes copied into the manifest as given, when set.
_METADATA_STRINGS = ("summary", "requires_python", "license_expression", "author", "author_email", "maintainer", "maintainer_email")
_METADATA_LISTS = ("requires_dist", "provides_extra", "classifiers", "keywords")

def _license_files(ctx, inputs):
    lf = []
    for t, path in ctx.attr.license_files.items():
        files = t.files.to_list()
        if len(files) != 1:
            fail("{}: license file {} must be exactly one file".format(ctx.label, t.label))
        lf.append({"path": path, "src": files[0].path})
        inputs.append(files[0])
    return lf

def _metadata(ctx, inputs):
    """The manifest's `metadata` object; files it reads are appended to `inputs`."""
    a = ctx.attr
    md = {}
    for key in _METADATA_STRINGS:
        v = getattr(a, key)
        if v:
            md[key] = expand_vars(ctx, key, v)
    for key in _METADATA_LISTS:
        v = getattr(a, key)
        if v:
            md[key] = [expand_vars(ctx, key, x) for x in v]
    if a.project_urls:
        md["project_urls"] = [[k, v] for k, v in a.project_urls.items()]
    if a.license_files:
        md["license_files"] = _license_files(ctx, inputs)
    if a.description_file:
        f = ctx.file.description_file
        inputs.append(f)
        md["description"] = {"src": f.path, "content_type": a.description_content_type}
    return md

def wheel_entries(ctx, targets):
    """Archive entries of `targets` under this wheel's strip_prefix and package_prefix."""
    return map_files(ctx, targets, ctx.attr.strip_prefix, _norm_prefix(expand_vars(ctx, "package_prefix", ctx.attr.package_prefix)))

def _write_manifest(ctx, manifest):
    """Writes the manifest JSON, stamped when this target stamps; returns the File.

    `stamped_project_urls` hold {KEY} placeholders that only an action reading
    the workspace status can fill, so they exist only in stamped manifests.
    """
    manifest_file = ctx.actions.declare_file(ctx.label.name + ".wheel.json")
    if is_stamping(ctx) and ctx.attr.stamped_project_urls:
        manifest["metadata"]["project_urls"] = manifest["metadata"].get("project_urls", []) + [
            [k, v]
            for k, v in ctx.attr.stamped_project_urls.items()
        ]
        stamp_template(ctx, json.encode_indent(manifest, indent = "  ") + "\n", manifest_file)
    else:
        ctx.actions.write(manifest_file, json.encode_indent(manifest, indent = "  ") + "\n")
    return manifest_file

def _rocm_sdk(ctx):
    """The manifest's rocm_sdk object: Requires-Dist for TheRock's pip SDK under an extra, or None."""
    if not ctx.attr.rocm_sdk_extra:
        return None
    version = ctx.var.get("ROCM_VERSION")
    if not version:
        fail("{}: rocm_sdk_extra needs the ROCm version: add toolchains = [\"@rules_rocm//rocm:version\"]".format(ctx.label))
    return {
        "extra": ctx.attr.rocm_sdk_extra,
        "version": version,
        "families": therock_families(ctx.attr._gfx[GfxInfo].value),
        # Built against a TheRock SDK release: pinned exactly.
        "sdk_version": ctx.var.get("ROCM_SDK_VERSION") or None,
    }

def _rocm_runpath(ctx, distribution, entries):
    """`entries` with each shared object's RUNPATH finding the ROCm libraries it needs once installed.

    The wheel's root is site-packages (`.data/` members install elsewhere and
    stay as they are); the per-family SDK directories are those of the
    TheRock families --//:gfx names. A file built in another configuration
    (a Python-independent wheel_shared_library, the same file in every
    Python version's wheel) stays as it is: rewriting it here would make
    one copy per version; wheel_shared_library(install_dir) sets it once.
    """
    families = therock_families(ctx.attr._gfx[GfxInfo].value)
    out = []
    for e in entries:
        other_configuration = not e.file.is_source and e.file.root.path != ctx.bin_dir.path
        if not is_shared_object(e.path) or ".data/" in e.path or other_configuration:
            out.append(e)
            continue
        fixed = ctx.actions.declare_file("_rocm_runpath/{}/{}".format(distribution, e.path))
        rocm_wheel_rocm_runpath(ctx, e.file, e.path.rpartition("/")[0], families, fixed)
        out.append(struct(path = e.path, file = fixed))
    return out

def _wheel_version(ctx):
    """The wheel's version: `version`, with +rocm<release> under --//:rocm_local_version.

    The release is the toolkit's TheRock SDK release, else its ROCm release
    (a '+' in it, a dev build's, becomes '.': a version has one local
    label); a wheel that names no ROCm keeps its version.
    """
    version = ctx.attr.version
    if not ctx.attr._rocm_local_version[SettingInfo].value:
        return version
    release = ctx.var.get("ROCM_SDK_VERSION") or ctx.var.get("ROCM_RELEASE")
    if not release:
        return version
    if "+" in version:
        fail("{}: version {} has a local label already; --//:rocm_local_version would add +rocm{}".format(ctx.label, version, release))
    return "{}+rocm{}".format(version, release.replace("+", "."))

def build_wheel(ctx, tag, entries, platform_tag, sources):
    """Writes the manifest (stamped if asked) and runs `rocm-wheel build`; returns providers.

    With --//:hip_device_code=kpack and device code in `sources`, also the
    device wheels (KpackWheelInfo, and in DefaultInfo beside the wheel).

    Args:
      ctx: a rule context with wheel_attrs() and the rocm_wheel toolchain.
      tag: the wheel's tag, e.g. cp312-cp312-manylinux_2_28_x86_64.
      entries: list of struct(path, file) for the archive.
      platform_tag: the tag's platform part.
      sources: the attribute targets `entries` came from (kpack_aspect's KpackKernelsInfo).
    """
    distribution = expand_vars(ctx, "distribution", ctx.attr.distribution)
    version = _wheel_version(ctx)
    file_name = wheel_file_name(distribution, version, tag)
    if ctx.attr.rocm_runpath:
        entries = _rocm_runpath(ctx, distribution, entries)
    inputs = [e.file for e in entries]
    manifest = {
        "distribution": distribution,
        "version": version,
        "tags": [tag],
        "root_is_purelib": None,
        "metadata": _metadata(ctx, inputs),
        "entry_points": _entry_points(ctx),
        "files": [{"path": e.path, "src": e.file.path} for e in entries],
        "rocm_sdk": _rocm_sdk(ctx),
    }
    manifest_file = _write_manifest(ctx, manifest)
    kpack = kpack_wheel_info(ctx, struct(distribution = distribution, version = version, platform_tag = platform_tag), entries, sources, expand_vars(ctx, "device_prefix", ctx.attr.device_prefix))
    out = ctx.actions.declare_file(file_name)
    extra = []
    if kpack and kpack.device_wheels:
        # The level is this configuration's: the host's extras name its
        # device wheels (python_wheels adds them to the wheels of the
        # configurations that pin it), and so does its variant wheel.
        plain = ctx.actions.declare_file("_kpack/{}/plain/{}".format(ctx.label.name, file_name))
        rocm_wheel_build(ctx, manifest_file, inputs, plain, ctx.attr.compression_level)
        host_with_extras(ctx, plain, kpack.device_wheels, "_kpack", out)
        variant = variant_wheel(ctx, out, kpack.device_wheels, "_kpack")
        extra = kpack.device_wheels + ([variant] if variant else [])
    else:
        rocm_wheel_build(ctx, manifest_file, inputs, out, ctx.attr.compression_level)
    return ([kpack] if kpack else []) + [
        DefaultInfo(files = depset([out] + extra)),
        OutputGroupInfo(manifest = depset([manifest_file])),
        WheelInfo(
            wheel = out,
            distribution = distribution,
            normalized_name = normalize_distribution(distribution),
            version = version,
            tag = tag,
        ),
    ]

def _wheel_impl(ctx):
    tag = "{}-{}-{}".format(ctx.attr.python_tag, ctx.attr.abi_tag, ctx.attr.platform_tag)
    return build_wheel(ctx, tag, wheel_entries(ctx, ctx.attr.srcs), ctx.attr.platform_tag, ctx.attr.srcs)

# Attributes, in the groups a reader looks for. Rules that build wheels
# compose them with wheel_attrs(); only the tags differ between rocm_wheel
# (tags from the BUILD file) and rocm_python_wheel (from the Python toolchain).

# What is being distributed: the wheel file name's first two parts.
_DISTRIBUTION_ATTRS = {
    "distribution": attr.string(mandatory = True, doc = "Distribution name, e.g. jax-rocm7-plugin, or jax-rocm$(ROCM_MAJOR)-plugin with toolchains = [\"@rules_rocm//rocm:version\"] (Make variables expand here, in requires_dist, entry_points and package_prefix)."),
    "version": attr.string(mandatory = True, doc = "PEP 440 version in normalized form."),
}

# Core metadata (METADATA in .dist-info), PEP 621 / core metadata 2.4 names.
_METADATA_ATTRS = {
    "author": attr.string(doc = "Author name (Author)."),
    "author_email": attr.string(doc = "Author e-mail, `Name <addr>` allowed (Author-email)."),
    "classifiers": attr.string_list(doc = "Trove classifiers (Classifier)."),
    "description_content_type": attr.string(
        default = "text/markdown",
        doc = "Content type of description_file (Description-Content-Type).",
    ),
    "description_file": attr.label(allow_single_file = True, doc = "Long description (README)."),
    "keywords": attr.string_list(doc = "Search keywords (Keywords, comma-joined)."),
    "license_expression": attr.string(doc = "SPDX license expression (PEP 639) in the canonical form pip and PyPI normalise to, e.g. `Apache-2.0 OR MIT`; anything else fails the build, naming the fix."),
    "license_files": attr.label_keyed_string_dict(allow_files = True, doc = "License file -> path under .dist-info/licenses/."),
    "maintainer": attr.string(doc = "Maintainer name (Maintainer)."),
    "maintainer_email": attr.string(doc = "Maintainer e-mail (Maintainer-email)."),
    "project_urls": attr.string_dict(doc = "Label (at most 32 characters, no commas) -> URL (Project-URL)."),
    "provides_extra": attr.string_list(doc = "Extras that requires_dist markers name (Provides-Extra)."),
    "requires_dist": attr.string_list(doc = "PEP 508 requirements."),
    "requires_python": attr.string(doc = "Python version specifier, e.g. >=3.10 (Requires-Python)."),
    "rocm_sdk_extra": attr.string(doc = "An extra (e.g. `rocm`) under which Requires-Dist names the TheRock pip SDK packages the wheel's " +
                                        "shared objects need (DT_NEEDED): rocm-sdk-core, rocm-sdk-libraries-<family> per TheRock family of " +
                                        "--//:gfx, each ~= $(ROCM_VERSION) (needs toolchains = [\"@rules_rocm//rocm:version\"]); built against a TheRock " +
                                        "SDK release, TheRock's selector at exactly that release instead (rocm[libraries]==7.13.0a20261201). Empty: none."),
    "summary": attr.string(doc = "One-line summary (Summary)."),
}

# entry_points.txt.
_ENTRY_POINT_ATTRS = {
    "entry_points": attr.string_list_dict(doc = 'Group -> ["name = module:attr", ...].'),
}

# Which files go in, at which archive paths.
_CONTENT_ATTRS = {
    "package_prefix": attr.string(doc = "Archive directory prepended to every mapped path."),
    "srcs": attr.label_list(allow_files = True, aspects = [kpack_aspect], doc = "Files or wheel_files targets."),
    "strip_prefix": attr.string(doc = "See wheel_files."),
}

# The compatibility tag (python-abi-platform) of a wheel whose tags the BUILD file sets.
_WHEEL_TAG_ATTRS = {
    "abi_tag": attr.string(default = "none", doc = "ABI tag, e.g. none, abi3, cp312."),
    "platform_tag": attr.string(default = "any", doc = "Platform tag, e.g. manylinux_2_28_x86_64."),
    "python_tag": attr.string(default = "py3", doc = "Python tag, e.g. py3, cp312."),
}

# How the archive is written, and how its shared objects find ROCm.
_PACKAGING_ATTRS = {
    "compression_level": attr.int(default = 6, doc = "Deflate level 0-9 (0 stores)."),
    "rocm_runpath": attr.bool(
        default = True,
        doc = "Give each shared object a RUNPATH that also finds the ROCm libraries it needs (DT_NEEDED) where " +
              "users install them: TheRock's pip SDK next to site-packages (_rocm_sdk_core/lib, " +
              "_rocm_sdk_libraries[_<family of --//:gfx>]/lib, $ORIGIN-relative) and /opt/rocm/lib (docs/sysroot.md).",
    ),
    "_gfx": attr.label(default = Label("//:gfx"), providers = [GfxInfo]),
    "_rocm_local_version": attr.label(default = Label("//:rocm_local_version"), providers = [SettingInfo]),
}

# Device code in kpack archives (--//:hip_device_code=kpack, docs/kpack.md).
_KPACK_ATTRS = {
    "device_prefix": attr.string(doc = "With --//:hip_device_code=kpack: the device wheels' name prefix, as rocm-bootstrap's " +
                                       "device_dist_name(prefix, bundle) uses it: `<prefix>-gfx1201`, `<prefix>-gfx12-0`. Default " +
                                       "`<distribution>-device`; AMD's wheels use e.g. `amd-torch-device`. Make variables expand."),
    "kpack_dir": attr.string(doc = "With --//:hip_device_code=kpack: the directory in the wheel whose .kpack/ the device wheels fill (default: the nearest directory holding all the wheel's shared objects)."),
    "_compression": attr.label(default = Label("//:hip_bundle_compression"), providers = [SettingInfo]),
    "_device_code": attr.label(default = Label("//:hip_device_code"), providers = [SettingInfo]),
    "_device_wheel_level": attr.label(default = Label("//:device_wheel_level"), providers = [SettingInfo]),
    "_wheel_variants": attr.label(default = Label("//:wheel_variants"), providers = [SettingInfo]),
}

# Workspace-status values in the metadata (see actions/stamp.bzl).
_STAMPING_ATTRS = dict(STAMP_ATTRS, **{
    "stamped_project_urls": attr.string_dict(doc = "Label -> URL with {STABLE_KEY} placeholders; added to Project-URL only when stamping."),
})

def wheel_attrs(tags):
    """Every attribute build_wheel reads, with the rule's own tag attributes.

    Args:
      tags: rocm_wheel's tag attributes, or the tag attributes of a rule that takes the
        Python and ABI tags from elsewhere (rocm_python_wheel: platform_tag only).
    """
    attrs = {}
    for group in (_DISTRIBUTION_ATTRS, _METADATA_ATTRS, _ENTRY_POINT_ATTRS, _CONTENT_ATTRS, tags, _PACKAGING_ATTRS, _KPACK_ATTRS, _STAMPING_ATTRS):
        attrs.update(group)
    return attrs

# rocm_wheel as parts, for the rules that build wheels (as rules_python's
# py_wheel_lib): rocm_wheel is `implementation` + `attrs`; a rule with its own
# tags or files (rocm_python_wheel) calls `build(ctx, tag, entries(ctx, targets))`
# with `attrs_with_tags(its tag attributes)`. All need `toolchains`.
rocm_wheel_lib = struct(
    implementation = _wheel_impl,
    attrs = wheel_attrs(_WHEEL_TAG_ATTRS),
    attrs_with_tags = wheel_attrs,
    build = build_wheel,
    entries = wheel_entries,
    toolchains = [str(ROCM_WHEEL_TOOLCHAIN_TYPE)],
)

rocm_wheel = rule(
    implementation = rocm_wheel_lib.implementation,
    attrs = rocm_wheel_lib.attrs,
    toolchains = rocm_wheel_lib.toolchains,
    doc = "A PEP 427 wheel written by the rocm-wheel tool.",
)
