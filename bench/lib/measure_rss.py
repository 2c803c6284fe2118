"""measure_rss.py RESULTS CODES FIELD... -- CMD...: runs CMD (stdout
discarded) and appends FIELD..., its wall seconds, its own peak RSS in KiB
(wait4's ru_maxrss, measured from this small process, which the kernel
counts in the child's peak instead of the caller's), its exit code and its
CPU seconds (user + sys of CMD and its children) to RESULTS as one
tab-separated line. CODES: the exit codes accepted, comma separated
(`check` exits 1 on findings); any other exit fails with the command's
stderr."""
import os
import subprocess
import sys
import time

results, codes = sys.argv[1], sys.argv[2].split(",")
sep = sys.argv.index("--")
fields, argv = sys.argv[3:sep], sys.argv[sep + 1:]
t = time.perf_counter()
p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = p.stderr.read()
_, status, ru = os.wait4(p.pid, 0)
wall = time.perf_counter() - t
code = os.waitstatus_to_exitcode(status)
if str(code) not in codes:
    sys.exit(f"{' '.join(fields)}: exit {code}: {err.decode(errors='replace')}")
cpu = ru.ru_utime + ru.ru_stime
with open(results, "a") as f:
    f.write("\t".join([*fields, f"{wall:.3f}", str(ru.ru_maxrss), str(code), f"{cpu:.3f}"]) + "\n")
