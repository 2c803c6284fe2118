"""Counts the spawned actions of a Bazel JSON execution log, split into
Python-dependent (run in a per-Python configuration: one that builds
extension modules or cpXY wheels) and Python-independent ones.

Spawns served from a cache (the rocm-wheel tool's, which run.sh keeps out of
the measurement) are not counted: "tool_cache_hits" reports how many.

usage: count_actions.py LOG  -> prints JSON {"total", "python_dependent", "python_independent", "tool_cache_hits"}
"""

import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "lib"))
from exec_log import read_spawns  # noqa: E402

PER_PYTHON = re.compile(r"(\.cpython-3\d+-[^/]*\.so|-cp3\d+-cp3\d+t?-[^/]*\.whl)$")


def config_of(path):
    parts = path.split("/")
    return parts[1] if parts[0] == "bazel-out" and len(parts) > 2 else None


actions = []
cache_hits = 0
for s in read_spawns(sys.argv[1]):
    if s.get("cacheHit"):
        cache_hits += 1
        continue
    outs = list(s.get("listedOutputs", []))
    actions.append(({config_of(o) for o in outs}, outs))
per_python = {config_of(o) for _, outs in actions for o in outs if PER_PYTHON.search(o)}
dependent = sum(1 for cfgs, _ in actions if cfgs & per_python)
print(json.dumps({"total": len(actions), "python_dependent": dependent, "python_independent": len(actions) - dependent, "tool_cache_hits": cache_hits}))
