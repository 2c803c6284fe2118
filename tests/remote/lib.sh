# Shared by tests/e2e/remote_cache_test.sh and tests/e2e/reproducible_test.sh
# (sourced, not run). Builds in this checkout use its normal output base (as
# `make bazel-test` left it: the cargo-built rocm-wheel tool is already there,
# which saves a ~2 min compile), or RULES_ROCM_E2E_OUTPUT_BASE when set.
# Other output bases (the copy's) live under ${TMPDIR:-/tmp} and are removed.

E2E_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
source "$E2E_ROOT/tests/lib/rocm_wheel.sh"
E2E_VENV=${ROCM_WHEEL_VENV:-$E2E_ROOT/.venv}
E2E_PY=$E2E_VENV/bin/python
E2E_CHECK=$E2E_ROOT/tests/remote/cache_check.py
BAZEL=${BAZEL:-bazel}
# One directory per checkout and user, so two checkouts never share a server.
E2E_TMP=${TMPDIR:-/tmp}/rules_rocm-e2e-$(id -u)-$(printf '%s' "$E2E_ROOT" | cksum | cut -d' ' -f1)
# Empty: the checkout's normal output base and server (left running).
E2E_MAIN_OB=${RULES_ROCM_E2E_OUTPUT_BASE:-}
# Output bases whose Bazel server must be stopped on exit.
E2E_SERVERS=()
E2E_DEADLINE=0

e2e_fail() {
  echo "FAIL: $*" >&2
  exit 1
}

e2e_require_tools() {
  [[ -x $E2E_PY ]] || e2e_fail "no Python venv at $E2E_VENV: run \`make setup\` first (or set ROCM_WHEEL_VENV)"
  command -v "$BAZEL" >/dev/null || e2e_fail "bazel not found: run this inside the build root (scripts/buildroot)"
}

# e2e_deadline SECONDS: every later bazel call is bounded by what is left.
e2e_deadline() {
  E2E_DEADLINE=$((SECONDS + $1))
}

e2e_remaining() {
  local left=$((E2E_DEADLINE - SECONDS))
  ((left > 0)) || e2e_fail "time budget exhausted (raise the test's *_TIMEOUT variable)"
  echo "$left"
}

# e2e_bazel WORKSPACE OUTPUT_BASE COMMAND ARGS... (OUTPUT_BASE "": the
# workspace's normal one)
e2e_bazel() {
  local ws=$1 ob=$2
  shift 2
  local startup=()
  if [[ -n $ob ]]; then
    startup=(--output_base="$ob" --max_idle_secs=600)
    local s
    for s in "${E2E_SERVERS[@]}"; do [[ $s == "$ob" ]] && break; done
    [[ ${s:-} == "$ob" ]] || E2E_SERVERS+=("$ob")
  fi
  local left rc=0
  left=$(e2e_remaining) || e2e_fail "time budget exhausted (raise the test's *_TIMEOUT variable)"
  # In the background + `wait`: a signal to the test interrupts `wait` at
  # once (not after bazel returns), and e2e_on_exit can stop this client.
  (cd "$ws" && exec timeout --kill-after=30 "$left" "$BAZEL" "${startup[@]}" "$@") &
  E2E_CHILD=$!
  wait "$E2E_CHILD" || rc=$?
  E2E_CHILD=""
  return "$rc"
}

# e2e_traps FUNCTION: FUNCTION runs on every exit, also on SIGINT/SIGTERM/
# SIGHUP (a CI timeout), after the running bazel client is stopped.
E2E_CHILD=""
E2E_ON_EXIT=""
e2e_on_exit() {
  # A signal may land while a build's output is redirected to its log:
  # report on the test's own stderr (saved by e2e_traps).
  exec 1>&9 2>&9
  if [[ -n $E2E_CHILD ]]; then
    kill -TERM "$E2E_CHILD" 2>/dev/null || true
    wait "$E2E_CHILD" 2>/dev/null || true
    E2E_CHILD=""
  fi
  [[ -z $E2E_ON_EXIT ]] || "$E2E_ON_EXIT"
}
e2e_traps() {
  E2E_ON_EXIT=$1
  exec 9>&2
  trap e2e_on_exit EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  trap 'exit 129' HUP
}

# e2e_output_base WORKSPACE OUTPUT_BASE: the directory itself.
e2e_output_base() {
  if [[ -n $2 ]]; then echo "$2"; else e2e_bazel "$1" "" info output_base 2>/dev/null; fi
}

e2e_shutdown_servers() {
  local ob
  for ob in "${E2E_SERVERS[@]}"; do
    [[ -d $ob ]] && (cd / && timeout 120 "$BAZEL" --output_base="$ob" shutdown >/dev/null 2>&1 || true)
  done
}

# Flags that make a build execute its actions itself: no disk or remote cache,
# whatever a user.bazelrc or ~/.bazelrc says.
E2E_LOCAL_FLAGS=(--disk_cache= --remote_cache= --remote_executor=)

# e2e_build RUN_DIR NAME WORKSPACE OUTPUT_BASE FLAGS... TARGETS...
# Leaves RUN_DIR/NAME.{log,exec.json,bep.json,top.json} for cache_check.py.
e2e_build() {
  local run=$1 name=$2 ws=$3 ob=$4
  shift 4
  echo "--- [$((SECONDS))s] build $name: $ws ($*)"
  if ! e2e_bazel "$ws" "$ob" build --disk_cache= \
    --execution_log_json_file="$run/$name.exec.json" \
    --build_event_json_file="$run/$name.bep.json" \
    "$@" >"$run/$name.log" 2>&1; then
    tail -40 "$run/$name.log" >&2
    e2e_fail "bazel build ($name) failed; full output in $run/$name.log"
  fi
  grep -E '^INFO: [0-9]+ processes' "$run/$name.log" || true
  local execroot
  execroot=$(e2e_bazel "$ws" "$ob" info execution_root 2>/dev/null) ||
    e2e_fail "bazel info execution_root failed for $name"
  "$E2E_PY" "$E2E_CHECK" record --bep "$run/$name.bep.json" --execroot "$execroot" \
    --out "$run/$name.top.json"
}

# e2e_check RUN_DIR REF CANDIDATE CHECK_ARGS...: the check, over two builds.
e2e_check() {
  local run=$1 ref=$2 cand=$3
  shift 3
  "$E2E_PY" "$E2E_CHECK" compare --name "$cand" \
    --ref-log "$run/$ref.exec.json" --ref-top "$run/$ref.top.json" \
    --log "$run/$cand.exec.json" --top "$run/$cand.top.json" "$@"
}

# e2e_tool_sha WORKSPACE OUTPUT_BASE: sha256 of the rocm-wheel binary the
# default toolchain uses (//tools:rocm-wheel).
e2e_tool_sha() {
  local bin startup=()
  [[ -z $2 ]] || startup=(--output_base="$2")
  bin=$(cd "$1" && BAZEL=$BAZEL rocm_wheel_path "${startup[@]}") || e2e_fail "cannot build //tools:rocm-wheel in $1"
  [[ -e $bin ]] || e2e_fail "no rocm-wheel binary at $bin"
  sha256sum "$(readlink -f "$bin")" | cut -d' ' -f1
}

# e2e_copy_checkout DEST: the checkout's files (tracked and untracked, not
# ignored: what a fresh clone with the same edits has) at another path.
# Independent of git worktrees: a plain directory.
e2e_copy_checkout() {
  local dest=$1
  git -C "$E2E_ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
    e2e_fail "$E2E_ROOT is not a git checkout; the copy is made from \`git ls-files\`"
  mkdir -p "$dest"
  (cd "$E2E_ROOT" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do
      # Deleted but still tracked files are not part of the tree being tested.
      [[ -e $f || -L $f ]] && printf '%s\0' "$f"
    done | tar --null -T - -cf -) | tar -C "$dest" -xf -
  # Tests run the venv's tools by path: give the copy its own, at its own
  # path, as a second clone would have. Hard links make that cheap; a plain
  # copy when /tmp is another file system.
  if [[ -e $E2E_ROOT/.venv ]]; then
    local venv
    venv=$(readlink -f "$E2E_ROOT/.venv")
    cp -al "$venv" "$dest/.venv" 2>/dev/null || { rm -rf "$dest/.venv" && cp -a "$venv" "$dest/.venv"; } ||
      e2e_fail "cannot copy $venv into the copy"
  fi
  # buildifier only: not a build input.
  [[ -e $E2E_ROOT/node_modules ]] && ln -sfn "$(readlink -f "$E2E_ROOT/node_modules")" "$dest/node_modules"
}

# --- BuildGrid on loopback --------------------------------------------------
E2E_BGD_PID=""

# e2e_start_buildgrid DIR: starts `bgd server start` on 127.0.0.1 and a free
# port in its own process group; sets E2E_CACHE_PORT. Retries when another
# process takes the port between probing and binding.
e2e_start_buildgrid() {
  local dir=$1 bgd=$E2E_VENV/bin/bgd attempt port
  [[ -x $bgd ]] || e2e_fail "BuildGrid (bgd) not in $E2E_VENV/bin: run \`make setup\` first"
  mkdir -p "$dir/cas"
  for attempt in 1 2 3; do
    port=$("$E2E_PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    sed -e "s|@ADDRESS@|127.0.0.1:$port|" -e "s|@STORAGE@|$dir/cas|" \
      "$E2E_ROOT/tests/remote/buildgrid.yml.in" >"$dir/buildgrid.yml"
    # setsid: the server and anything it forks form one group, stopped as one.
    setsid "$bgd" server start "$dir/buildgrid.yml" >"$dir/buildgrid.log" 2>&1 &
    E2E_BGD_PID=$!
    local waited=0
    while ((waited < 90)); do
      kill -0 "$E2E_BGD_PID" 2>/dev/null || break
      if "$E2E_PY" -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' \
        "$port" 2>/dev/null; then
        E2E_CACHE_PORT=$port
        echo "--- BuildGrid (pid $E2E_BGD_PID) serving grpc://127.0.0.1:$port"
        return 0
      fi
      sleep 1
      waited=$((waited + 1))
    done
    e2e_stop_buildgrid
    echo "BuildGrid did not come up on 127.0.0.1:$port (attempt $attempt):" >&2
    tail -20 "$dir/buildgrid.log" >&2
  done
  e2e_fail "could not start BuildGrid; see $dir/buildgrid.log"
}

e2e_stop_buildgrid() {
  [[ -n $E2E_BGD_PID ]] || return 0
  kill -TERM -- "-$E2E_BGD_PID" 2>/dev/null || kill -TERM "$E2E_BGD_PID" 2>/dev/null || true
  local i
  for i in $(seq 20); do
    kill -0 "$E2E_BGD_PID" 2>/dev/null || break
    sleep 0.5
  done
  kill -KILL -- "-$E2E_BGD_PID" 2>/dev/null || true
  wait "$E2E_BGD_PID" 2>/dev/null || true
  E2E_BGD_PID=""
}
