"""Upstream's way against ours, for the HIP sources of one cold build.

usage: monolithic.py EXEC_LOG EXECROOT [JOBS]  -> prints JSON, then a Markdown table

XLA's and JAX's rocm_library compiles each HIP source in one clang action
for every GPU target (host code, every device compile, bundle and embed in
one process). hip_library splits it: one device compile per target, a host
compile independent of the targets, then bundle and embed. For every source
in the execution log of a cold build, this re-runs the monolithic compile:
the same clang, flags, includes and sources as the split device compiles
(from their command lines), every target's --offload-arch at once, -fPIC, in
the build's execution root, one after another and then JOBS at a time (the
build's --jobs). Compared, same run, same machine:
- action time: the split actions' summed time vs the monolithic compiles';
- critical path per source: max(device compiles, host compile) + bundle +
  embed vs the monolithic compile (what a cluster with a core per action
  would wait);
- wall time of all sources at JOBS in parallel, against the split actions'
  time divided by JOBS (their wall share of the build).
"""

import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "lib"))
from exec_log import outputs, read_spawns, spawn_seconds  # noqa: E402

STEM = re.compile(r"^(.*/_hip(?:_other)?/.+?)\.(?:[a-z0-9-]+\.co|host\.o|hipfb|pic\.o)$")
MNEMONICS = ("HipDeviceCompile", "HipHostCompile", "HipBundle", "HipEmbed")
DEVICE_ONLY = {"--cuda-device-only", "--no-gpu-bundle-output"}


def split_actions(log):
    """stem -> {mnemonic: [(seconds, argv)]} for the HIP actions of the log."""
    by_stem = collections.defaultdict(lambda: collections.defaultdict(list))
    for s in read_spawns(log):
        if s.get("mnemonic") not in MNEMONICS:
            continue
        outs = outputs(s)
        m = STEM.match(outs[0]) if outs else None
        if m:
            by_stem[m.group(1)][s["mnemonic"]].append((spawn_seconds(s), s.get("commandArgs", [])))
    return by_stem


def monolithic_command(device_argvs, out):
    """One clang command for every target, from the per-target device compiles' argv."""
    argv = device_argvs[0]
    targets = sorted({a.split("=", 1)[1] for d in device_argvs for a in d if a.startswith("--offload-arch=")})
    cmd = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in DEVICE_ONLY or a.startswith("--offload-arch=") or a == "-nogpulib":
            continue
        if a == "-o":
            skip = True
            continue
        cmd.append(a)
    return cmd + ["--offload-arch=" + t for t in targets] + ["-fPIC", "-o", out], targets


def run(cmd, cwd):
    start = time.monotonic()
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"monolithic compile failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr[-3000:]}")
    return time.monotonic() - start


def main():
    log, execroot = sys.argv[1], sys.argv[2]
    jobs = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        commands = []
        for stem, acts in sorted(split_actions(log).items()):
            device = acts.get("HipDeviceCompile", [])
            if not device:
                continue
            cmd, targets = monolithic_command([argv for _, argv in device], os.path.join(tmp, f"{len(commands)}.o"))
            commands.append(cmd)
            host = sum(t for t, _ in acts.get("HipHostCompile", []))
            tail = sum(t for m in ("HipBundle", "HipEmbed") for t, _ in acts.get(m, []))
            dev = [t for t, _ in device]
            rows.append({
                "source": stem.split("/_hip", 1)[1].split("/", 2)[-1],
                "targets": targets,
                "split_action_s": round(sum(dev) + host + tail, 2),
                "split_critical_s": round(max(max(dev), host) + tail, 2),
                "monolithic_s": round(run(cmd, execroot), 2),
            })
        start = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            list(pool.map(lambda c: run(c, execroot), commands))
        parallel = time.monotonic() - start
    split = sum(r["split_action_s"] for r in rows)
    mono = sum(r["monolithic_s"] for r in rows)
    summary = {
        "sources": len(rows),
        "split_action_s": round(split, 1),
        "monolithic_action_s": round(mono, 1),
        "action_ratio": round(split / mono, 2),
        "split_critical_s": round(max(r["split_critical_s"] for r in rows), 1),
        "monolithic_critical_s": round(max(r["monolithic_s"] for r in rows), 1),
        "monolithic_wall_s_at_jobs": round(parallel, 1),
        "jobs": jobs,
    }
    print(json.dumps({"rows": rows, "summary": summary}, indent=1))
    print("\n| source | targets | split actions | split critical path | one clang action |")
    print("| --- | --- | ---: | ---: | ---: |")
    for r in rows:
        print(f"| `{r['source']}` | {','.join(r['targets'])} | {r['split_action_s']} s | {r['split_critical_s']} s | {r['monolithic_s']} s |")
    s = summary
    print(f"| **all {s['sources']}** | | **{s['split_action_s']} s** ({s['action_ratio']}x) | "
          f"**{s['split_critical_s']} s** | **{s['monolithic_action_s']} s**; {s['monolithic_wall_s_at_jobs']} s wall at {jobs} jobs |")


if __name__ == "__main__":
    main()
