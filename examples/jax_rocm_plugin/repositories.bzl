"""The third-party repositories of examples/jax_rocm_plugin (a dev-only module extension).

JAX's own BUILD files name these repositories; they are declared here for
the example only (`use_extension(..., dev_dependency = True)` in the root
MODULE.bazel), so modules that depend on rules_rocm never see them.

- `jax`: JAX 0.10.2's `jaxlib/` and `jax_plugins/` used unchanged, overlaid
  with stand-ins for what the example replaces (jaxlib/jax.bzl,
  jaxlib/pywrap.bzl, jaxlib/symlink_files.bzl, jax/BUILD) and one new
  package, jax_rocm_plugin/ (the modules as wheel files).
- `xla`: XLA's sources at the commit JAX 0.10.2 pins, under BUILD files
  written for the subset the plugin's modules use (third_party/xla/).
- `nanobind`, `eigen_archive`: upstream sources, pinned.
- `numpy_headers`: NumPy 2.4.6's C headers from each Python version's wheel,
  selected by rules_python's Python version; `numpy_cp3XX//:wheel` are those
  wheels for the install test.
- `jax_rocm7_plugin_pypi_cp312`: PyPI's wheel of the same release, for the
  side-by-side test.

The pristine sources are `http_archive`s; this machine cannot reach GitHub,
so its offline configuration (third_party/offline/bazel.bazelrc) points
`jax_src`, `xla_ffi_src` and `xla_extra_src` at ../shared/third_party with
--override_repository, and serves the others from a distdir.
"""

load("@bazel_tools//tools/build_defs/repo:http.bzl", "http_archive", "http_file")

# The JAX release whose sources are built; also the wheel's version.
JAX_VERSION = "0.10.2"

# GitHub's tarball of the jax-v0.10.2 tag. Not recomputable here (GitHub is
# unreachable, and a mirror of jax-ml/jax lacks blobs the tag's tree holds,
# so `git archive | gzip -n` cannot reproduce it): taken from an independent
# public pin of the same URL (docs/porting.md, "Pinning the sources").
# Offline builds override the repository (see above).
_JAX_SHA256 = "fa7214ab31ed1cd418b4305807e9c4f3f175c783eeea40c28e0f77c3f4c24bc7"

# openxla/xla at the commit jax-v0.10.2 pins, and the sha256 JAX pins for
# GitHub's tarball of it: both from JAX's third_party/xla/revision.bzl.
_XLA_COMMIT = "5a9e73cbd92530cac2ac36f4736a774b2412afe2"
_XLA_SHA256 = "08a52210a04cd68d38f6201d56273d04ac0f8b4e0da9f72677c74a48cc637422"

# XLA's packages the example builds from: BUILD file name here -> package.
_XLA_PACKAGES = {
    "ffi": "xla/ffi",
    "ffi_api": "xla/ffi/api",
    "pjrt": "xla/pjrt",
    "pjrt_c": "xla/pjrt/c",
    "python": "xla/python",
    "python_runtime": "third_party/python_runtime",
    "service": "xla/service",
    "tsl_platform": "xla/tsl/platform",
    "tsl_protobuf": "xla/tsl/protobuf",
    "tsl_python_core": "xla/tsl/python/lib/core",
    "tsl_concurrency": "xla/tsl/concurrency",
    "tsl_profiler": "xla/tsl/profiler",
    "tsl_util": "xla/tsl/util",
    "tsl": "third_party/tsl",
    "xla": "xla",
}

# NumPy 2.4.6 (the newest release with cp311-cp314 wheels), one manylinux
# x86_64 wheel per Python version: (URL path under files.pythonhosted.org/packages, sha256).
_NUMPY_VERSION = "2.4.6"
_NUMPY_WHEELS = {
    "3.11": ("02/03/74fe2a4cb3817d94d86402f2506554130a2f01414e299b5a843e5a8a957f", "89cd468399cfd2504718f0ba50e410dca55a170b61a02ad92bb18c8a65186e93"),
    "3.12": ("99/60/14115e6364fa676c5397c2ad3004e527e9aa487abf5d0706ec81bbd08529", "90f9849678c75fe7afa2d348ac842c168b0a4d3d61919687216dfc547976d853"),
    "3.13": ("a5/9d/3584b9984ca4c047aea75214ce1a4c4c73d849bd71b604264b7f5653f8a8", "a7830bab239b79cda9c08c2da014761cafb48da6150e1da17ac06283f43b6089"),
    "3.14": ("f3/eb/ebffaa97dc55502df69584a8f0dcf07f69a3e0b3e2323670a2722db9aa39", "a2c306dea656c12c68f51f4cea133cbe78ca7435eb28c735eac1d3ebe73be6e8"),
    # Free-threaded: for the install test only. Its C headers are the cp314
    # wheel's, byte for byte, so numpy_headers selects on the version alone.
    "3.14t": ("51/e7/38d3ea825dcab85a591734decb2f6c67caa7c8367d374df1a1c3842f9b07", "7d92c3819208a60205a12a245c91ad70cb0a85336659b19b834205573ac8456e"),
}

# A source repository's only target: a file the overlay finds its root by.
_MARKER = 'exports_files(["BUILD.bazel"])\n'

_BUILD_FILES = ["BUILD", "BUILD.bazel"]

def _link_tree(rctx, root, include, skip, skip_build_files):
    """Links every file under `root` (only the top-level entries in `include`), except `skip`."""
    stack = [(e, e.basename) for e in root.readdir() if e.basename in include]

    # Starlark has no recursion or while: a stack, bounded by the file count.
    for _ in range(1000000):
        if not stack:
            break
        entry, rel = stack.pop()
        if rel in skip or (skip_build_files and entry.basename in _BUILD_FILES):
            continue
        if entry.is_dir:
            stack.extend([(e, rel + "/" + e.basename) for e in entry.readdir()])
        elif not rctx.path(rel).exists:
            rctx.symlink(entry, rel)

def _overlay_impl(rctx):
    skip = {path: True for path in rctx.attr.overlay.values()}
    for label, path in rctx.attr.overlay.items():
        rctx.symlink(label, path)
    for marker in rctx.attr.srcs:
        _link_tree(rctx, rctx.path(marker).dirname, rctx.attr.include, skip, rctx.attr.skip_build_files)
    for patch in rctx.attr.patches:
        # The links point into the pristine sources: a patched file is
        # copied first, so the patch changes this repository's copy only.
        for line in rctx.read(patch).splitlines():
            if line.startswith("+++ b/"):
                path = line[len("+++ b/"):].split("\t")[0]
                if rctx.path(path).exists:
                    content = rctx.read(path)
                    rctx.delete(path)
                    rctx.file(path, content, executable = False)
        rctx.patch(patch, strip = 1)
    rctx.file("REPO.bazel", "")
    if not rctx.path("BUILD.bazel").exists:
        rctx.file("BUILD.bazel", 'exports_files(glob(["*"]))\n')

overlay_repository = repository_rule(
    implementation = _overlay_impl,
    attrs = {
        "include": attr.string_list(mandatory = True, doc = "Top-level entries of the sources to link."),
        "overlay": attr.label_keyed_string_dict(allow_files = True, doc = "File -> its path here (wins over the sources')."),
        "patches": attr.label_list(allow_files = [".patch"], doc = "Patches (-p1) applied to the linked sources, each file it changes copied first."),
        "skip_build_files": attr.bool(doc = "Link no BUILD files of the sources: the overlay's are the only packages."),
        "srcs": attr.label_list(mandatory = True, doc = "The marker file at the root of each source repository (files of earlier ones win)."),
    },
    doc = "Per-file links into source repositories, plus files that replace or add to them.",
)

def _github_archive(name, sha256, strip_prefix, url):
    """A pinned source archive from GitHub, with a marker file at its root for overlay_repository."""
    http_archive(name = name, build_file_content = _MARKER, sha256 = sha256, strip_prefix = strip_prefix, urls = [url])

def _third_party_archive(name, build_file, sha256, strip_prefix, url, patches = []):
    """A pinned upstream source archive with a BUILD file from third_party/ here (`build_file`: its path after third_party)."""
    http_archive(
        name = name,
        build_file = "//examples/jax_rocm_plugin/third_party" + build_file,
        sha256 = sha256,
        strip_prefix = strip_prefix,
        urls = [url],
        patches = ["//examples/jax_rocm_plugin/third_party" + p for p in patches],
        patch_args = ["-p1"],
    )

def _numpy_wheel_impl(rctx):
    name = rctx.attr.url.rpartition("/")[2]
    rctx.download(url = rctx.attr.url, output = name, sha256 = rctx.attr.sha256)

    # extract() knows archives by their file name's extension only.
    rctx.symlink(name, "wheel.zip")
    rctx.extract("wheel.zip", output = "unpacked")
    rctx.file("BUILD.bazel", """package(default_visibility = ["//visibility:public"])

# NumPy's C headers as this Python version's wheel ships them.
cc_library(
    name = "headers",
    hdrs = glob(["unpacked/numpy/_core/include/numpy/**/*.h"]),
    includes = ["unpacked/numpy/_core/include"],
)

# The wheel itself, offered to pip by the install test.
filegroup(
    name = "wheel",
    srcs = ["{}"],
)
""".format(name))

_numpy_wheel_repository = repository_rule(
    implementation = _numpy_wheel_impl,
    attrs = {"sha256": attr.string(mandatory = True), "url": attr.string(mandatory = True)},
    doc = "A NumPy wheel: its C headers and the wheel file.",
)

def _numpy_hub_impl(rctx):
    rctx.file("BUILD.bazel", """package(default_visibility = ["//visibility:public"])

# The headers of the wheel for the configuration's Python version.
alias(
    name = "headers",
    actual = select(
        {select},
        no_match_error = "NumPy headers exist for Python {versions} only (examples/jax_rocm_plugin/repositories.bzl)",
    ),
)
""".replace("{select}", repr({
        "@rules_python//python/config_settings:is_python_" + v: "@{}//:headers".format(repo)
        for v, repo in rctx.attr.versions.items()
    })).replace("{versions}", ", ".join(sorted(rctx.attr.versions.keys()))))

_numpy_hub_repository = repository_rule(
    implementation = _numpy_hub_impl,
    attrs = {"versions": attr.string_dict(doc = "Python minor version -> repository of its NumPy wheel.")},
)

# The protobuf release the example builds (com_google_protobuf below): a
# protoc from elsewhere must be this one, or the generated code would not
# match the runtime library.
_PROTOBUF_VERSION = "3.21.12"

def _protoc_impl(rctx):
    given = rctx.os.environ.get("RULES_ROCM_PROTOC", "")
    if not given:
        # protoc built from the pinned sources, in the exec configuration.
        rctx.file("BUILD.bazel", 'alias(name = "protoc", actual = "@com_google_protobuf//:protoc", visibility = ["//visibility:public"])\n')
        return
    path = rctx.path(given)
    result = rctx.execute([path, "--version"])
    want = "libprotoc " + _PROTOBUF_VERSION
    if result.return_code != 0 or result.stdout.strip() != want:
        fail(("RULES_ROCM_PROTOC={} says {}, not {}: the example's generated code must come from the " +
              "protoc of the protobuf release it links ({}). Point RULES_ROCM_PROTOC at that protoc, or unset " +
              "it to build protoc from the pinned sources.").format(given, repr((result.stdout + result.stderr).strip()), repr(want), _PROTOBUF_VERSION))
    rctx.symlink(path, "protoc")
    rctx.file("BUILD.bazel", 'exports_files(["protoc"], visibility = ["//visibility:public"])\n')

_protoc_repository = repository_rule(
    implementation = _protoc_impl,
    environ = ["RULES_ROCM_PROTOC"],
    doc = "protoc for the example's protos: built from the pinned protobuf sources, or, with " +
          "--repo_env=RULES_ROCM_PROTOC=<path>, an installed protoc of the same release.",
)

def _numpy_repo(version):
    return "numpy_cp" + version.replace(".", "")

def _jax_rocm_plugin_impl(module_ctx):
    # JAX: the tag's sources (offline: ../shared/third_party/jax-0.10.2-src).
    _github_archive(
        name = "jax_src",
        sha256 = _JAX_SHA256,
        strip_prefix = "jax-jax-v" + JAX_VERSION,
        url = "https://github.com/jax-ml/jax/archive/refs/tags/jax-v{}.tar.gz".format(JAX_VERSION),
    )
    overlay_repository(
        name = "jax",
        srcs = ["@jax_src//:BUILD.bazel"],
        include = ["LICENSE", "jax_plugins", "jaxlib"],
        overlay = {
            "//examples/jax_rocm_plugin/third_party/jax:jax.bzl": "jaxlib/jax.bzl",
            "//examples/jax_rocm_plugin/third_party/jax:pywrap.bzl": "jaxlib/pywrap.bzl",
            "//examples/jax_rocm_plugin/third_party/jax:symlink_files.bzl": "jaxlib/symlink_files.bzl",
            "//examples/jax_rocm_plugin/third_party/jax:jax.BUILD": "jax/BUILD.bazel",
            "//examples/jax_rocm_plugin/third_party/jax:plugin.BUILD": "jax_rocm_plugin/BUILD.bazel",
        },
        # rocm_plugin_extension without PJRT's client, HLO and MLIR
        # (docs/porting.md explains each hunk).
        patches = ["//examples/jax_rocm_plugin/third_party/jax:rocm_plugin_extension.patch"],
    )

    # XLA at the commit JAX 0.10.2 pins (its third_party/xla/revision.bzl):
    # the sources of the small libraries the plugin's modules need, under
    # BUILD files written for that subset (third_party/xla/*.BUILD; XLA's own
    # load 15 repositories of TSL's build macros and are not linked).
    _github_archive(
        name = "xla_src",
        sha256 = _XLA_SHA256,
        strip_prefix = "xla-" + _XLA_COMMIT,
        url = "https://github.com/openxla/xla/archive/{}.tar.gz".format(_XLA_COMMIT),
    )
    overlay_repository(
        name = "xla",
        srcs = ["@xla_src//:BUILD.bazel"],
        include = ["LICENSE", "xla", "third_party"],
        skip_build_files = True,
        # abseil 20260526's absl/log/check.h no longer brings ABSL_CHECK_*.
        patches = ["//examples/jax_rocm_plugin/third_party/xla:absl_check.patch"],
        overlay = {
            Label("//examples/jax_rocm_plugin/third_party/xla:{}.BUILD".format(name)): path + "/BUILD.bazel"
            for name, path in _XLA_PACKAGES.items()
        },
    )

    # protobuf (JAX and XLA pin 32.1; 3.21.12 is the release Debian's
    # archive serves the sources of) and zlib: Debian's copies of the upstream
    # release tarballs.
    _third_party_archive(
        name = "com_google_protobuf",
        build_file = "/protobuf:protobuf.BUILD",
        sha256 = "930c2c3b5ecc6c9c12615cf5ad93f1cd6e12d0aba862b572e076259970ac3a53",
        strip_prefix = "protobuf-3.21.12",
        url = "http://deb.debian.org/debian/pool/main/p/protobuf/protobuf_3.21.12.orig.tar.gz",
    )
    _protoc_repository(name = "jax_rocm_plugin_protoc")
    _third_party_archive(
        name = "zlib",
        build_file = ":zlib.BUILD",
        sha256 = "60dd315c07f616887caa029408308a018ace66e3d142726a97db164b3b8f69fb",
        strip_prefix = "zlib-1.3.1",
        url = "http://deb.debian.org/debian/pool/main/z/zlib/zlib_1.3.dfsg+really1.3.1.orig.tar.gz",
    )

    # Hash functions whose headers XLA's printer and TSL's fingerprint
    # include (no source of theirs is linked): Debian's copies of upstream
    # snapshots.
    _third_party_archive(
        name = "highwayhash",
        build_file = ":highwayhash.BUILD",
        sha256 = "00e76b3387fdb2941301fb1883b8f3d9f0f6cd74be2e3a3776f8dcfbb4564615",
        strip_prefix = "highwayhash-0~git20200803.9490b14",
        url = "http://deb.debian.org/debian/pool/main/h/highwayhash/highwayhash_0~git20200803.9490b14.orig.tar.xz",
    )
    _third_party_archive(
        name = "farmhash",
        build_file = ":farmhash.BUILD",
        sha256 = "e2fc97337d22a598d1b35697c20a9a9c638abccff2793e2cab12d01eec5bc496",
        strip_prefix = "farmhash-0~git20190513.0d859a8",
        url = "http://deb.debian.org/debian/pool/main/f/farmhash/farmhash_0~git20190513.0d859a8.orig.tar.xz",
    )

    # ml_dtypes' C++ headers (float8, intn: TSL's types.h), PyPI's sdist.
    _third_party_archive(
        name = "ml_dtypes_py",
        build_file = ":ml_dtypes.BUILD",
        sha256 = "5e60251d32ced5598972e4d5e06a2f044341f9291402551a3f6f0ec44f9299b0",
        strip_prefix = "ml_dtypes-0.6.0",
        url = "https://files.pythonhosted.org/packages/12/72/307d7c4bd0600601c7133fba5cb78af7db968152951c1cd473abb1cda782/ml_dtypes-0.6.0.tar.gz",
    )

    # DLPack's header (XLA pins v1.1 from GitHub; its enums grow only): the
    # copy apache-tvm-ffi's sdist on PyPI carries (v1.3).
    _third_party_archive(
        name = "dlpack",
        build_file = ":dlpack.BUILD",
        sha256 = "909be9ef5af07726aa9afd38a3111abc4d86cfd5927ebedfa9166232ce7d287b",
        strip_prefix = "apache_tvm_ffi-0.1.15.post2/3rdparty/dlpack",
        url = "https://files.pythonhosted.org/packages/a8/8f/2fcd88ce2f43dd2c1945c6613356a9bc1f5fdbe6e37080d34d2b980ad9f6/apache_tvm_ffi-0.1.15.post2.tar.gz",
    )

    # nanobind as jaxlib 0.10.2 has it: XLA pins commit 30f12ae, 2.12.0 and
    # ten commits, versioned 2.12.1.dev1, whose internals are 2.12.0's
    # (NB_INTERNALS_VERSION 19 in both). PyPI's 2.12.0 sdist (includes
    # robin_map) with the pin's version (nanobind_abi.patch): the ABI tag
    # of its internals record is then jaxlib's, so the modules share the
    # record (and the types) _jax registers (docs/porting.md).
    _third_party_archive(
        name = "nanobind",
        build_file = ":nanobind.BUILD",
        patches = [":nanobind_abi.patch"],
        sha256 = "0ae77c1a88f27153fa57045ee00f7b0a7b06b1cd3df942e95a34b38c5d0a5bee",
        strip_prefix = "nanobind-2.12.0",
        url = "https://files.pythonhosted.org/packages/c6/5c/3b69bc3933ad3c3668ba029ad410ba8ecfdc8ee7262ff1009f3304f3c562/nanobind-2.12.0.tar.gz",
    )

    # Eigen 5.0.1, Debian's copy of the upstream tarball.
    _third_party_archive(
        name = "eigen_archive",
        build_file = ":eigen.BUILD",
        sha256 = "197d404a98cb1f99925c4e2cbda278881b167ee2e6437ed97cffb5f9d4952e75",
        strip_prefix = "eigen3-5.0.1",
        url = "http://deb.debian.org/debian/pool/main/e/eigen3/eigen3_5.0.1.orig.tar.bz2",
    )

    for version, (path, sha256) in _NUMPY_WHEELS.items():
        abi = "cp" + version.replace(".", "")
        _numpy_wheel_repository(
            name = _numpy_repo(version),
            sha256 = sha256,
            url = "https://files.pythonhosted.org/packages/{}/numpy-{}-{}-{}-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl".format(path, _NUMPY_VERSION, abi.rstrip("t"), abi),
        )
    _numpy_hub_repository(
        name = "numpy_headers",
        versions = {v: _numpy_repo(v) for v in _NUMPY_WHEELS if not v.endswith("t")},
    )

    # What the side-by-side test compares with: PyPI's wheel of this release.
    pypi_plugin = "jax_rocm7_plugin-{}-cp312-cp312-manylinux_2_27_x86_64.whl".format(JAX_VERSION)
    http_file(
        name = "jax_rocm7_plugin_pypi_cp312",
        downloaded_file_path = pypi_plugin,
        sha256 = "b3b48436c4536724213bcf152c2706674ef46ef85478b6870b2695d0ef3c69b9",
        urls = ["https://files.pythonhosted.org/packages/43/84/45ecc8791671df193e289144ce3b98ee4334b1f701564d9f74eb34415a26/" + pypi_plugin],
    )
    return module_ctx.extension_metadata(reproducible = True)

jax_rocm_plugin = module_extension(
    implementation = _jax_rocm_plugin_impl,
    doc = "JAX, XLA (parts), nanobind, Eigen and NumPy headers for examples/jax_rocm_plugin.",
)
