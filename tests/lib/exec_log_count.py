"""Counts the spawns of a Bazel JSON execution log with a given mnemonic and
an output matching a regular expression, and the configurations they ran in.

usage: exec_log_count.py LOG MNEMONIC OUTPUT_REGEX
prints "<spawns> <configurations>", e.g. "2 2" for one action run once in
each of two configurations.
"""

import re
import sys

from exec_log import outputs, read_spawns


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    log, mnemonic, pattern = argv[1], argv[2], re.compile(argv[3])
    spawns = 0
    configurations = set()
    for s in read_spawns(log):
        if s.get("mnemonic") != mnemonic:
            continue
        matched = [o for o in outputs(s) if pattern.search(o)]
        if matched:
            spawns += 1
            configurations.update(o.split("/")[1] for o in matched if o.startswith("bazel-out/"))
    print(spawns, len(configurations))


if __name__ == "__main__":
    main(sys.argv)
