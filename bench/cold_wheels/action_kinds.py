"""Where a cold build's action time goes, from its Bazel JSON profile.

usage: action_kinds.py PROFILE [TOP]  -> prints Markdown tables
  - by mnemonic: actions, summed seconds, share of all action time;
  - by origin: the same per source of the work, read from the progress
    message (protobuf, abseil, XLA/TSL, nanobind, JAX's kernels, the tool's
    crates for x86_64 and for aarch64, HIP device compiles, ...);
  - the TOP (default 15) longest single actions.
Summed seconds are CPU-slot seconds (two actions at once count twice): on
2 cores, about twice the wall time they take.
"""

import re
import sys
from collections import defaultdict

from profile_parts import load

# First match wins: (origin, regexp over "mnemonic progress-message").
ORIGINS = [
    ("tool crates, aarch64", r"aarch64|linux_aarch64"),
    ("tool crates (Rust, x86_64)", r"^Rustc |Compiling Rust|CargoBuildScriptRun"),
    ("protoc (exec configuration)", r"protobuf.*\[for tool\]"),
    ("protobuf", r"com_google_protobuf|protobuf~|/protobuf/|\.pb\.|GenProto|protoc"),
    ("abseil", r"abseil-cpp|com_google_absl|Compiling absl/"),
    ("XLA / TSL", r"xla_src|~xla/|external/xla|tsl"),
    ("nanobind", r"nanobind"),
    ("HIP device compiles", r"^HipDevice|device compile|--offload-arch|HipCompileDevice"),
    ("HIP host / bundle", r"^Hip|offload|bundle"),
    ("JAX (jaxlib sources)", r"jax_src|~jax/|external/jax|jaxlib"),
    ("wheels", r"^RocmWheel|Wheel|wheel"),
    ("sysroot / toolchain", r"sysroot|glibc"),
]


def origin(mnemonic, name):
    text = f"{mnemonic} {name}"
    for label, pattern in ORIGINS:
        if re.search(pattern, text):
            return label
    return "other"


def table(title, rows, total):
    print(f"| {title} | actions | action time | share |")
    print("|---|---:|---:|---:|")
    for key, (n, secs) in sorted(rows.items(), key=lambda kv: -kv[1][1]):
        print(f"| {key} | {n} | {secs:.0f} s | {secs / total:.2f} |")
    print()


def main():
    events = load(sys.argv[1])
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    actions = [e for e in events if e.get("cat") == "action processing" and "dur" in e]
    total = sum(e["dur"] for e in actions) / 1e6 or 1.0
    by_mnemonic, by_origin = defaultdict(lambda: [0, 0.0]), defaultdict(lambda: [0, 0.0])
    for e in actions:
        m = e.get("args", {}).get("mnemonic", "?")
        secs = e["dur"] / 1e6
        for rows, key in ((by_mnemonic, m), (by_origin, origin(m, e.get("name", "")))):
            rows[key][0] += 1
            rows[key][1] += secs
    print(f"{len(actions)} actions, {total:.0f} s of action time\n")
    table("mnemonic", by_mnemonic, total)
    table("origin", by_origin, total)
    print("| longest actions | seconds |")
    print("|---|---:|")
    for e in sorted(actions, key=lambda e: -e["dur"])[:top]:
        print(f"| {e.get('args', {}).get('mnemonic', '?')}: {e.get('name', '')[:110]} | {e['dur'] / 1e6:.1f} |")


if __name__ == "__main__":
    main()
