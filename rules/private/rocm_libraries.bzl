"""ROCm header libraries a hip_library can depend on, and the targets they refuse.

Each library is found under the ROCm root by its version header. A library
release can refuse gfx targets the compiler itself accepts (rocPRIM 3.4, in
ROCm 6.4, has no 128-bit atomics for gfx950, so every rocPRIM algorithm fails
to compile there). The HIP repository rule records, per library, the version
found and the targets it refuses; device compiles of code that depends on the
library then fail at analysis with the reason and the fix, or leave the
target out when the hip_library says so.
"""

# name -> how to find it. `refuses`: entries apply to versions below `below`
# (major, minor, patch); `uses`: libraries whose refusals it inherits.
ROCM_LIBRARIES = {
    "rocprim": struct(
        display = "rocPRIM",
        header = "rocprim/rocprim_version.hpp",
        macro = "ROCPRIM_VERSION",
        package = "librocprim-dev (Debian) or rocprim (ROCm)",
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
        macro = "HIPCUB_VERSION",
        package = "libhipcub-dev (Debian) or hipcub (ROCm)",
        uses = ["rocprim"],
        refuses = [],
    ),
}

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
