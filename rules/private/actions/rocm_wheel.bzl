"""Every rocm-wheel command line a rule runs, in one place.

One function per subcommand: it builds the arguments and declares the
action; callers decide outputs, inputs and messages. The tool comes from the
resolved rocm_wheel toolchain (rules/private/rules/rocm_wheel_toolchain.bzl).
"""

load("//rules/private/rules:rocm_wheel_toolchain.bzl", "rocm_wheel_tool")

def _run(ctx, args, inputs, out, mnemonic, progress_message):
    ctx.actions.run(
        executable = rocm_wheel_tool(ctx),
        arguments = [args],
        inputs = inputs,
        outputs = [out],
        mnemonic = mnemonic,
        progress_message = progress_message,
    )

def rocm_wheel_build(ctx, manifest, inputs, out, compression_level):
    """`rocm-wheel build`: the wheel `out` from a manifest and its files."""
    args = ctx.actions.args()
    args.add_all(["build", "--manifest", manifest, "--output", out, "--compression-level", str(compression_level)])
    _run(ctx, args, [manifest] + inputs, out, "RocmWheel", "Writing wheel %s" % out.basename)

def rocm_wheel_device_extras(ctx, host, device_wheels, out):
    """`rocm-wheel device-extras`: `host` with one extra per GPU target its device wheels serve (device-<target>) and device-all."""
    args = ctx.actions.args()
    args.add_all(["device-extras", host, "-o", out])
    args.add_all(device_wheels, before_each = "--device-wheel")
    _run(ctx, args, [host] + device_wheels, out, "RocmWheelDeviceExtras", "Adding device extras to %s" % out.basename)

def rocm_wheel_variant(ctx, host, device_wheels, label, out):
    """`rocm-wheel variant`: `host` as the variant wheel `label`, pulling `device_wheels` by variant markers."""
    args = ctx.actions.args()
    args.add_all(["variant", host, "-o", out, "--label", label])
    args.add_all(device_wheels, before_each = "--device-wheel")
    _run(ctx, args, [host] + device_wheels, out, "RocmWheelVariant", "Writing the variant wheel %s" % out.basename)

def rocm_wheel_index(ctx, wheels, out):
    """`rocm-wheel index`: the static package index (a directory) of `wheels`."""
    args = ctx.actions.args()
    args.add_all(["index", "-o", out.path])
    args.add_all(wheels)
    _run(ctx, args, wheels, out, "RocmWheelIndex", "Writing the package index %{label}")

def rocm_wheel_rpath(ctx, lib, runpath, out):
    """`rocm-wheel rpath`: a copy of `lib` with RUNPATH `runpath` (removed when empty)."""
    args = ctx.actions.args()
    if runpath:
        args.add_all(["rpath", "set", lib, "--rpath", ":".join(runpath), "--output", out])
    else:
        args.add_all(["rpath", "remove", lib, "--output", out])
    _run(ctx, args, [lib], out, "RocmWheelRpath", "Setting the RUNPATH of %s for its wheel" % out.short_path)

def rocm_wheel_glibc_floor(ctx, binary, max_version, out):
    """`rocm-wheel glibc-floor`: a copy of `binary` whose weak references need no glibc newer than `max_version`."""
    args = ctx.actions.args()
    args.add_all(["glibc-floor", binary, "--max", max_version, "--output", out])
    _run(ctx, args, [binary], out, "RocmWheelGlibcFloor", "Lowering the glibc floor of %s to %s" % (binary.short_path, max_version))

def rocm_wheel_rocm_runpath(ctx, lib, install_dir, families, out, base = None):
    """`rocm-wheel rpath rocm`: a copy of `lib` whose RUNPATH also finds the ROCm libraries it needs where they are installed.

    `base`: the file's own entries, replacing those it has (None keeps them).
    """
    args = ctx.actions.args()
    args.add_all(["rpath", "rocm", lib, "--dir", install_dir, "--output", out])
    if base != None:
        args.add("--base=" + ":".join(base))
    args.add_all(families, before_each = "--family")
    _run(ctx, args, [lib], out, "RocmWheelRunpath", "Setting the ROCm RUNPATH of %s" % out.short_path)

def rocm_wheel_thin(ctx, wheel, family, out):
    """`rocm-wheel thin`: `wheel` with only `family`'s code objects, named with the family."""
    args = ctx.actions.args()
    args.add_all(["thin", "--gfx", family, "--name-suffix", family, wheel, "-o", out])
    _run(ctx, args, [wheel], out, "RocmWheelThin", "Thinning %{label} to " + family)

def rocm_wheel_bundle(ctx, entries, compress, host_triple, out, progress_message):
    """`rocm-wheel bundle write`: an offload bundle of `entries` ((offload target, code object File))."""
    args = ctx.actions.args()
    args.add_all(["bundle", "write", "--output", out, "--compress", compress, "--host-triple", host_triple])
    for target, co in entries:
        args.add("--entry", "{}={}".format(target, co.path))
    _run(ctx, args, [co for _, co in entries], out, "HipBundle", progress_message)

def rocm_wheel_kpack_marker(ctx, kernel_name, search_paths, marker, wrapper, progress_message):
    """`rocm-wheel kpack marker`: the marker a HIPK wrapper points at, and the wrapper."""
    args = ctx.actions.args()
    args.add_all(["kpack", "marker", "--kernel-name", kernel_name, "--output", marker, "--wrapper-output", wrapper])
    args.add_all(search_paths, before_each = "--search-path")
    ctx.actions.run(
        executable = rocm_wheel_tool(ctx),
        arguments = [args],
        outputs = [marker, wrapper],
        mnemonic = "HipKpackMarker",
        progress_message = progress_message,
    )

def rocm_wheel_kpack_archive(ctx, group, target, compression, kernels, out):
    """`rocm-wheel kpack archive`: one target's archive of `kernels` ((key, code-object File))."""
    args = ctx.actions.args()
    args.add_all(["kpack", "archive", "--group", group, "--family", target, "--target", target, "--compression", compression, "--output", out])
    for key, obj in kernels:
        args.add("--kernel", "{}@{}={}".format(key, target, obj.path))
    _run(ctx, args, [obj for _, obj in kernels], out, "KpackArchive", "Writing the %s kpack archive of %s" % (target, group))

def rocm_wheel_kernels_check(ctx, source, library, host_object, entries, demangler, tool_files, out):
    """`rocm-wheel kernels check`: every kernel `host_object` registers is in each code object.

    Args:
      ctx: the rule context.
      source: File, the source (named in the report).
      library: the library's label as typed (named in the report).
      host_object: File, the host half.
      entries: list of (gfx target, code-object File).
      demangler: File or None, llvm-cxxfilt for the report.
      tool_files: depset the demangler needs.
      out: File, the report (a validation output).
    """
    args = ctx.actions.args()
    args.add_all(["kernels", "check", "--source", source.short_path, "--library", library, "--host", host_object, "--output", out])
    for t, co in entries:
        args.add("--device", "{}={}".format(t, co.path))
    inputs = [host_object] + [co for _, co in entries]
    transitive = []
    if demangler:
        args.add("--demangler", demangler)
        inputs.append(demangler)
        transitive.append(tool_files)
    _run(
        ctx,
        args,
        depset(inputs, transitive = transitive),
        out,
        "HipKernelCheck",
        "Checking the kernels of %s in %d code object(s)" % (source.short_path, len(entries)),
    )
