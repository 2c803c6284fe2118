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
