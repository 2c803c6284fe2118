"""The Bazel side of the Cargo workspace: one macro per crate kind.

Sources are globbed, third-party dependencies come from Cargo.lock through
crate_universe's rendered BUILD files (@rocm_wheel_crates, tools/3rdparty),
and the version is the
workspace's, so Cargo.toml stays the one place a dependency is declared; only
dependencies on sibling crates are listed in BUILD files.
"""

load("@rocm_wheel_crates//:defs.bzl", "all_crate_deps")
load("@rules_rust//rust:defs.bzl", "rust_binary", "rust_library")

# [workspace.package] of tools/Cargo.toml (env!("CARGO_PKG_VERSION") reads it).
VERSION = "0.1.0"
EDITION = "2021"

def _common(deps):
    return dict(
        # include_str! reads data files next to the sources.
        compile_data = native.glob(["src/**"], exclude = ["src/**/*.rs"]),
        deps = all_crate_deps(normal = True) + deps,
        edition = EDITION,
        proc_macro_deps = all_crate_deps(proc_macro = True),
        srcs = native.glob(["src/**/*.rs"]),
        version = VERSION,
    )

def tool_library(name, deps = [], **kwargs):
    """A library crate of tools/crates/<name>: crate name with `_` for `-`.

    Its tests (unit tests in src/, integration tests in tests/) are cargo's
    (`make rust-test`): many run external oracles (clang, readelf, gcc, pip
    and the venv's twine/auditwheel, a pyenv Python) or download wheels from
    PyPI, and a second test build under Bazel would compile every crate and
    its dependencies again for the same tests.
    """
    rust_library(
        name = name,
        crate_name = name.replace("-", "_"),
        crate_root = "src/lib.rs",
        # Built as the tool's dependency in the tool's configuration
        # (//rules:rocm-wheel); `bazel build //...` would otherwise compile
        # every crate and its third-party dependencies a second time, in the
        # top-level configuration.
        tags = ["manual"],
        visibility = ["//visibility:public"],
        **(_common(deps) | kwargs)
    )

def tool_binary(name, deps = [], **kwargs):
    """The binary crate of tools/crates/<name> (src/main.rs); see tool_library."""
    rust_binary(
        name = name,
        crate_root = "src/main.rs",
        tags = ["manual"],
        visibility = ["//visibility:public"],
        **(_common(deps) | kwargs)
    )
