"""ROCm header libraries a hip_library can depend on, and the targets they refuse.

Each library is found under the ROCm root by its version header. A library
release can refuse gfx targets the compiler itself accepts (rocPRIM 3.4, in
ROCm 6.4, has no 128-bit atomics for gfx950, so every rocPRIM algorithm fails
to compile there). The HIP repository rule records, per library, the version
found and the targets it refuses; device compiles of code that depends on the
library then fail at analysis with the reason and the fix, or leave the
target out when the hip_library says so.
"""

# What plain C++ users of ROCm headers (g++, clang++ without -x hip) must
# define: hip/hip_common.h sets it only when the compiler is clang in HIP
# mode, and the HIP headers #error without exactly one platform macro.
HIP_PLATFORM_DEFINE = "__HIP_PLATFORM_AMD__"

def _parts(major, minor, patch):
    # Versions spelled as three macros.
    return struct(major = major, minor = minor, patch = patch, packed = None)

def _packed(macro):
    # Versions spelled as one number, major * 100000 + minor * 100 + patch.
    return struct(packed = macro)

def _deb_or_rocm(deb, rocm):
    return "{} (Debian/Ubuntu) or {} (ROCm packages; TheRock tarballs and the rocm-sdk-devel wheel include it)".format(deb, rocm)

# name -> how to find it. `version`: the macros of `header` that spell the
# version; `link`: the shared library's name (-l<link>; None: header-only);
# `refuses`: entries apply to versions below `below` (major, minor, patch);
# `uses`: libraries whose refusals it inherits.
ROCM_LIBRARIES = {
    # The HIP runtime itself, for plain C++ code that calls HIP's API
    # (hipMalloc, hipStreamSynchronize) without any device code of its own.
    "hip_runtime": struct(
        display = "HIP runtime",
        header = "hip/hip_version.h",
        version = _parts("HIP_VERSION_MAJOR", "HIP_VERSION_MINOR", "HIP_VERSION_PATCH"),
        package = _deb_or_rocm("libamdhip64-dev", "hip-runtime-amd"),
        link = "amdhip64",
        uses = [],
        refuses = [],
    ),
    "rocprim": struct(
        display = "rocPRIM",
        header = "rocprim/rocprim_version.hpp",
        version = _parts("ROCPRIM_VERSION_MAJOR", "ROCPRIM_VERSION_MINOR", "ROCPRIM_VERSION_PATCH"),
        package = _deb_or_rocm("librocprim-dev", "rocprim"),
        link = None,
        uses = [],
        refuses = [
            struct(
                below = (4, 0, 0),
                targets = ["gfx950"],
                reason = "rocprim/intrinsics/atomic.hpp has no 128-bit atomics for gfx950 " +
                         "(#error \"support for 128-bit atomics not implemented\")",
                fixed_in = "rocPRIM 4.0, ROCm 7.0",
            ),
        ],
    ),
    "hipcub": struct(
        display = "hipCUB",
        header = "hipcub/hipcub_version.hpp",
        version = _parts("HIPCUB_VERSION_MAJOR", "HIPCUB_VERSION_MINOR", "HIPCUB_VERSION_PATCH"),
        package = _deb_or_rocm("libhipcub-dev", "hipcub"),
        link = None,
        uses = ["rocprim"],
        refuses = [],
    ),
    "hipblas": struct(
        display = "hipBLAS",
        header = "hipblas/hipblas-version.h",
        version = _parts("hipblasVersionMajor", "hipblasVersionMinor", "hipblasVersionPatch"),
        package = _deb_or_rocm("libhipblas-dev", "hipblas"),
        link = "hipblas",
        uses = [],
        refuses = [],
    ),
    "hipblaslt": struct(
        display = "hipBLASLt",
        header = "hipblaslt/hipblaslt-version.h",
        version = _parts("HIPBLASLT_VERSION_MAJOR", "HIPBLASLT_VERSION_MINOR", "HIPBLASLT_VERSION_PATCH"),
        package = _deb_or_rocm("libhipblaslt-dev", "hipblaslt"),
        link = "hipblaslt",
        uses = [],
        refuses = [],
    ),
    "hipfft": struct(
        display = "hipFFT",
        header = "hipfft/hipfft-version.h",
        version = _parts("hipfftVersionMajor", "hipfftVersionMinor", "hipfftVersionPatch"),
        package = _deb_or_rocm("libhipfft-dev", "hipfft"),
        link = "hipfft",
        uses = [],
        refuses = [],
    ),
    "hiprand": struct(
        display = "hipRAND",
        header = "hiprand/hiprand_version.h",
        version = _packed("HIPRAND_VERSION"),
        package = _deb_or_rocm("libhiprand-dev", "hiprand"),
        link = "hiprand",
        uses = ["rocrand"],
        refuses = [],
    ),
    "hipsolver": struct(
        display = "hipSOLVER",
        header = "hipsolver/internal/hipsolver-version.h",
        version = _parts("hipsolverVersionMajor", "hipsolverVersionMinor", "hipsolverVersionPatch"),
        package = _deb_or_rocm("libhipsolver-dev", "hipsolver"),
        link = "hipsolver",
        uses = [],
        refuses = [],
    ),
    "hipsparse": struct(
        display = "hipSPARSE",
        header = "hipsparse/hipsparse-version.h",
        version = _parts("hipsparseVersionMajor", "hipsparseVersionMinor", "hipsparseVersionPatch"),
        package = _deb_or_rocm("libhipsparse-dev", "hipsparse"),
        link = "hipsparse",
        uses = [],
        refuses = [],
    ),
    "miopen": struct(
        display = "MIOpen",
        header = "miopen/version.h",
        version = _parts("MIOPEN_VERSION_MAJOR", "MIOPEN_VERSION_MINOR", "MIOPEN_VERSION_PATCH"),
        package = _deb_or_rocm("libmiopen-dev", "miopen-hip"),
        link = "MIOpen",
        uses = [],
        refuses = [],
    ),
    "rccl": struct(
        display = "RCCL",
        header = "rccl/rccl.h",
        version = _parts("NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH"),
        package = _deb_or_rocm("librccl-dev", "rccl"),
        link = "rccl",
        uses = [],
        refuses = [],
    ),
    "rocblas": struct(
        display = "rocBLAS",
        header = "rocblas/internal/rocblas-version.h",
        version = _parts("ROCBLAS_VERSION_MAJOR", "ROCBLAS_VERSION_MINOR", "ROCBLAS_VERSION_PATCH"),
        package = _deb_or_rocm("librocblas-dev", "rocblas"),
        link = "rocblas",
        uses = [],
        refuses = [],
    ),
    "rocrand": struct(
        display = "rocRAND",
        header = "rocrand/rocrand_version.h",
        version = _packed("ROCRAND_VERSION"),
        package = _deb_or_rocm("librocrand-dev", "rocrand"),
        link = "rocrand",
        uses = [],
        refuses = [],
    ),
    "rocsolver": struct(
        display = "rocSOLVER",
        header = "rocsolver/rocsolver-version.h",
        version = _parts("ROCSOLVER_VERSION_MAJOR", "ROCSOLVER_VERSION_MINOR", "ROCSOLVER_VERSION_PATCH"),
        package = _deb_or_rocm("librocsolver-dev", "rocsolver"),
        link = "rocsolver",
        uses = [],
        refuses = [],
    ),
}

def _defines(text):
    """{macro: value} of the `#define NAME VALUE` lines of a header."""
    found = {}
    for line in text.splitlines():
        words = [w for w in line.replace("\t", " ").split(" ") if w]
        if len(words) >= 3 and words[0] == "#define":
            found[words[1]] = words[2]
    return found

def library_version(name, text):
    """'3.2.0' for library `name` from the text of its version header; '' if unreadable."""
    spec = ROCM_LIBRARIES[name].version
    found = _defines(text)
    if spec.packed:
        v = found.get(spec.packed, "")
        if not v.isdigit():
            return ""
        n = int(v)
        return "{}.{}.{}".format(n // 100000, n // 100 % 1000, n % 100)
    parts = [found.get(spec.major, ""), found.get(spec.minor, ""), found.get(spec.patch, "0")]
    if not (parts[0].isdigit() and parts[1].isdigit()):
        return ""
    return ".".join([p if p.isdigit() else "0" for p in parts])

def parse_version_header(text, macro):
    """'3.4.1' from #define <macro>_MAJOR/_MINOR/_PATCH lines; '' if absent."""
    parts = {}
    for line in text.splitlines():
        words = [w for w in line.replace("\t", " ").split(" ") if w]
        if len(words) == 3 and words[0] == "#define" and words[1].startswith(macro + "_") and words[2].isdigit():
            parts[words[1][len(macro) + 1:]] = words[2]
    if "MAJOR" not in parts or "MINOR" not in parts:
        return ""
    return ".".join([parts["MAJOR"], parts["MINOR"], parts.get("PATCH", "0")])

def _version_tuple(version):
    return tuple([int(p) for p in version.split(".")] + [0, 0, 0])[:3]

def refused_targets(name, version):
    """{gfx target: why} for library `name` at `version`, with the libraries it uses."""
    lib = ROCM_LIBRARIES[name]
    refused = {}
    if version:
        v = _version_tuple(version)
        for r in lib.refuses:
            if v < r.below:
                for t in r.targets:
                    refused[t] = "{}; fixed in {}".format(r.reason, r.fixed_in)
    return refused
