"""Every provider of rules_rocm, in one place.

Public ones are re-exported by //rules:defs.bzl; the others are shared
between the rules in rules/private and are documented here all the same.
"""

# Settings

SettingInfo = provider(
    doc = "The value of a rules_rocm build setting, validated by the setting's rule " +
          "(rules/private/settings/flags.bzl); rules read settings through it, never through " +
          "the raw flag.",
    fields = {
        "value": "the setting's value (string or bool, as the setting declares)",
    },
)

GfxInfo = provider(
    doc = "The parsed --//:gfx flag.",
    fields = {
        "value": "the flag as given, e.g. 'gfx94X-dcgpu,gfx120X-all'",
        "targets": "sorted list of the gfx targets device code is compiled for, e.g. ['gfx942', 'gfx1200', 'gfx1201']; with --//:gfx_generic the generic targets covering them, e.g. ['gfx9-4-generic', 'gfx12-generic']",
        "requested": "sorted list of the gfx targets the flag expands to (the GPUs the build is for)",
    },
)

PythonVersionsInfo = provider(
    doc = "The parsed --//:python_versions flag.",
    fields = {
        "value": "the flag as given, e.g. 'all' or '3.12,3.11'",
        "versions": "sorted list of minor versions with an interpreter, e.g. ['3.11', '3.12']",
    },
)

# HIP

SysrootInfo = provider(
    doc = "A sysroot HIP compiles and links use (rocm_sysroot; the selected one is @rules_rocm//rocm:selected_sysroot).",
    fields = {
        "name": "the sysroot's name (the value of --@rules_rocm//rocm:sysroot); 'host' for none",
        "path": "its execution-root path ('' for none)",
        "glibc_version": "major.minor of its glibc ('' for none)",
        "compile_flags": "list of flags a clang compile needs to use it (--sysroot, --gcc-toolchain, and the -include of its glibc_floor pins)",
        "compile_files": "depset of the Files a compile reads",
        "files": "depset of all its Files (what a link reads)",
    },
)

HipCompilerInfo = provider(
    doc = "The ROCm clang of a HIP toolchain: host code and every device target.",
    fields = {
        "name": "human-readable name for messages, e.g. 'Debian clang version 21.1.8 (ROCm 6.4 at /usr)'",
        "executable": "File: the clang++ driver",
        "targets": "gfx targets it compiles with the device libraries",
        "nogpulib_targets": "gfx targets it accepts only with -nogpulib (no device-library ISA bitcode): self-contained code only",
    },
)

HipToolchainInfo = provider(
    doc = "A resolved HIP toolchain (the `hip` field of its ToolchainInfo).",
    fields = {
        "unavailable": "non-empty: why no usable ROCm was found; rules fail with it",
        "rocm_path": "the ROCm root (headers under include/)",
        "rocm_version": "the ROCm release, e.g. '7.2.4' (rocm-core's rocm_version.h, .info/version or the Debian package): names follow it",
        "hip_version": "major.minor of HIP itself (hip_version.h), e.g. '7.2': what the runtime can read (compressed bundles)",
        "device_lib_path": "directory holding ocml.bc and the oclc_isa_version files",
        "runtime_lib_dir": "directory holding libamdhip64.so",
        "files": "depset of toolkit Files every compile reads (empty for an installed ROCm, used in place)",
        "runtime_files": "depset of the HIP runtime's shared libraries, inputs of links (empty for an installed ROCm)",
        "sdk_version": "the exact TheRock SDK release the toolkit is, pre-release part and all (e.g. '7.13.0a20261201'), which device wheels pin; '' when its device code does not come from TheRock's pip SDK (a system ROCm)",
        "host_offload_arch": "a gfx target the compiler accepts: host-only compiles need one",
        "compiler": "HipCompilerInfo, or None when `unavailable` is set",
        "bundler": "File: clang-offload-bundler (host-only bundles of sources no target compiles)",
        "objcopy": "File: llvm-objcopy of the ROCm LLVM (replaces .hip_fatbin)",
        "cxxfilt": "File or None: llvm-cxxfilt (demangles kernel names in reports)",
    },
)

HipInfo = provider(
    doc = "What a hip_library compiled.",
    fields = {
        "targets": "sorted gfx targets that have device code in at least one bundle",
        "bundles": "list of offload-bundle Files, one per source",
        "device_objects": "dict gfx target -> list of code-object Files",
        "kpack_kernels": "with --//:hip_device_code=kpack: list of struct(key, target, object), each code object's archive key (`<source>#0`), gfx target and File; [] for fat device code",
    },
)

HipDeviceInfo = provider(
    doc = "What hip_library's device half resolved in one gfx device configuration.",
    fields = {
        "target": "the configuration's gfx target",
        "built": "False when the target is left out (skip_unsupported_targets) or no compiler exists",
        "defines": "the target's defines and local_defines for this gfx target",
        "copts": "the target's copts and device_copts for this gfx target",
    },
)

RocmLibraryInfo = provider(
    doc = "A ROCm library of the local ROCm installation (@rules_rocm//rocm:rocprim, ...).",
    fields = {
        "name": "display name, e.g. 'rocPRIM'",
        "version": "version from its version header, e.g. '3.4.1'",
        "rocm_version": "major.minor of the ROCm release it belongs to",
        "refused": "dict gfx target -> why this version cannot compile code for it",
        "unavailable": "non-empty: why the library was not found and how to install it",
    },
)

# Python

PythonFactsInfo = provider(
    doc = "The configuration's CPython, from rules_python's toolchains (python_facts()).",
    fields = {
        "version": "minor version, e.g. '3.12'",
        "full_version": "e.g. '3.12.1'",
        "interpreter": "the interpreter: a File of the rules_python runtime, or an absolute path (string) for a platform runtime; tests run it, build actions never do",
        "runtime_files": "depset of the runtime's Files (what running `interpreter` needs)",
        "headers": "CcInfo with Python.h and friends (current_py_cc_headers)",
        "soabi": "e.g. 'cpython-312-x86_64-linux-gnu'",
        "ext_suffix": "e.g. '.cpython-312-x86_64-linux-gnu.so'",
        "python_tag": "e.g. 'cp312'",
        "abi_tag": "e.g. 'cp312' ('cp313t' for a free-threaded build)",
    },
)

PythonExtensionInfo = provider(
    doc = "A built CPython extension module.",
    fields = {
        "module": "module name, e.g. '_core'",
        "file": "File: <module><EXT_SUFFIX>",
        "python": "PythonFactsInfo it was built for",
        "shared_libs": "depset of Files: Python-independent libraries it links (DT_NEEDED)",
    },
)

# Wheels

WheelFilesInfo = provider(
    doc = "Files destined for a wheel, each with its archive path.",
    fields = {
        "entries": "list of struct(path = archive path, file = File)",
    },
)

WheelInfo = provider(
    doc = "A built wheel.",
    fields = {
        "wheel": "File: the .whl",
        "distribution": "distribution name as declared",
        "normalized_name": "the name as in the wheel's file name",
        "version": "version string",
        "tag": "the wheel's compressed tag set, e.g. 'py3-none-any'",
    },
)

KpackKernelsInfo = provider(
    doc = "The kpack code objects a target's binaries reach (kpack_aspect, with --//:hip_device_code=kpack).",
    fields = {"kernels": "depset of struct(key, target, object): archive key (`<source>#0`), gfx target, code-object File"},
)

KpackWheelInfo = provider(
    doc = "A host wheel built with --//:hip_device_code=kpack, and what its device wheels need.",
    fields = {
        "distribution": "the host wheel's distribution name",
        "version": "its version (device wheels pin it)",
        "platform_tag": "its platform tag (device wheels carry it too)",
        "device_prefix": "the device wheels' name prefix (rocm-bootstrap's device_dist_name: `<prefix>-<bundle>`)",
        "kpack_dir": "directory in the wheel whose .kpack/ holds the archives",
        "kernels": "depset of struct(key, target, object), as KpackKernelsInfo",
        "sdk_version": "the exact TheRock SDK release the toolkit is (target-level device wheels pin rocm-sdk-device-<target>==it), or '' (a system ROCm: no pin)",
        "device_wheels": "list of Files: the device wheels built in this wheel's configuration",
    },
)

PythonWheelInfo = provider(
    doc = "A per-Python wheel: which Python it was built for.",
    fields = {"python": "PythonFactsInfo"},
)

PythonWheelSetInfo = provider(
    doc = "The wheels of a python_wheels target.",
    fields = {
        "by_version": "dict '3.12' -> list of per-Python wheel Files",
        "independent": "list of Files: wheels built once for all versions",
        "pythons": "dict '3.12' -> PythonFactsInfo of that version (install tests run its interpreter)",
        "variants": "list of Files: variant wheels (--//:wheel_variants), which pip cannot install; absent in sets made before the flag",
    },
)

FamilyWheelsInfo = provider(
    doc = "Per-family wheels thinned from one fat wheel.",
    fields = {
        "by_family": "dict family name -> File (.whl)",
        "fat": "File: the wheel they were thinned from",
    },
)
