# Sourced by bench scripts. measure NAME CMD...: runs CMD once (stdout
# discarded), appends "NAME<TAB>wall seconds<TAB>peak RSS KiB" to $results
# (peak RSS of exactly this child, from wait4); a failing CMD stops the
# benchmark with its stderr. Needs $venv (its python) and $results.
measure() {
  local name=$1; shift
  # Flush the previous run's dirty pages so its writeback is not billed here.
  sync
  "$venv/bin/python" - "$name" "$results" "$@" <<'PY'
import os, subprocess, sys, time
name, results, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
t = time.perf_counter()
p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = p.stderr.read()
_, status, ru = os.wait4(p.pid, 0)
wall = time.perf_counter() - t
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit(f"{name}: {err.decode(errors='replace')}")
with open(results, "a") as f:
    f.write(f"{name}\t{wall:.3f}\t{ru.ru_maxrss}\n")
PY
}
