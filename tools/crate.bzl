"""The Bazel side of the Cargo workspace: one macro per crate kind.

Sources are globbed, third-party dependencies come from Cargo.lock through
crate_universe (@rocm_wheel_crates, see MODULE.bazel), and the version is the
workspace's, so Cargo.toml stays the one place a dependency is declared; only
dependencies on sibling crates are listed in BUILD files.
"""

load("@rocm_wheel_crates//:defs.bzl", "all_crate_deps")
load("@rules_rust//rust:defs.bzl", "rust_binary", "rust_library", "rust_test")

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

def tool_library(name, deps = [], unit_tests = True, unit_test_skip = [], unit_test_deps = [], **kwargs):
    """A library crate of tools/crates/<name>: crate name with `_` for `-`.

    Also `<name>_unit_test`: the crate's unit tests (`#[cfg(test)]` in src/),
    which need nothing outside the sandbox (`unit_tests = False` for a crate
    that has none: an empty test target would pass whatever happens;
    `unit_test_skip`: unit tests that need an oracle outside the sandbox and
    run under cargo only; `unit_test_deps`: sibling dev-dependencies, which
    all_crate_deps does not list). The
    integration tests in tests/
    stay cargo tests (`make rust-test`): they run external oracles (clang
    21, readelf, gcc, pip and the venv's twine/auditwheel, a pyenv Python),
    download wheels from PyPI or check the fuzz lock files with cargo.
    """
    rust_library(
        name = name,
        crate_name = name.replace("-", "_"),
        crate_root = "src/lib.rs",
        visibility = ["//visibility:public"],
        **(_common(deps) | kwargs)
    )
    if not unit_tests:
        return
    rust_test(
        name = name + "_unit_test",
        crate = ":" + name,
        crate_features = kwargs.get("crate_features", []),
        args = [a for t in unit_test_skip for a in ("--skip", t)],
        deps = all_crate_deps(normal_dev = True) + unit_test_deps,
        proc_macro_deps = all_crate_deps(proc_macro_dev = True),
    )

def tool_binary(name, deps = [], **kwargs):
    """The binary crate of tools/crates/<name> (src/main.rs), and its unit tests."""
    rust_binary(
        name = name,
        crate_root = "src/main.rs",
        visibility = ["//visibility:public"],
        **(_common(deps) | kwargs)
    )
    rust_test(
        name = name + "_unit_test",
        crate = ":" + name,
        deps = all_crate_deps(normal_dev = True),
        proc_macro_deps = all_crate_deps(proc_macro_dev = True),
    )
