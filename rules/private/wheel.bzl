"""Wheel assembly: Starlark collects files and metadata into a JSON manifest,
`rocm-wheel build` (from the rocm_wheel toolchain) writes the wheel."""

load(":providers.bzl", "WheelFilesInfo", "WheelInfo")
load(":stamp.bzl", "STAMP_ATTRS", "is_stamping", "stamp_template")
load(":toolchain.bzl", "ROCM_WHEEL_TOOLCHAIN_TYPE", "rocm_wheel_tool")

_SEPARATORS = "-_."

def normalize_distribution(name):
    """The wheel-file-name spelling: runs of -_. become one _, lower case."""
    out = []
    in_sep = False
    for i in range(len(name)):
        c = name[i]
        if c in _SEPARATORS:
            if not in_sep:
                out.append("_")
            in_sep = True
        else:
            out.append(c.lower())
            in_sep = False
    return "".join(out)

def _repo_relative(f):
    """Path of a source or generated file relative to its repository root."""
    p = f.short_path
    if p.startswith("../"):
        p = p[3:]
        p = p[p.index("/") + 1:]
    return p

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
            rel = _strip(_repo_relative(f), base, str(ctx.label))
            entries.append(struct(path = prefix + rel, file = f))
    return entries

def _norm_prefix(p):
    p = p.strip("/")
    return p + "/" if p else ""

def _wheel_files_impl(ctx):
    return [
        WheelFilesInfo(entries = map_files(ctx, ctx.attr.srcs, ctx.attr.strip_prefix, _norm_prefix(ctx.attr.prefix))),
        DefaultInfo(files = depset(ctx.files.srcs)),
    ]

wheel_files = rule(
    implementation = _wheel_files_impl,
    attrs = {
        "prefix": attr.string(doc = "Archive directory the files are placed under."),
        "srcs": attr.label_list(allow_files = True, doc = "Files or wheel_files targets."),
        "strip_prefix": attr.string(doc = "Removed from each file's path: '/x' from the repository root, 'x' from this package, '' = this package."),
    },
    doc = "Maps files to archive paths inside a wheel.",
)

def _entry_points(ctx):
    groups = {}
    for group, specs in ctx.attr.entry_points.items():
        eps = {}
        for spec in specs:
            if "=" not in spec:
                fail("{}: entry point '{}' in group '{}' must look like 'name = module:attr'".format(ctx.label, spec, group))
            k, v = spec.split("=", 1)
            eps[k.strip()] = v.strip()
        groups[group] = eps
    return groups

def wheel_file_name(distribution, version, tag):
    return "{}-{}-{}.whl".format(normalize_distribution(distribution), version, tag)

def _metadata(ctx, inputs):
    a = ctx.attr
    md = {}
    for key in ("summary", "requires_python", "license_expression", "author", "author_email", "maintainer", "maintainer_email"):
        v = getattr(a, key)
        if v:
            md[key] = v
    for key in ("requires_dist", "provides_extra", "classifiers", "keywords"):
        v = getattr(a, key)
        if v:
            md[key] = v
    if a.project_urls:
        md["project_urls"] = [[k, v] for k, v in a.project_urls.items()]
    if a.license_files:
        lf = []
        for t, path in a.license_files.items():
            files = t.files.to_list()
            if len(files) != 1:
                fail("{}: license file {} must be exactly one file".format(ctx.label, t.label))
            lf.append({"path": path, "src": files[0].path})
            inputs.append(files[0])
        md["license_files"] = lf
    if a.description_file:
        f = ctx.file.description_file
        inputs.append(f)
        md["description"] = {"src": f.path, "content_type": a.description_content_type}
    return md

def _wheel_impl(ctx):
    tag = "{}-{}-{}".format(ctx.attr.python_tag, ctx.attr.abi_tag, ctx.attr.platform_tag)
    entries = map_files(ctx, ctx.attr.srcs, ctx.attr.strip_prefix, _norm_prefix(ctx.attr.package_prefix))
    return build_wheel(ctx, tag, entries)

def build_wheel(ctx, tag, entries):
    """Writes the manifest (stamped if asked) and runs `rocm-wheel build`; returns providers.

    Args:
      ctx: a rule context with WHEEL_ATTRS and the rocm_wheel toolchain.
      tag: the wheel's tag, e.g. cp312-cp312-manylinux_2_28_x86_64.
      entries: list of struct(path, file) for the archive.
    """
    out = ctx.actions.declare_file(wheel_file_name(ctx.attr.distribution, ctx.attr.version, tag))
    inputs = [e.file for e in entries]
    manifest = {
        "distribution": ctx.attr.distribution,
        "version": ctx.attr.version,
        "tags": [tag],
        "root_is_purelib": None,
        "metadata": _metadata(ctx, inputs),
        "entry_points": _entry_points(ctx),
        "files": [{"path": e.path, "src": e.file.path} for e in entries],
    }
    manifest_file = ctx.actions.declare_file(ctx.label.name + ".wheel.json")
    if is_stamping(ctx) and ctx.attr.stamped_project_urls:
        # {KEY} placeholders are filled from the workspace status by an action.
        manifest["metadata"]["project_urls"] = manifest["metadata"].get("project_urls", []) + [
            [k, v]
            for k, v in ctx.attr.stamped_project_urls.items()
        ]
        stamp_template(ctx, json.encode_indent(manifest, indent = "  ") + "\n", manifest_file)
    else:
        ctx.actions.write(manifest_file, json.encode_indent(manifest, indent = "  ") + "\n")
    ctx.actions.run(
        executable = rocm_wheel_tool(ctx),
        arguments = [
            "build",
            "--manifest",
            manifest_file.path,
            "--output",
            out.path,
            "--compression-level",
            str(ctx.attr.compression_level),
        ],
        inputs = [manifest_file] + inputs,
        outputs = [out],
        mnemonic = "RocmWheel",
        progress_message = "Writing wheel %s" % out.basename,
    )
    return [
        DefaultInfo(files = depset([out])),
        OutputGroupInfo(manifest = depset([manifest_file])),
        WheelInfo(
            wheel = out,
            distribution = ctx.attr.distribution,
            normalized_name = normalize_distribution(ctx.attr.distribution),
            version = ctx.attr.version,
            tag = tag,
        ),
    ]

WHEEL_ATTRS = dict(STAMP_ATTRS, **{
    "abi_tag": attr.string(default = "none", doc = "ABI tag, e.g. none, abi3, cp312."),
    "author": attr.string(),
    "author_email": attr.string(),
    "classifiers": attr.string_list(),
    "compression_level": attr.int(default = 6, doc = "Deflate level 0-9 (0 stores)."),
    "description_content_type": attr.string(default = "text/markdown"),
    "description_file": attr.label(allow_single_file = True, doc = "Long description (README)."),
    "distribution": attr.string(mandatory = True, doc = "Distribution name, e.g. jax-rocm7-plugin."),
    "entry_points": attr.string_list_dict(doc = 'Group -> ["name = module:attr", ...].'),
    "keywords": attr.string_list(),
    "license_expression": attr.string(doc = "SPDX license expression (PEP 639)."),
    "license_files": attr.label_keyed_string_dict(allow_files = True, doc = "License file -> path under .dist-info/licenses/."),
    "maintainer": attr.string(),
    "maintainer_email": attr.string(),
    "package_prefix": attr.string(doc = "Archive directory prepended to every mapped path."),
    "platform_tag": attr.string(default = "any", doc = "Platform tag, e.g. manylinux_2_28_x86_64."),
    "project_urls": attr.string_dict(doc = "Label -> URL."),
    "provides_extra": attr.string_list(),
    "python_tag": attr.string(default = "py3", doc = "Python tag, e.g. py3, cp312."),
    "requires_dist": attr.string_list(doc = "PEP 508 requirements."),
    "requires_python": attr.string(),
    "srcs": attr.label_list(allow_files = True, doc = "Files or wheel_files targets."),
    "stamped_project_urls": attr.string_dict(doc = "Label -> URL with {STABLE_KEY} placeholders; added to Project-URL only when stamping."),
    "strip_prefix": attr.string(doc = "See wheel_files."),
    "summary": attr.string(),
    "version": attr.string(mandatory = True, doc = "PEP 440 version in normalized form."),
})

rocm_wheel = rule(
    implementation = _wheel_impl,
    attrs = WHEEL_ATTRS,
    toolchains = [str(ROCM_WHEEL_TOOLCHAIN_TYPE)],
    doc = "A PEP 427 wheel written by the rocm-wheel tool.",
)
