"""Splits a cold build of //examples/jax_rocm_plugin:wheels into its parts.

usage: parts.py EXEC_LOG PROFILE  -> prints JSON and a Markdown table

From the JSON execution log (--execution_log_json_file): every spawn, its
mnemonic, the configuration of its outputs and its execution time
(metrics.executionWallTime, else totalTime). Parts, by the outputs' path:
abseil (external/abseil-cpp*), nanobind, HIP device compiles
(HipDeviceCompile), the rest of the HIP compiles (host compile, bundle,
embed, kernel check), protobuf (its runtime and protoc), XLA's and TSL's
libraries and the other third-party sources they need (zlib), the two
modules that need them (_triton, rocm_plugin_extension: their own
Python-independent libraries), per-Python work (every spawn in a
configuration that wrote a cpXY wheel), and the rest. From the profile (--profile): the wall
time of Bazel's phases and of repository fetching.
"""

import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "lib"))
from exec_log import outputs, read_spawns, spawn_seconds  # noqa: E402

PER_PYTHON_WHEEL = re.compile(r"-cp3(\d+)-cp3\d+t?-[^/]*\.whl$")
HIP_OTHER = {"HipHostCompile", "HipBundle", "HipEmbed", "HipKernelCheck"}


def config(path):
    parts = path.split("/", 2)
    return parts[1] if parts[0] == "bazel-out" and len(parts) > 2 else None


def main():
    log, profile = sys.argv[1], sys.argv[2]
    spawns = []
    for s in read_spawns(log):
        cached = s.get("remoteCacheHit", False) or s.get("cacheHit", False)
        spawns.append((s.get("mnemonic", ""), outputs(s), spawn_seconds(s), cached))
    per_python_cfgs = {config(o) for _, outs, _, _ in spawns for o in outs if PER_PYTHON_WHEEL.search(o)}

    def part(mnemonic, outs):
        if mnemonic == "HipDeviceCompile":
            return "HIP device compiles"
        if mnemonic in HIP_OTHER:
            return "HIP host compile, bundle, embed, kernel check"
        if any("/external/abseil-cpp" in o for o in outs):
            return "abseil (once)" if not any(config(o) in per_python_cfgs for o in outs) else "abseil (per Python!)"
        if any("nanobind" in o for o in outs):
            return "nanobind (per Python)"
        if not any(config(o) in per_python_cfgs for o in outs):
            if any("com_google_protobuf" in o for o in outs):
                return "protobuf: runtime and protoc (once)"
            if any(re.search(r"~(xla|zlib)/", o) for o in outs):
                return "XLA's and TSL's libraries, zlib (once)"
            if any(re.search(r"jaxlib/(rocm|gpu)/.*(triton|py_client_gpu|gpu_plugin_extension)", o) for o in outs):
                return "_triton, rocm_plugin_extension: their own libraries (once)"
        if any(config(o) in per_python_cfgs for o in outs):
            return "other per-Python work (modules, numpy.cc, links, wheels)"
        if mnemonic in ("Rustc", "CargoBuildScriptRun"):
            return "rocm-wheel tool (Rust)"
        return "other Python-independent work (kernel libraries, ...)"

    parts = collections.defaultdict(lambda: [0, 0.0])
    for mnemonic, outs, t, _ in spawns:
        p = parts[part(mnemonic, outs)]
        p[0] += 1
        p[1] += t
    with open(profile) as f:
        events = json.load(f)["traceEvents"]
    last = max(e.get("ts", 0) + e.get("dur", 0) for e in events)
    markers = sorted((e for e in events if e.get("cat") == "build phase marker"), key=lambda e: e["ts"])
    phases = {}
    for i, mk in enumerate(markers):
        if mk.get("ph") == "X":
            phases[mk["name"]] = round(mk["dur"] / 1e6, 1)
            continue
        end = markers[i + 1]["ts"] if i + 1 < len(markers) else last
        phases[mk["name"]] = round(phases.get(mk["name"], 0) + (end - mk["ts"]) / 1e6, 1)
    actions = sum(1 for e in events if e.get("cat") == "action processing")
    total = sum(p[1] for p in parts.values())
    result = {
        "spawns": len(spawns),
        "actions": actions,
        "per_python_configurations": len(per_python_cfgs),
        "phases_s": phases,
        "parts": {k: {"spawns": v[0], "seconds": round(v[1], 1)} for k, v in parts.items()},
    }
    print(json.dumps(result, indent=1))
    print()
    print("| part | spawns | action time (s) | share |")
    print("| --- | ---: | ---: | ---: |")
    for k, (n, t) in sorted(parts.items(), key=lambda kv: -kv[1][1]):
        print(f"| {k} | {n} | {t:.1f} | {100 * t / total if total else 0:.0f} % |")
    print(f"| all | {len(spawns)} | {total:.1f} | |")


main()
