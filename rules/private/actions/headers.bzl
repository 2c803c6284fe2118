"""A hip_library's headers as cc_library presents them: include paths, the virtual include tree, the compilation context.

`includes` become system include paths of the target and its dependents
(source and generated trees); `strip_include_prefix` / `include_prefix`
give the headers a second path under `_virtual_includes/<name>/`, made of
symlinks, which is an include path of the target and its dependents; the
repository root is a quote include path, as in cc_library.
"""

load("//rules/private/util:labels.bzl", "label_as_typed")

# The global rules_cc re-exports (rules_cc 0.0.11 has no cc/common yet).
_cc_common = cc_common  # buildifier: disable=native-cc-common

def _normalize(ctx, attr, path):
    """`path` without `.`, `..` and empty parts; fails when it leaves the repository."""
    parts = []
    for p in path.split("/"):
        if p in ("", "."):
            continue
        if p == "..":
            if not parts:
                fail("{}: {} = '{}' points outside the repository; paths are relative to the package ('/...' to the repository root)".format(label_as_typed(ctx.label), attr, path))
            parts.pop()
        else:
            parts.append(p)
    return "/".join(parts)

def _join(*parts):
    return "/".join([p for p in parts if p])

def _repository_relative(f):
    # short_path is ../<repo>/<path> for files of other repositories.
    return f.short_path.split("/", 2)[2] if f.short_path.startswith("../") else f.short_path

def _virtual_headers(ctx):
    """(symlinks under _virtual_includes/<name>/, their include directory), or ([], None) without prefixes."""
    strip = ctx.attr.strip_include_prefix
    prefix = ctx.attr.include_prefix
    if not strip and not prefix:
        return [], None
    if strip.startswith("/"):
        strip_dir = _normalize(ctx, "strip_include_prefix", strip[1:])
    else:
        strip_dir = _normalize(ctx, "strip_include_prefix", _join(ctx.label.package, strip))
    prefix = _normalize(ctx, "include_prefix", prefix)
    base = "_virtual_includes/" + ctx.label.name
    links = []
    for h in ctx.files.hdrs:
        path = _repository_relative(h)
        if strip_dir and not path.startswith(strip_dir + "/"):
            fail("{}: header {} is not below strip_include_prefix '{}' ({}); move it, or change the prefix".format(
                label_as_typed(ctx.label),
                path,
                ctx.attr.strip_include_prefix,
                strip_dir,
            ))
        link = ctx.actions.declare_file(_join(base, prefix, path[len(strip_dir) + 1:] if strip_dir else path))
        ctx.actions.symlink(output = link, target_file = h)
        links.append(link)
    return links, _join(ctx.bin_dir.path, ctx.label.workspace_root, ctx.label.package, base)

def compilation_contexts(ctx, defines):
    """The target's own compilation context, with and without `defines`.

    Args:
      ctx: a hip_library rule context (hdrs, textual_hdrs, includes, strip_include_prefix, include_prefix).
      defines: the defines dependents see.

    Returns:
      struct(public = with defines (for CcInfo), compile = without them (the
      target's compiles pass their own defines per configuration)).
    """
    links, virtual_dir = _virtual_headers(ctx)
    package_dir = _join(ctx.label.workspace_root, ctx.label.package)
    system = []
    for inc in ctx.attr.includes:
        d = _normalize(ctx, "includes", _join(package_dir, inc)) if not inc.startswith("/") else fail(
            "{}: includes = '{}' must be relative to the package".format(label_as_typed(ctx.label), inc),
        )
        system += [d or ".", _join(ctx.bin_dir.path, d)]
    root = ctx.label.workspace_root
    common = dict(
        headers = depset(ctx.files.hdrs + ctx.files.textual_hdrs + links),
        includes = depset([virtual_dir] if virtual_dir else []),
        quote_includes = depset([root or ".", _join(ctx.bin_dir.path, root)]),
        system_includes = depset(system),
    )
    return struct(
        public = _cc_common.create_compilation_context(defines = depset(defines), **common),
        compile = _cc_common.create_compilation_context(**common),
    )
