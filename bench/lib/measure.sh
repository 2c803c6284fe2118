# Sourced by bench scripts; each run is one line of $results (tab-separated,
# written by bench/lib/measure_rss.py): the given fields, wall seconds, peak
# RSS KiB (of exactly this command), exit code, CPU seconds (user + sys).
# Needs $venv (its python), $results and $repo.

# measure_fields CODES FIELD... -- CMD...: runs CMD once (stdout discarded);
# an exit code not in CODES (comma-separated) stops the benchmark with
# CMD's stderr.
measure_fields() {
  # Flush the previous run's dirty pages so their writeback is not billed here.
  sync
  "$venv/bin/python" "$repo/bench/lib/measure_rss.py" "$results" "$@"
}

# measure NAME CMD...: measure_fields for a command that must exit 0.
measure() {
  local name=$1; shift
  measure_fields 0 "$name" -- "$@"
}
