"""Repository rule: a sysroot (glibc, libstdc++ and kernel headers of an old distribution) and a clang C++ toolchain over it.

Wheels are only as portable as the oldest glibc their binaries were linked
against: a sysroot declared as a pinned input makes the manylinux tag a
property of the build, not of the machine that happens to run it. The
repository is made from Debian packages (`debs`, each pinned by sha256) or
one archive (`urls` + `sha256`); what it holds is detected (`_detect`, a
struct) and then written from templates/sysroot.*.tpl.
"""

load(":hip_detect.bzl", "find_clang")
load(":labels.bzl", "abs_label")
load(":repository_utils.bzl", "exists", "stdout_or_fail", "write_template")

_ROOT = "sysroot"

# Debian packages carry absolute symlinks (libc.so's neighbours,
# lib64/ld-linux-x86-64.so.2) meant for the sysroot's own root; Bazel's
# extraction points them into the repository ($2). Made relative within the
# sysroot ($1). Links to packages the sysroot leaves out (gcc's libasan.so,
# ...) are removed rather than left dangling.
_FIX_LINKS = """
set -eu
cd "$1"
find . -type l -lname '/*' | while read -r link; do
  target=$(readlink "$link")
  case $target in
    "$1"/*) target=${target#"$1"} ;;
    "$2"/*) target=${target#"$2"} ;;
  esac
  up=$(dirname "${link#./}" | sed -E 's|[^/]+|..|g')
  ln -sfn "$up$target" "$link"
done
find . -xtype l -delete
"""

# libstdc++ linked statically and hidden (--exclude-libs), or as the shared
# library. The sysroot's libstdc++ sets the floor of every C++ file linked
# against it: gcc 9 and 10's headers call symbols of GLIBCXX_3.4.26+, which
# the manylinux policies only allow from manylinux_2_31 (Debian 11's own
# libstdc++); statically, a file needs no GLIBCXX version at all and its
# floor is glibc's. Every library rules_rocm links exports only what its
# version script or visibility says, so no libstdc++ symbol leaks.
_LINK_LIBS = {
    "shared": [
        "-Wl,--push-state,-as-needed",
        "-lstdc++",
        "-Wl,--pop-state",
        "-Wl,--push-state,-as-needed",
        "-lm",
        "-Wl,--pop-state",
    ],
    "static": [
        "-Wl,--push-state,-Bstatic",
        "-lstdc++",
        "-Wl,--pop-state",
        "-Wl,--exclude-libs=libstdc++.a",
        "-Wl,--push-state,-as-needed",
        "-lm",
        "-Wl,--pop-state",
    ],
}

def _fetch_debs(rctx):
    for url, sha256 in sorted(rctx.attr.debs.items()):
        name = url.rsplit("/", 1)[-1]
        if not name.endswith(".deb"):
            fail("rocm.sysroot(name = \"{}\"): {} is not a .deb; give Debian packages in debs, or one archive with urls + sha256".format(rctx.attr.sysroot, url))
        rctx.download(url = url, output = "debs/" + name, sha256 = sha256)
        rctx.extract("debs/" + name, output = "debs/" + name[:-4])
        data = [e for e in rctx.path("debs/" + name[:-4]).readdir() if e.basename.startswith("data.tar")]
        if len(data) != 1:
            fail("{}: no data.tar.* member in the package".format(url))
        rctx.extract(data[0], output = _ROOT)
    rctx.delete("debs")

def _glibc_version(rctx):
    features = _ROOT + "/usr/include/features.h"
    if not exists(rctx, features):
        fail("rocm.sysroot(name = \"{}\"): no usr/include/features.h: the sysroot lacks glibc's headers (Debian: libc6-dev)".format(rctx.attr.sysroot))
    found = {}
    for line in rctx.read(features).splitlines():
        words = [w for w in line.replace("\t", " ").split(" ") if w]
        if len(words) == 3 and words[0] == "#define" and words[1] in ("__GLIBC__", "__GLIBC_MINOR__"):
            found[words[1]] = words[2]
    if len(found) != 2:
        fail("rocm.sysroot(name = \"{}\"): usr/include/features.h does not define __GLIBC__ and __GLIBC_MINOR__".format(rctx.attr.sysroot))
    return "{}.{}".format(found["__GLIBC__"], found["__GLIBC_MINOR__"])

def _gcc_version(rctx):
    """The libstdc++ the sysroot holds: usr/lib/gcc/<triple>/<version>/ with crtbegin.o."""
    base = rctx.path(_ROOT + "/usr/lib/gcc/x86_64-linux-gnu")
    versions = [e.basename for e in base.readdir() if e.get_child("crtbegin.o").exists] if base.exists else []
    if not versions:
        fail("rocm.sysroot(name = \"{}\"): no usr/lib/gcc/x86_64-linux-gnu/<version>/crtbegin.o: the sysroot lacks gcc's runtime (Debian: libgcc-<N>-dev, libstdc++-<N>-dev)".format(rctx.attr.sysroot))
    return sorted(versions, key = lambda v: [int(p) if p.isdigit() else 0 for p in v.split(".")])[-1]

def _detect(rctx):
    clang = rctx.attr.clang or find_clang(rctx)
    if not clang:
        fail("rocm.sysroot(name = \"{}\"): no clang++ found (looked at the ROCm's LLVM: $ROCM_PATH, /opt/rocm, /usr/lib/llvm-<N>); set clang = \"/path/to/clang++\"".format(rctx.attr.sysroot))
    bindir = str(rctx.path(clang).dirname)
    tools = {}

    # The C driver: Bazel compiles C and C++ and links with one tool; as
    # clang++ it would compile .c files as C++.
    for tool in ("clang", "llvm-ar", "llvm-nm", "llvm-objcopy", "llvm-objdump", "llvm-strip", "ld.lld"):
        if not exists(rctx, bindir + "/" + tool):
            fail("rocm.sysroot(name = \"{}\"): {} has no {} next to it; the toolchain links with lld and archives with llvm-ar".format(rctx.attr.sysroot, clang, tool))
        tools[tool] = bindir + "/" + tool
    return struct(
        clang = clang,
        tools = tools,
        resource_dir = stdout_or_fail(rctx, [clang, "-print-resource-dir"], "{} -print-resource-dir failed".format(clang)).strip(),
        glibc = _glibc_version(rctx),
        gcc = _gcc_version(rctx),
    )

def _sysroot_impl(rctx):
    if bool(rctx.attr.debs) == bool(rctx.attr.urls):
        fail("rocm.sysroot(name = \"{}\") needs exactly one of debs ({{url: sha256}} of Debian packages) and urls (one archive, with sha256)".format(rctx.attr.sysroot))
    if rctx.attr.debs:
        _fetch_debs(rctx)
    else:
        if not rctx.attr.sha256:
            fail("rocm.sysroot(name = \"{}\"): urls need sha256".format(rctx.attr.sysroot))
        rctx.download_and_extract(url = rctx.attr.urls, sha256 = rctx.attr.sha256, stripPrefix = rctx.attr.strip_prefix, output = _ROOT)
    r = rctx.execute(["sh", "-c", _FIX_LINKS, "sh", str(rctx.path(_ROOT)), str(rctx.path("."))])
    if r.return_code != 0:
        fail("rocm.sysroot(name = \"{}\"): making its symlinks relative failed: {}".format(rctx.attr.sysroot, r.stderr))
    found = _detect(rctx)
    execroot_path = "external/{}/{}".format(rctx.name, _ROOT)
    gcc = found.gcc
    write_template(rctx, "BUILD.bazel", "sysroot.BUILD.tpl", {
        "{SYSROOT_BZL}": repr(abs_label(Label("//rules/private:sysroot.bzl"))),
        "{NAME}": repr(rctx.attr.sysroot),
        "{ROOT}": repr(_ROOT),
        "{GLIBC}": repr(found.glibc),
        "{GCC}": repr(gcc),
        "{CLANG}": repr(found.tools["clang"]),
        "{TOOLS}": repr(found.tools),
        "{BUILTIN_SYSROOT}": repr(execroot_path),
        "{GCC_TOOLCHAIN}": repr("--gcc-toolchain={}/usr".format(execroot_path)),
        "{LINK_LIBS}": repr(_LINK_LIBS[rctx.attr.libstdcxx]),
        "{INCLUDE_DIRS}": repr([
            found.resource_dir + "/include",
            "%sysroot%/usr/include",
            "%sysroot%/usr/include/x86_64-linux-gnu",
            "%sysroot%/usr/include/c++/" + gcc,
            "%sysroot%/usr/include/x86_64-linux-gnu/c++/" + gcc,
            "%sysroot%/usr/include/c++/{}/backward".format(gcc),
            "%sysroot%/usr/lib/gcc/x86_64-linux-gnu/{}/include".format(gcc),
        ]),
    })

rocm_sysroot_repository = repository_rule(
    implementation = _sysroot_impl,
    attrs = {
        "clang": attr.string(doc = "The clang++ that compiles and links against the sysroot (default: the ROCm's, found as rocm_hip_repository finds it)."),
        "debs": attr.string_dict(doc = "Debian packages {url: sha256} unpacked into the sysroot."),
        "libstdcxx": attr.string(default = "static", values = ["static", "shared"], doc = "How C++ code links the sysroot's libstdc++: `static` (hidden in each library; the floor is glibc's) or `shared` (the floor is also libstdc++'s)."),
        "rocm_path": attr.string(doc = "Where to look for the ROCm whose clang++ is used (default: $ROCM_PATH, /opt/rocm, /usr)."),
        "sha256": attr.string(doc = "The archive's sha256 (with urls)."),
        "strip_prefix": attr.string(doc = "A directory prefix to strip from the archive's paths."),
        "sysroot": attr.string(mandatory = True, doc = "The sysroot's name (the value of --@rules_rocm//rocm:sysroot)."),
        "urls": attr.string_list(doc = "Mirrors of one archive holding the sysroot (usr/include, usr/lib, lib, ...)."),
    },
    environ = ["ROCM_PATH"],
    doc = "A sysroot from pinned Debian packages or an archive, and a clang cc_toolchain compiling and linking against it.",
)
