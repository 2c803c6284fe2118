"""cc_proto_library for examples/jax_rocm_plugin: C++ code from proto_library targets.

JAX's BUILD files declare their protos with the native proto_library and
load cc_proto_library from jaxlib/jax.bzl (XLA's from its own macros). This
one runs the example's protoc (protobuf 3.21.12, C++ generator only) on the
proto_library's own sources and compiles the result against the same
release's runtime, so generated code and runtime always agree.
"""

load("@rules_cc//cc:defs.bzl", "cc_library")

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
    for group in ["srcs", "hdrs"]:
        native.filegroup(name = "{}_{}".format(name, group), srcs = [name + "_gen"], output_group = group, tags = tags, visibility = ["//visibility:private"])
    cc_library(
        name = name,
        srcs = [name + "_srcs"],
        hdrs = [name + "_hdrs"],
        deps = [Label(_PROTOBUF)] + cc_deps,
        visibility = visibility,
        tags = tags,
    )
