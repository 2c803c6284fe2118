#!/usr/bin/env python3
"""Critical path of a build from its execution log (--execution_log_json_file).

    critical_path.py LOG.json

Rebuilds the action graph from the log (an action depends on the actions
that produced its inputs) and weighs each action with its measured
execution wall time. The longest weighted path is what a remote-execution
cluster with a free slot for every ready action would take, assuming each
action runs as fast there as it did here and inputs move for free. Prints
JSON: critical path seconds, total action seconds, action count, and the
mnemonics along the path.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "lib"))
import exec_log  # noqa: E402


def main():
    spawns = exec_log.read_spawns(sys.argv[1])
    producer = {}
    for i, s in enumerate(spawns):
        for out in s.get("listedOutputs", []):
            producer[out] = i
    weight = [exec_log.duration_seconds(s.get("metrics", {}).get("executionWallTime")) for s in spawns]
    deps = [sorted({producer[x["path"]] for x in s.get("inputs", []) if x["path"] in producer} - {i})
            for i, s in enumerate(spawns)]
    # Longest path ending at each spawn; spawns are memoised so deep graphs
    # cost one visit each.
    best, via = {}, {}
    for root in range(len(spawns)):
        stack = [(root, False)]
        while stack:
            node, ready = stack.pop()
            if node in best:
                continue
            if not ready:
                stack.append((node, True))
                stack.extend((d, False) for d in deps[node] if d not in best)
                continue
            prev = max(deps[node], key=lambda d: best[d], default=None)
            best[node] = weight[node] + (best[prev] if prev is not None else 0.0)
            via[node] = prev
    end = max(best, key=best.get) if best else None
    path = []
    while end is not None:
        path.append(spawns[end].get("mnemonic", "?"))
        end = via[end]
    json.dump({
        "critical_path_s": round(max(best.values(), default=0.0), 1),
        "total_action_s": round(sum(weight), 1),
        "actions": len(spawns),
        "path": list(reversed(path)),
    }, sys.stdout)
    print()


if __name__ == "__main__":
    main()
