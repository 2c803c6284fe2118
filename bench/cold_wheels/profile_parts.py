"""Splits a Bazel JSON profile (--profile=X.json) into the parts that
bench/cold_wheels/run.sh reports.

usage: profile_parts.py PROFILE  -> prints JSON
  {"phases": {name: seconds, ...},   Bazel's build phase markers, in order
   "cargo": seconds,                 fetch of the rocm-wheel repository (its cargo build)
   "other_fetch": seconds,           every other repository fetch (wall, overlaps merged)
   "rustc": seconds,                 Rustc actions (rules_rust; wall, overlaps merged)
   "rustc_actions": n,
   "actions": n}                     executed actions ("action processing" events)
"""

import gzip
import json
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)["traceEvents"]


def union_seconds(intervals):
    total, end = 0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total / 1e6


def main():
    events = load(sys.argv[1])
    last = max(e.get("ts", 0) + e.get("dur", 0) for e in events)
    markers = sorted((e for e in events if e.get("cat") == "build phase marker"), key=lambda e: e["ts"])
    phases = {}
    for i, m in enumerate(markers):
        if m.get("ph") == "X":  # "Launch Blaze": has its own duration
            phases[m["name"]] = m["dur"] / 1e6
            continue
        end = markers[i + 1]["ts"] if i + 1 < len(markers) else last
        phases[m["name"]] = phases.get(m["name"], 0) + (end - m["ts"]) / 1e6

    fetches = [e for e in events if e.get("cat") == "Fetching repository" and "dur" in e]
    # @@rocm_wheel_tools (WORKSPACE) or @@_main~rules_rocm~rocm_wheel_tools (bzlmod).
    is_cargo = lambda e: e["name"].rstrip("/").endswith("rocm_wheel_tools")
    cargo = union_seconds([(e["ts"], e["ts"] + e["dur"]) for e in fetches if is_cargo(e)])
    other = union_seconds([(e["ts"], e["ts"] + e["dur"]) for e in fetches if not is_cargo(e)])
    actions = sum(1 for e in events if e.get("cat") == "action processing")
    # rules_rust's progress messages: "Compiling Rust rlib anyhow v1.0.89 (...)".
    rust = [
        e
        for e in events
        if e.get("cat") == "action processing" and "dur" in e
        and (e.get("args", {}).get("mnemonic") == "Rustc" or e.get("name", "").startswith("Compiling Rust"))
    ]
    rustc = union_seconds([(e["ts"], e["ts"] + e["dur"]) for e in rust])
    phases = {k: round(v, 2) for k, v in phases.items()}
    print(json.dumps({"phases": phases, "cargo": round(cargo, 2), "other_fetch": round(other, 2), "rustc": round(rustc, 2), "rustc_actions": len(rust), "actions": actions}))


if __name__ == "__main__":
    main()
