"""Repository rule: builds the rocm-wheel CLI with cargo, once per output base.

Rule actions get the binary from the rocm_wheel toolchain (never from PATH).
Building it here, not in an action, keeps it out of the exec configuration:
Starlark flags such as --//:gfx propagate to exec and would otherwise rebuild
the tool once per configuration.
"""

def _find_cargo(rctx):
    env = rctx.os.environ
    if env.get("CARGO"):
        return rctx.path(env["CARGO"])
    found = rctx.which("cargo")
    if found:
        return found
    home = env.get("HOME", "")
    if home:
        candidate = rctx.path(home + "/.cargo/bin/cargo")
        if candidate.exists:
            return candidate
    fail("rules_rocm: cargo not found (looked at $CARGO, PATH and ~/.cargo/bin). " +
         "Install Rust with rustup (https://rustup.rs) or set CARGO=/path/to/cargo, " +
         "or register your own rocm_wheel toolchain with a prebuilt binary.")

def _watch_sources(rctx, root):
    """Resolves every Cargo source through a Label so Bazel re-runs this rule when one changes."""

    # `find`: one listing of every source, whatever the tree depth.
    r = rctx.execute([
        "find",
        ".",
        "(",
        "-name",
        "target",
        "-o",
        "-name",
        "fuzz",
        ")",
        "-prune",
        "-o",
        "-type",
        "f",
        "(",
        "-name",
        "*.rs",
        "-o",
        "-name",
        "*.toml",
        "-o",
        "-name",
        "Cargo.lock",
        ")",
        "-print",
    ], working_directory = root)
    if r.return_code != 0:
        fail("rules_rocm: cannot list {}: {}".format(root, r.stderr))
    for rel in sorted(r.stdout.splitlines()):
        rctx.path(Label("//tools:" + rel[2:]))

def _abs_label(label):
    # A label of the main repository prints without "@"; make it resolvable
    # from inside this external repository.
    s = str(label)
    return s if s.startswith("@") else "@" + s

def _rocm_wheel_cargo_repository_impl(rctx):
    cargo = _find_cargo(rctx)
    manifest = rctx.path(Label("//tools:Cargo.toml"))

    # The real path: through local_repository the same sources appear under
    # another name, which would change RUSTFLAGS and force a full rebuild.
    real = rctx.execute(["realpath", str(manifest.dirname)])
    tools_dir = real.stdout.strip() if real.return_code == 0 else str(manifest.dirname)
    manifest = rctx.path(tools_dir + "/Cargo.toml")
    _watch_sources(rctx, tools_dir)

    # ROCM_WHEEL_CARGO_TARGET_DIR lets several output bases of one checkout
    # (tests, `bazel clean --expunge`) reuse cargo's work; default: private.
    target_dir = rctx.os.environ.get("ROCM_WHEEL_CARGO_TARGET_DIR") or str(rctx.path("cargo-target"))
    cargo_home = rctx.os.environ.get("CARGO_HOME", rctx.os.environ.get("HOME", "") + "/.cargo")

    # Path-independent binary: the checkout, cargo home and target dir never
    # appear in it, so two checkouts produce the same bytes (remote cache hits).
    rustflags = " ".join([
        "--remap-path-prefix=" + tools_dir + "=/rules_rocm/tools",
        "--remap-path-prefix=" + cargo_home + "=/cargo",
        "--remap-path-prefix=" + target_dir + "=/target",
    ])
    rctx.report_progress("Building rocm-wheel with cargo (first build only)")
    result = rctx.execute(
        [
            cargo,
            "build",
            "--release",
            "--locked",
            "--manifest-path",
            str(manifest),
            "--target-dir",
            target_dir,
            "--bin",
            "rocm-wheel",
        ],
        environment = {
            "RUSTFLAGS": rustflags,
            "CARGO_TERM_COLOR": "never",
            "CARGO_INCREMENTAL": "0",
            "SOURCE_DATE_EPOCH": "315532800",
        },
        timeout = 3600,
        quiet = True,
    )
    if result.return_code != 0:
        fail("rules_rocm: `cargo build --release --locked` of the rocm-wheel tool failed " +
             "(exit {}).\nIf Cargo.lock is out of date run `cargo update -w --manifest-path {}`.\n{}\n{}".format(
                 result.return_code,
                 manifest,
                 result.stdout[-4000:],
                 result.stderr[-8000:],
             ))

    # A copy, not a symlink: a shared target dir may be rebuilt later.
    rctx.execute(["cp", "-f", target_dir + "/release/rocm-wheel", str(rctx.path("rocm-wheel"))])
    if not rctx.path("rocm-wheel").exists:
        fail("rules_rocm: cargo succeeded but {}/release/rocm-wheel is missing".format(target_dir))
    rctx.file("BUILD.bazel", """\
load("{toolchain_bzl}", "rocm_wheel_toolchain")

package(default_visibility = ["//visibility:public"])

exports_files(["rocm-wheel"])

rocm_wheel_toolchain(
    name = "rocm_wheel",
    rocm_wheel = ":rocm-wheel",
)

toolchain(
    name = "toolchain",
    exec_compatible_with = [
        "@platforms//os:linux",
        "@platforms//cpu:x86_64",
    ],
    toolchain = ":rocm_wheel",
    toolchain_type = "{toolchain_type}",
)
""".format(
        toolchain_bzl = _abs_label(Label("//rules/private:toolchain.bzl")),
        toolchain_type = _abs_label(Label("//rules:rocm_wheel_toolchain_type")),
    ))

rocm_wheel_cargo_repository = repository_rule(
    implementation = _rocm_wheel_cargo_repository_impl,
    environ = ["CARGO", "CARGO_HOME", "HOME", "PATH", "ROCM_WHEEL_CARGO_TARGET_DIR", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN"],
    local = False,
    doc = "Builds rocm-wheel from //tools with `cargo build --release --locked`.",
)
