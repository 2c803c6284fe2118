"""The tool's third-party crates, from the BUILD files checked in under crates/.

A dev-only module extension (MODULE.bazel): one repository per crate in
tools/Cargo.lock, fetched from crates.io and pinned by its Cargo.lock
checksum, plus @rocm_wheel_crates, whose aliases and defs.bzl
(`all_crate_deps`) tools/crate.bzl uses. Nothing runs cargo-bazel here;
`bazel run //tools/3rdparty:crates_vendor` renders the files anew.
"""

load("//tools/3rdparty/crates:crates.bzl", "crate_repositories")

def _crates_impl(module_ctx):
    # Every repository the root module sees is a dev dependency: MODULE.bazel
    # uses this extension with dev_dependency = True.
    return module_ctx.extension_metadata(
        root_module_direct_deps = [],
        root_module_direct_dev_deps = [repo.repo for repo in crate_repositories()],
    )

crates = module_extension(
    implementation = _crates_impl,
    doc = "The rocm-wheel tool's crates (tools/Cargo.lock), from the vendored BUILD files.",
)
