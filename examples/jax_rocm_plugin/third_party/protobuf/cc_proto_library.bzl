"""cc_proto_library for examples/jax_rocm_plugin: C++ code from proto_library targets.

JAX's BUILD files declare their protos with the native proto_library and
load cc_proto_library from jaxlib/jax.bzl (XLA's from its own macros). This
one runs the example's protoc (protobuf 3.21.12, C++ generator only) on the
proto_library's own sources and compiles the result against the same
release's runtime, so generated code and runtime always agree.
"""

load("@rules_cc//cc:defs.bzl", "cc_library")

# buildifier: disable=bzl-visibility
load("//rules/private/settings:transitions.bzl", "ALLOWLIST_ATTRS", "python_reset_transition")

_CcInfo = CcInfo  # buildifier: disable=native-cc-info
_cc_common = cc_common  # buildifier: disable=native-cc-common

_PROTOBUF = "@com_google_protobuf//:protobuf"

def _import_path(f):
    # A proto's import path: its path inside its repository.
    return f.short_path.split("/", 2)[2] if f.short_path.startswith("../") else f.short_path

def _cc_proto_gen_impl(ctx):
    srcs, hdrs = [], []
    package = ctx.label.package + "/" if ctx.label.package else ""
    roots = {}
    sources = []
    for dep in ctx.attr.deps:
        info = dep[ProtoInfo]  # buildifier: disable=native-proto-info
        sources.append(info.transitive_sources)
        for root in info.transitive_proto_path.to_list():
            roots[root] = True
        for src in info.direct_sources:
            path = _import_path(src)
            if not path.startswith(package):
                fail("{}: {} is not in package {}: declare its cc_proto_library next to it".format(ctx.label, path, ctx.label.package))
            base = path[len(package):-len(".proto")]
            srcs.append(ctx.actions.declare_file(base + ".pb.cc"))
            hdrs.append(ctx.actions.declare_file(base + ".pb.h"))
    well_known = ctx.files._well_known_types
    out_root = ctx.bin_dir.path + ("/" + ctx.label.workspace_root if ctx.label.workspace_root else "")
    args = ctx.actions.args()
    args.add("--cpp_out=" + out_root)
    args.add_all(sorted(roots.keys()), format_each = "--proto_path=%s")
    if well_known:
        args.add("--proto_path=" + well_known[0].path.rpartition("/google/protobuf/")[0])
    for dep in ctx.attr.deps:
        args.add_all(dep[ProtoInfo].direct_sources)  # buildifier: disable=native-proto-info
    ctx.actions.run(
        executable = ctx.executable._protoc,
        arguments = [args],
        inputs = depset(well_known, transitive = sources),
        outputs = srcs + hdrs,
        mnemonic = "ProtocCpp",
        progress_message = "Generating C++ from %{label}'s protos",
    )
    return [
        DefaultInfo(files = depset(srcs + hdrs)),
        OutputGroupInfo(srcs = depset(srcs), hdrs = depset(hdrs)),
    ]

_cc_proto_gen = rule(
    implementation = _cc_proto_gen_impl,
    attrs = {
        # Bazel 7's own proto_library: ProtoInfo is global there.
        "deps": attr.label_list(providers = [ProtoInfo], mandatory = True),  # buildifier: disable=native-proto-info
        # One protoc for every configuration that needs the generated
        # headers (BUILD.bazel here says why).
        "_protoc": attr.label(default = "//examples/jax_rocm_plugin/third_party/protobuf:protoc", executable = True, cfg = "exec"),
        "_well_known_types": attr.label(default = "@com_google_protobuf//:well_known_type_protos", allow_files = True),
    },
)

def _cc_proto_files_impl(ctx):
    gen = ctx.attr.gen[0]
    groups = gen[OutputGroupInfo]
    hdrs = groups.hdrs.to_list()

    # The headers live in the Python-independent configuration's output
    # tree, which the compiles of other configurations do not search.
    roots = {h.root.path + ("/" + gen.label.workspace_root if gen.label.workspace_root else ""): True for h in hdrs}
    return [
        DefaultInfo(files = groups.srcs),
        _CcInfo(compilation_context = _cc_common.create_compilation_context(
            headers = depset(hdrs),
            quote_includes = depset(roots.keys()),
        )),
    ]

# The generated files, always from the Python-independent configuration:
# per-Python libraries include the headers too, and protoc then runs once
# instead of once per Python version.
_cc_proto_files = rule(
    implementation = _cc_proto_files_impl,
    attrs = ALLOWLIST_ATTRS | {"gen": attr.label(mandatory = True, cfg = python_reset_transition)},
)

def cc_proto_library(name, deps, cc_deps = [], visibility = None, tags = None, **_kwargs):
    """C++ library of the protos in `deps` (proto_library targets of this package).

    Args:
      name: the cc_library.
      deps: proto_library targets whose own sources are generated here.
      cc_deps: the cc_proto_library targets of the protos they import.
      visibility: as usual.
      tags: as usual.
      **_kwargs: the rest of JAX's and XLA's arguments (compatible_with, ...), unused.
    """
    _cc_proto_gen(name = name + "_gen", deps = deps, tags = tags, visibility = ["//visibility:private"])
    _cc_proto_files(name = name + "_files", gen = name + "_gen", tags = tags, visibility = ["//visibility:private"])
    cc_library(
        name = name,
        srcs = [name + "_files"],
        deps = [name + "_files", Label(_PROTOBUF)] + cc_deps,
        visibility = visibility,
        tags = tags,
    )
