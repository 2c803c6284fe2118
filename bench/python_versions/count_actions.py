"""Counts the spawned actions of a Bazel JSON execution log, split into
Python-dependent (run in a per-Python configuration: one that builds
extension modules or cpXY wheels) and Python-independent ones.

usage: count_actions.py LOG  -> prints JSON {"total", "python_dependent", "python_independent"}
"""

import json
import re
import sys

PER_PYTHON = re.compile(r"(\.cpython-3\d+-[^/]*\.so|-cp3\d+-cp3\d+t?-[^/]*\.whl)$")


def spawns(path):
    text = open(path).read()
    dec = json.JSONDecoder()
    i = 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return
        obj, i = dec.raw_decode(text, i)
        yield obj


def config_of(path):
    parts = path.split("/")
    return parts[1] if parts[0] == "bazel-out" and len(parts) > 2 else None


actions = []
for s in spawns(sys.argv[1]):
    outs = list(s.get("listedOutputs", []))
    actions.append(({config_of(o) for o in outs}, outs))
per_python = {config_of(o) for _, outs in actions for o in outs if PER_PYTHON.search(o)}
dependent = sum(1 for cfgs, _ in actions if cfgs & per_python)
print(json.dumps({"total": len(actions), "python_dependent": dependent, "python_independent": len(actions) - dependent}))
