"""The actions of hip_library, one function per kind; each declares its outputs and returns them.

Per source file `src` of a target `name` (rules/private/rules/hip_library.bzl):

  device_compile  clang++ --cuda-device-only --offload-arch=<gfx>  -> <key>.<gfx>.co    HipDeviceCompile
  host_compile    clang++ --cuda-host-only, embeds a placeholder   -> <key>.host.o      HipHostCompile
  bundle          `rocm-wheel bundle write` (clang-offload-bundler
                  for a host-only bundle)                          -> <key>.hipfb       HipBundle
  embed           llvm-objcopy --update-section .hip_fatbin        -> <key>.pic.o       HipEmbed

With --//:hip_device_code=kpack, bundle and embed give way to:

  kpack_marker    `rocm-wheel kpack marker`: the marker naming the
                  source's code objects in the archives, and a HIPK
                  fat-binary wrapper                               -> <key>.kpackref,
                                                                      <key>.hipk         HipKpackMarker
  embed_kpack     llvm-objcopy: .hip_fatbin becomes .rocm_kpack_ref
                  holding the marker, the wrapper says HIPK        -> <key>.pic.o       HipEmbed
  kernel_check    `rocm-wheel kernels check`: every kernel the host
                  object registers is in every code object         -> <key>.kernels     HipKernelCheck

Outputs live under `_hip/<name>/`, named by `<key>`: the source's path
relative to the package (`a/k.hip`), so sources with equal basenames in
different directories never share an output. A source outside the package's
directory (another package or repository) goes under `_hip_other/<name>/` by
its short path (`../` spelled `_up/`), apart from the package's own.
"""

load("//rules/private/util:labels.bzl", "label_as_typed", "repo_relative_path")
load(":rocm_wheel.bzl", "rocm_wheel_bundle", "rocm_wheel_kernels_check", "rocm_wheel_kpack_marker")

_HOST_TRIPLE = "x86_64-unknown-linux-gnu"
_HIP_OFFLOAD_KIND = "hipv4-amdgcn-amd-amdhsa--"

def _output_stem(ctx, src):
    """`_hip/<name>/<path of src below the package>`, or `_hip_other/<name>/<short path>` for a source outside it."""
    repo = ctx.label.workspace_name
    prefix = "/".join([p for p in ["../" + repo if repo else "", ctx.label.package] if p])
    path = src.short_path
    if not prefix:
        if not path.startswith("../"):
            return "_hip/{}/{}".format(ctx.label.name, path)
    elif path.startswith(prefix + "/"):
        return "_hip/{}/{}".format(ctx.label.name, path[len(prefix) + 1:])
    return "_hip_other/{}/{}".format(ctx.label.name, path.replace("../", "_up/"))

def _declare(ctx, src, suffix):
    return ctx.actions.declare_file(_output_stem(ctx, src) + suffix)

_MODE_FLAGS = {
    # Device code as nvcc builds it by default: optimised in every mode but
    # dbg, since unoptimised kernels are not what anyone runs or measures.
    "dbg": struct(host = ["-O0", "-g"], device = ["-O0", "-g"]),
    "fastbuild": struct(host = ["-O2"], device = ["-O3"]),
    "opt": struct(host = ["-O2", "-DNDEBUG"], device = ["-O3", "-DNDEBUG"]),
}

def mode_flags(ctx):
    """struct(host, device): the flags of `-c dbg|fastbuild|opt`."""
    return _MODE_FLAGS[ctx.var["COMPILATION_MODE"]]

def define_flags(defines):
    return ["-D" + d for d in defines]

def context_flags(compilation_context):
    """Include flags of a compilation context, as cc_library compiles pass them (its defines are not included)."""
    flags = []
    for d in compilation_context.includes.to_list():
        flags += ["-I", d]
    for d in compilation_context.quote_includes.to_list():
        flags += ["-iquote", d]
    for d in compilation_context.system_includes.to_list():
        flags += ["-isystem", d]
    return flags

def _rocm_includes(hip):
    # clang adds <rocm-path>/include with -idirafter, behind /usr/include: on
    # a machine that also has a system ROCm (Debian's in /usr), the system's
    # HIP and rocPRIM headers would win over the toolkit's. hipcc passes
    # -isystem for the same reason.
    if hip.rocm_path in ("", "/usr"):
        return []
    return ["-isystem", hip.rocm_path + "/include"]

def device_compile(ctx, hip, src, target, flags, headers):
    """Compiles the device code of one source for one gfx target.

    Args:
      ctx: the rule context (declares `_hip/<name>/<key>.<target>.co`).
      hip: HipToolchainInfo with a compiler.
      src: File, the HIP source.
      target: the gfx target, e.g. "gfx1201"; the command names no other.
      flags: flags after the fixed ones (mode, global and target flags, includes, defines).
      headers: depset of the header Files the compile may read (the target's and its deps').

    Returns:
      File: the code object (ELF) for `target`.
    """
    co = _declare(ctx, src, ".{}.co".format(target))
    args = ctx.actions.args()
    args.add_all([
        "-x",
        "hip",
        "--offload-arch=" + target,
        "--cuda-device-only",
        "--no-gpu-bundle-output",
        "-std=c++17",
        "--rocm-path=" + hip.rocm_path,
        "--rocm-device-lib-path=" + hip.device_lib_path,
    ])
    args.add_all(_rocm_includes(hip))
    if target in hip.compiler.nogpulib_targets:
        args.add("-nogpulib")
    args.add_all(flags)
    args.add_all(["-c", src.path, "-o", co.path])
    ctx.actions.run(
        executable = hip.compiler.executable,
        arguments = [args],
        inputs = depset([src], transitive = [headers, hip.files]),
        outputs = [co],
        mnemonic = "HipDeviceCompile",
        progress_message = "Compiling HIP device code %s for %s" % (src.short_path, target),
    )
    return co

def placeholder_bundle(ctx):
    """The constant bundle every host compile embeds (HipEmbed swaps in the real one).

    Its bytes never change, so neither do the host compiles' action keys:
    changing the gfx set never recompiles host code.

    Returns:
      File: `_hip/<name>/placeholder.hipfb`.
    """
    placeholder = ctx.actions.declare_file("_hip/{}/placeholder.hipfb".format(ctx.label.name))
    ctx.actions.write(placeholder, "rules_rocm: replaced by HipEmbed with the offload bundle\n")
    return placeholder

def host_compile(ctx, hip, src, placeholder, flags, headers):
    """Compiles the host code of one source, independent of the gfx set.

    Args:
      ctx: the rule context (declares `_hip/<name>/<key>.host.o`).
      hip: HipToolchainInfo with a compiler.
      src: File, the HIP source.
      placeholder: File from placeholder_bundle(), embedded as .hip_fatbin.
      flags: flags after the fixed ones (mode, global and target flags, includes, defines).
      headers: depset of the header Files the compile may read (the target's and its deps').

    Returns:
      File: the PIC host object, its .hip_fatbin section holding the placeholder.
    """
    host = _declare(ctx, src, ".host.o")
    args = ctx.actions.args()
    args.add_all([
        "-x",
        "hip",
        "--cuda-host-only",
        "--offload-arch=" + hip.host_offload_arch,
        "-fPIC",
        "-std=c++17",
        "--rocm-path=" + hip.rocm_path,
    ])
    args.add_all(_rocm_includes(hip))
    args.add_all(flags)
    args.add_all(["-Xclang", "-fcuda-include-gpubinary", "-Xclang", placeholder.path])
    args.add_all(["-c", src.path, "-o", host.path])
    ctx.actions.run(
        executable = hip.compiler.executable,
        arguments = [args],
        inputs = depset([src, placeholder], transitive = [headers, hip.files]),
        outputs = [host],
        mnemonic = "HipHostCompile",
        progress_message = "Compiling HIP host code %s" % src.short_path,
    )
    return host

def bundle(ctx, hip, src, entries, compress):
    """Writes the offload bundle of one source.

    `rocm-wheel bundle write` writes every bundle with device code (in any
    compression). A source no target compiles (all left out by
    skip_unsupported_targets) still gets a host-only bundle, written by
    clang-offload-bundler (rocm-wheel wants at least one entry): without one
    clang leaves __hip_fatbin undefined. It loads fine; launches fail with
    hipErrorNoBinaryForGpu, as on any GPU the build did not target.

    Args:
      ctx: the rule context (declares `_hip/<name>/<key>.hipfb`).
      hip: HipToolchainInfo.
      src: File, the source the bundle belongs to (names the output).
      entries: list of (gfx target, code-object File), sorted by target.
      compress: "none", "zstd" or "zlib" (resolved, not "auto").

    Returns:
      File: the offload bundle.
    """
    out = _declare(ctx, src, ".hipfb")
    inputs = [co for _, co in entries]
    progress = "Bundling %s for %s" % (src.short_path, ",".join([t for t, _ in entries]))
    if entries:
        rocm_wheel_bundle(
            ctx,
            [(_HIP_OFFLOAD_KIND + t, co) for t, co in entries],
            compress,
            _HOST_TRIPLE,
            out,
            progress,
        )
    else:
        ctx.actions.run(
            executable = hip.bundler,
            arguments = [
                "-type=o",
                "-bundle-align=4096",
                "-targets=host-" + _HOST_TRIPLE,
                "-input=/dev/null",
                "-output=" + out.path,
            ],
            inputs = depset(inputs, transitive = [hip.files]),
            outputs = [out],
            mnemonic = "HipBundle",
            progress_message = progress,
        )
    return out

def embed(ctx, hip, src, host_object, offload_bundle, target_count):
    """Replaces the host object's placeholder .hip_fatbin with the real bundle.

    The host object refers to its fatbin through a relocation against the
    .hip_fatbin section, so replacing the section's bytes is all it takes.

    Args:
      ctx: the rule context (declares `_hip/<name>/<key>.pic.o`).
      hip: HipToolchainInfo.
      src: File, the source (names the output).
      host_object: File from host_compile().
      offload_bundle: File from bundle().
      target_count: number of gfx targets in the bundle (progress message).

    Returns:
      File: the linkable PIC object.
    """
    obj = _declare(ctx, src, ".pic.o")
    ctx.actions.run(
        executable = hip.objcopy,
        arguments = ["--update-section", ".hip_fatbin=" + offload_bundle.path, host_object.path, obj.path],
        inputs = depset([host_object, offload_bundle], transitive = [hip.files]),
        outputs = [obj],
        mnemonic = "HipEmbed",
        progress_message = "Embedding %s (%d device target(s))" % (offload_bundle.short_path, target_count),
    )
    return obj

# Where the loader looks for a binary's archives, relative to the binary's
# directory: .kpack/ of the binary's directory or of one of the three above,
# one archive per target. The host object does not know where it will be
# linked and installed; the wheel puts the archives in the .kpack/ of the
# nearest directory holding all its binaries (docs/kpack.md).
KPACK_SEARCH_PATHS = [
    "../" * depth + ".kpack/@GFXARCH@.kpack"
    for depth in range(4)
]

def kpack_kernel_name(ctx, src):
    """The archive key of one source's code objects (without `#0`): the library's label, then the source.

    `//examples/pjrt:vector_add/kernels/vector_add.hip` (a source in the
    library's package, by its path there), `@repo//jaxlib/rocm:lib//jaxlib/gpu/k.cc`
    (elsewhere in the repository, from its root). Unique per library and
    source, and independent of where the object is linked, so the host
    object never changes with the binary it ends up in.
    """
    repo = ctx.label.workspace_name
    at = "@" + repo if repo else ""
    path = repo_relative_path(src)
    src_repo = src.owner.workspace_name if src.owner else repo
    pkg = ctx.label.package
    if src_repo == repo and (not pkg or path.startswith(pkg + "/")):
        rel = path[len(pkg) + 1:] if pkg else path
    else:
        rel = "{}//{}".format("@" + src_repo if src_repo != repo and src_repo else "", path)
    return "{}//{}:{}/{}".format(at, pkg, ctx.label.name, rel)

def kpack_marker(ctx, src, kernel_name):
    """Writes the marker and HIPK wrapper of one source.

    Returns:
      (File, File): the marker and the wrapper.
    """
    marker = _declare(ctx, src, ".kpackref")
    wrapper = _declare(ctx, src, ".hipk")
    rocm_wheel_kpack_marker(ctx, kernel_name, KPACK_SEARCH_PATHS, marker, wrapper, "Writing the kpack marker of %s" % src.short_path)
    return marker, wrapper

def embed_kpack(ctx, hip, src, host_object, marker, wrapper):
    """The host object with a kpack marker in place of its fat binary.

    The wrapper's pointer is relocated against the section, which keeps its
    relocation when renamed: it points at the marker once linked. Alignment
    1, as the reference transform's section.

    Returns:
      File: the linkable PIC object.
    """
    obj = _declare(ctx, src, ".pic.o")
    ctx.actions.run(
        executable = hip.objcopy,
        arguments = [
            "--update-section",
            ".hip_fatbin=" + marker.path,
            "--update-section",
            ".hipFatBinSegment=" + wrapper.path,
            "--set-section-alignment",
            ".hip_fatbin=1",
            "--rename-section",
            ".hip_fatbin=.rocm_kpack_ref",
            host_object.path,
            obj.path,
        ],
        inputs = depset([host_object, marker, wrapper], transitive = [hip.files]),
        outputs = [obj],
        mnemonic = "HipEmbed",
        progress_message = "Embedding the kpack marker of %s" % src.short_path,
    )
    return obj

def kernel_check(ctx, hip, src, host_object, entries):
    """Checks that every kernel the host object registers has a kernel descriptor in each code object.

    A define, include or header seen by one half only can leave a target's
    code object without the kernels the host launches; that builds, links
    and loads, and fails only at launch on that GPU. This validation action
    fails the build instead.

    Args:
      ctx: the rule context (declares `_hip/<name>/<key>.kernels`).
      hip: HipToolchainInfo (its llvm-cxxfilt demangles the report).
      src: File, the source (named in the report).
      host_object: File from host_compile().
      entries: list of (gfx target, code-object File).

    Returns:
      File: the check's report (the kernels found), a validation output.
    """
    out = _declare(ctx, src, ".kernels")
    rocm_wheel_kernels_check(ctx, src, label_as_typed(ctx.label), host_object, entries, hip.cxxfilt, hip.files, out)
    return out
