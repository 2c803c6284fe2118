"""Repository rules for a prebuilt rocm-wheel as the toolchain.

WORKSPACE mode takes a binary built beforehand (`cargo build --release
--locked --manifest-path tools/Cargo.toml`, or `bazel build
//tools:rocm-wheel` in bzlmod), so WORKSPACE consumers need no rules_rust or
crate_universe setup. Bzlmod modules that use rules_rocm get a release
wheel's binary per execution platform (or one declared by path); only
rules_rocm's own repository builds the tool with rules_rust
(//rules:rocm_wheel_default_toolchain).
"""

load("//rules/private/util:labels.bzl", "abs_label")
load(":repository_utils.bzl", "attr_or_env", "render", "write_template")

_BUILD_IT = "cargo build --release --locked --manifest-path <rules_rocm>/tools/Cargo.toml"

# Execution platforms a release wheel can be declared for, and their constraints.
PREBUILT_PLATFORMS = {
    "aarch64-linux": ["@platforms//os:linux", "@platforms//cpu:aarch64"],
    "x86_64-linux": ["@platforms//os:linux", "@platforms//cpu:x86_64"],
}

def detect_rocm_wheel(rctx):
    """The prebuilt binary to use, checked; writes nothing.

    Returns struct(binary = its path, source = where it was given).
    """
    given = attr_or_env(rctx, rctx.attr.path, "rules_rocm_dependencies(rocm_wheel=)", "ROCM_WHEEL")
    if not given.value:
        fail("rules_rocm: WORKSPACE mode uses a prebuilt rocm-wheel, and none was given. " +
             "Build it (`{}`) ".format(_BUILD_IT) +
             "and pass rules_rocm_dependencies(rocm_wheel = \"/abs/path/rocm-wheel\") or " +
             "--repo_env=ROCM_WHEEL=/abs/path/rocm-wheel.")
    return struct(binary = _existing_binary(rctx, given.value, given.source), source = given.source)

def _existing_binary(rctx, path, source):
    """rctx.path(path), or fail() naming where it was given and how to build one."""
    binary = rctx.path(path)
    if not binary.exists or binary.is_dir:
        fail(("rules_rocm: the prebuilt rocm-wheel {} does not exist (from {}); build it with " +
              "`{}` and give its absolute path.").format(path, source, _BUILD_IT))
    return binary

_TOOLCHAIN_TYPE = Label("//rules:rocm_wheel_toolchain_type")

def _toolchain_stanza(rctx, name, constraints, toolchain):
    """A `toolchain()` of the rocm_wheel type, rendered for a generated BUILD file."""
    return render(rctx, "rocm_wheel_prebuilt.toolchain.BUILD.tpl", {
        "{NAME}": repr(name),
        "{EXEC_COMPATIBLE_WITH}": repr([abs_label(Label(c)) for c in constraints]),
        "{TOOLCHAIN}": repr(toolchain),
        "{TOOLCHAIN_TYPE}": repr(abs_label(_TOOLCHAIN_TYPE)),
    })

def _write_binary_build(rctx, toolchain = ""):
    """BUILD.bazel over ./rocm-wheel: a rocm_wheel_toolchain, then `toolchain` (a stanza, or none)."""
    write_template(rctx, "BUILD.bazel", "rocm_wheel_tools.BUILD.tpl", {
        "{TOOLCHAIN_BZL}": abs_label(Label("//rules/private/rules:rocm_wheel_toolchain.bzl")),
        "{TOOLCHAIN}": toolchain,
    })

def _rocm_wheel_prebuilt_repository_impl(rctx):
    found = detect_rocm_wheel(rctx)
    rctx.symlink(found.binary, "rocm-wheel")
    _write_binary_build(rctx, _toolchain_stanza(rctx, "toolchain", PREBUILT_PLATFORMS["x86_64-linux"], ":rocm_wheel"))

rocm_wheel_prebuilt_repository = repository_rule(
    implementation = _rocm_wheel_prebuilt_repository_impl,
    attrs = {
        "path": attr.string(doc = "Absolute path of a rocm-wheel binary; default: $ROCM_WHEEL."),
    },
    environ = ["ROCM_WHEEL"],
    doc = "The rocm_wheel toolchain over a prebuilt binary (WORKSPACE mode).",
)

# --- bzlmod: the release wheel's binary, per execution platform

def _wheel_binary_member(rctx):
    """`<dist>.data/scripts/rocm-wheel` of the extracted wheel, or fail()."""
    for entry in rctx.path("wheel").readdir():
        if entry.basename.endswith(".data"):
            binary = entry.get_child("scripts").get_child("rocm-wheel")
            if binary.exists:
                return binary
    fail("rules_rocm: {} has no rocm_wheel-<version>.data/scripts/rocm-wheel: not a rocm-wheel release wheel".format(rctx.attr.urls[0]))

def _rocm_wheel_release_repository_impl(rctx):
    if rctx.attr.path:
        binary = _existing_binary(rctx, rctx.attr.path, "rocm.prebuilt_tool(path = ...)")
    else:
        rctx.download_and_extract(url = rctx.attr.urls, sha256 = rctx.attr.sha256, type = "zip", output = "wheel")
        binary = _wheel_binary_member(rctx)

        # Bazel's zip extraction keeps no mode bits.
        rctx.execute(["chmod", "0755", str(binary)])
    rctx.symlink(binary, "rocm-wheel")

    # The hub declares the toolchain: this repository is fetched only when picked.
    _write_binary_build(rctx)

rocm_wheel_release_repository = repository_rule(
    implementation = _rocm_wheel_release_repository_impl,
    attrs = {
        "path": attr.string(doc = "A rocm-wheel binary on this machine instead of a download."),
        "sha256": attr.string(doc = "The release wheel's sha256."),
        "urls": attr.string_list(doc = "Mirrors of the release wheel."),
    },
    doc = "A rocm-wheel release wheel (pinned by sha256), unpacked: its binary as a rocm_wheel toolchain.",
)

def _rocm_wheel_prebuilt_hub_impl(rctx):
    stanzas = [
        _toolchain_stanza(rctx, platform, PREBUILT_PLATFORMS[platform], "@{}//:rocm_wheel".format(repo))
        for platform, repo in sorted(rctx.attr.repositories.items())
    ]
    write_template(rctx, "BUILD.bazel", "rocm_wheel_prebuilt.BUILD.tpl", {
        "{TOOLCHAINS}": "\n".join(stanzas),
        "{PLATFORMS}": ", ".join(sorted(rctx.attr.repositories)) or "none",
        "{UNRELEASED}": repr(rctx.attr.unreleased),
        "{TOOLCHAIN_BZL}": abs_label(Label("//rules/private/rules:rocm_wheel_toolchain.bzl")),
        "{TOOLCHAIN_TYPE}": repr(abs_label(_TOOLCHAIN_TYPE)),
    })

rocm_wheel_prebuilt_hub = repository_rule(
    implementation = _rocm_wheel_prebuilt_hub_impl,
    attrs = {
        "repositories": attr.string_dict(doc = "Execution platform (x86_64-linux) -> the repository of its binary."),
        "unreleased": attr.string(doc = "The rocm-wheel version when no release of it is declared (nothing to download), else empty."),
    },
    doc = "One rocm_wheel toolchain per platform a prebuilt binary is declared for (fetched only when " +
          "resolution picks it), then one that fails saying how to provide a binary.",
)

def declare_prebuilt_tool(root_tags, release):
    """The prebuilt rocm-wheel repositories and their hub, `rocm_wheel_prebuilt`.

    Args:
      root_tags: the root module's rocm.prebuilt_tool tags (they replace the release's entries).
      release: the release declaration (data/rocm_wheel_release.bzl).
    """
    wheels = {p: struct(urls = w.urls, sha256 = w.sha256, path = "") for p, w in release.wheels.items()}
    for tag in root_tags:
        if tag.platform not in PREBUILT_PLATFORMS:
            fail("rocm.prebuilt_tool(platform = \"{}\"): one of {}".format(tag.platform, ", ".join(sorted(PREBUILT_PLATFORMS))))
        if bool(tag.urls) == bool(tag.path):
            fail("rocm.prebuilt_tool(platform = \"{}\") needs exactly one of urls (a rocm_wheel release wheel, with sha256) and path (a binary)".format(tag.platform))
        wheels[tag.platform] = struct(urls = tag.urls, sha256 = tag.sha256, path = tag.path)
    repositories = {}
    for platform, w in wheels.items():
        repo = "rocm_wheel_release_" + platform.replace("-", "_")
        rocm_wheel_release_repository(name = repo, urls = w.urls, sha256 = w.sha256, path = w.path)
        repositories[platform] = repo
    rocm_wheel_prebuilt_hub(
        name = "rocm_wheel_prebuilt",
        repositories = repositories,
        # Nothing declared at all (no release, no tag of the root module):
        # say how to declare a binary; otherwise name the platforms that have one.
        unreleased = "" if repositories else release.version,
    )

PREBUILT_TOOL_TAG = tag_class(
    doc = "Where the prebuilt rocm-wheel of an execution platform comes from (root module), instead " +
          "of the release rules_rocm pins: a mirror of the release wheel, or a binary built here.",
    attrs = {
        "path": attr.string(doc = "Absolute path of a rocm-wheel binary (e.g. `cargo build --release`'s)."),
        "platform": attr.string(default = "x86_64-linux", doc = "x86_64-linux or aarch64-linux."),
        "sha256": attr.string(doc = "The wheel's sha256; required with urls."),
        "urls": attr.string_list(doc = "Mirrors of a rocm_wheel-<version>-py3-none-manylinux_*_<arch>.whl."),
    },
)
