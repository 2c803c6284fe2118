"""Reader for Bazel's --execution_log_json_file, shared by tests and benchmarks."""

import json


def read_spawns(path):
    """The spawns of a JSON execution log, in order.

    Bazel 4-8 write the log as concatenated JSON objects, not one document.
    """
    with open(path, encoding="utf-8") as f:
        text = f.read()
    decoder = json.JSONDecoder()
    spawns = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            return spawns
        obj, i = decoder.raw_decode(text, i)
        spawns.append(obj)


def outputs(spawn):
    """A spawn's output paths: the declared ones (present even if it failed), else the actual ones."""
    return list(spawn.get("listedOutputs", [])) or [o["path"] for o in spawn.get("actualOutputs", [])]


def duration_seconds(duration):
    """A protobuf JSON Duration ('12.345s') in seconds; 0 when absent."""
    return float(duration[:-1]) if duration else 0.0


def spawn_seconds(spawn):
    """The time a spawn took: its execution wall time, else its total time."""
    metrics = spawn.get("metrics", {})
    return duration_seconds(metrics.get("executionWallTime") or metrics.get("totalTime") or "")
