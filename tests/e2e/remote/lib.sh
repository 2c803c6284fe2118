# Shared by tests/e2e/clean_builds_test.sh and bench/rbe/run.sh
# (sourced, not run). Builds in this checkout use its normal output base (as
# `make bazel-test` left it: the cargo-built rocm-wheel tool is already there,
# which saves a ~2 min compile), or RULES_ROCM_E2E_OUTPUT_BASE when set.
# Other output bases (the copy's) live under ${TMPDIR:-/tmp} and are removed.

E2E_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd -P)
source "$E2E_ROOT/tests/lib/common.sh"
source "$E2E_ROOT/tests/lib/rocm_wheel.sh"
E2E_VENV=${ROCM_WHEEL_VENV:-$E2E_ROOT/.venv}
E2E_PY=$E2E_VENV/bin/python
E2E_CHECK=$E2E_ROOT/tests/e2e/remote/cache_check.py
BAZEL=${BAZEL:-bazel}
# One directory per checkout and user, so two checkouts never share a server.
E2E_TMP=${TMPDIR:-/tmp}/rules_rocm-e2e-$(id -u)-$(printf '%s' "$E2E_ROOT" | cksum | cut -d' ' -f1)
# Empty: the checkout's normal output base and server (left running).
E2E_MAIN_OB=${RULES_ROCM_E2E_OUTPUT_BASE:-}
# Output bases whose Bazel server must be stopped on exit.
E2E_SERVERS=()
E2E_DEADLINE=0

e2e_require_tools() {
  [[ -x $E2E_PY ]] || fail "no Python venv at $E2E_VENV: run \`make setup\` first (or set ROCM_WHEEL_VENV)"
  command -v "$BAZEL" >/dev/null || fail "bazel not found: run this inside the build root (scripts/buildroot)"
}

# e2e_deadline SECONDS: every later bazel call is bounded by what is left.
e2e_deadline() {
  E2E_DEADLINE=$((SECONDS + $1))
}

e2e_remaining() {
  local left=$((E2E_DEADLINE - SECONDS))
  ((left > 0)) || fail "time budget exhausted (raise the test's *_TIMEOUT variable)"
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
  left=$(e2e_remaining) || fail "time budget exhausted (raise the test's *_TIMEOUT variable)"
  # In the background + `wait`: a signal to the test interrupts `wait` at
  # once (not after bazel returns), and e2e_on_exit can stop this client.
  # 9>&-: a server this client starts must not hold the test's saved stderr
  # (e2e_traps), or whoever reads that pipe (CI) waits for the server to exit.
  (cd "$ws" && exec timeout --kill-after=30 "$left" "$BAZEL" "${startup[@]}" "$@" 9>&-) &
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
    [[ -d $ob ]] && (cd / && timeout 120 "$BAZEL" --output_base="$ob" shutdown >/dev/null 2>&1 9>&- || true)
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
  # Unsorted: the checks match spawns by their outputs, and sorting a log of
  # every input of ~1,700 spawns is a pass over gigabytes after the build.
  if ! e2e_bazel "$ws" "$ob" build --disk_cache= \
    --execution_log_json_file="$run/$name.exec.json" --noexecution_log_sort \
    --build_event_json_file="$run/$name.bep.json" \
    "$@" >"$run/$name.log" 2>&1; then
    tail -40 "$run/$name.log" >&2
    fail "bazel build ($name) failed; full output in $run/$name.log"
  fi
  grep -E '^INFO: [0-9]+ processes' "$run/$name.log" || true
  local execroot
  execroot=$(e2e_bazel "$ws" "$ob" info execution_root 2>/dev/null) ||
    fail "bazel info execution_root failed for $name"
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

# e2e_tool_sha WORKSPACE OUTPUT_BASE [FLAGS...]: sha256 of the rocm-wheel
# binary the default toolchain uses (//tools:rocm-wheel), as built with FLAGS
# (the build's own, so that asking builds nothing new).
e2e_tool_sha() {
  local ws=$1 ob=$2 bin startup=()
  shift 2
  [[ -z $ob ]] || startup=(--output_base="$ob")
  bin=$(cd "$ws" && BAZEL=$BAZEL rocm_wheel_path "${startup[@]}" -- "$@") || fail "cannot build //tools:rocm-wheel in $ws"
  [[ -e $bin ]] || fail "no rocm-wheel binary at $bin"
  sha256sum "$(readlink -f "$bin")" | cut -d' ' -f1
}

# e2e_copy_checkout DEST: the checkout's files (tracked and untracked, not
# ignored: what a fresh clone with the same edits has) at another path.
# Independent of git worktrees: a plain directory.
e2e_copy_checkout() {
  local dest=$1
  git -C "$E2E_ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
    fail "$E2E_ROOT is not a git checkout; the copy is made from \`git ls-files\`"
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
      fail "cannot copy $venv into the copy"
  fi
  # buildifier only: not a build input.
  [[ -e $E2E_ROOT/node_modules ]] && ln -sfn "$(readlink -f "$E2E_ROOT/node_modules")" "$dest/node_modules"
}

# --- Services on loopback ----------------------------------------------------
# Every service runs in its own process group (setsid), recorded in
# E2E_GROUPS; e2e_stop_services stops them newest first (a worker before the
# server it talks to, the server before its database).
E2E_GROUPS=()

e2e_free_port() {
  "$E2E_PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# e2e_spawn LOG COMMAND...: starts COMMAND in a new process group; sets
# E2E_SPAWNED to its pid.
e2e_spawn() {
  local log=$1
  shift
  setsid "$@" >"$log" 2>&1 &
  E2E_SPAWNED=$!
  E2E_GROUPS+=("$E2E_SPAWNED")
}

# e2e_stop_group PID: TERM to the group, KILL after 10 s.
e2e_stop_group() {
  local pid=$1 i
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 20); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  kill -KILL -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

e2e_stop_services() {
  local i
  for ((i = ${#E2E_GROUPS[@]} - 1; i >= 0; i--)); do
    e2e_stop_group "${E2E_GROUPS[i]}"
  done
  E2E_GROUPS=()
  E2E_BGD_PID=""
}

# e2e_await_file FILE SECONDS: true once FILE exists, false when time ran
# out. How to learn that a background job ended, not `wait PID`: bash forgets
# a finished job's status once it forks another child with the same PID, and
# PIDs wrap (pid_max 32768) within minutes on a busy machine; `wait` then
# fails ("not a child of this shell"), or waits for that other child.
e2e_await_file() {
  local i
  for ((i = 0; i < $2 * 5; i++)); do
    [[ -e $1 ]] && return 0
    sleep 0.2
  done
  [[ -e $1 ]]
}

# e2e_wait_port PID PORT SECONDS: true once 127.0.0.1:PORT accepts, false
# when PID died or time ran out.
e2e_wait_port() {
  local pid=$1 port=$2 waited=0
  while ((waited < $3)); do
    kill -0 "$pid" 2>/dev/null || return 1
    "$E2E_PY" -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' \
      "$port" 2>/dev/null && return 0
    sleep 1
    waited=$((waited + 1))
  done
  return 1
}

# --- BuildGrid on loopback --------------------------------------------------
E2E_BGD_PID=""

# e2e_start_buildgrid DIR [TEMPLATE [SED_EXPR...]]: starts `bgd server start`
# on 127.0.0.1 and a free port with the configuration TEMPLATE (default
# tests/e2e/remote/buildgrid.yml.in: a cache) and extra substitutions; sets
# E2E_CACHE_PORT. Retries when another process takes the port between
# probing and binding.
e2e_start_buildgrid() {
  local dir=$1 template=${2:-$E2E_ROOT/tests/e2e/remote/buildgrid.yml.in} bgd=$E2E_VENV/bin/bgd attempt port
  shift $(($# < 2 ? $# : 2))
  local -a extra=()
  local e
  for e in "$@"; do extra+=(-e "$e"); done
  [[ -x $bgd ]] || fail "BuildGrid (bgd) not in $E2E_VENV/bin: run \`make setup\` first"
  mkdir -p "$dir/cas"
  for attempt in 1 2 3; do
    port=$(e2e_free_port)
    sed -e "s|@ADDRESS@|127.0.0.1:$port|" -e "s|@STORAGE@|$dir/cas|" "${extra[@]}" \
      "$template" >"$dir/buildgrid.yml"
    e2e_spawn "$dir/buildgrid.log" "$bgd" server start "$dir/buildgrid.yml"
    E2E_BGD_PID=$E2E_SPAWNED
    if e2e_wait_port "$E2E_BGD_PID" "$port" 90; then
      E2E_CACHE_PORT=$port
      echo "--- BuildGrid (pid $E2E_BGD_PID) serving grpc://127.0.0.1:$port"
      return 0
    fi
    e2e_stop_buildgrid
    echo "BuildGrid did not come up on 127.0.0.1:$port (attempt $attempt):" >&2
    tail -20 "$dir/buildgrid.log" >&2
  done
  fail "could not start BuildGrid; see $dir/buildgrid.log"
}

# e2e_restart_buildgrid DIR: BuildGrid started again from DIR's configuration
# (the same port and storage) after e2e_stop_buildgrid or a kill.
e2e_restart_buildgrid() {
  local dir=$1
  e2e_spawn "$dir/buildgrid.restart.log" "$E2E_VENV/bin/bgd" server start "$dir/buildgrid.yml"
  E2E_BGD_PID=$E2E_SPAWNED
  e2e_wait_port "$E2E_BGD_PID" "$E2E_CACHE_PORT" 90 ||
    fail "BuildGrid did not come back on 127.0.0.1:$E2E_CACHE_PORT; see $dir/buildgrid.restart.log"
}

e2e_stop_buildgrid() {
  [[ -n $E2E_BGD_PID ]] || return 0
  e2e_stop_group "$E2E_BGD_PID"
  local -a left=()
  local g
  for g in "${E2E_GROUPS[@]}"; do [[ $g == "$E2E_BGD_PID" ]] || left+=("$g"); done
  E2E_GROUPS=("${left[@]}")
  E2E_BGD_PID=""
}

# --- PostgreSQL (BuildGrid's scheduler database) ----------------------------
# e2e_start_postgres DIR: a private cluster in DIR/pg on 127.0.0.1 and a free
# port, trust authentication for user bgd, its socket in DIR (never the
# system's); sets E2E_PG_URL. PostgreSQL refuses to run as root: as root it
# runs as nobody.
e2e_start_postgres() {
  local dir=$1 bin port attempt
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [[ -x $bin/initdb ]] || fail "PostgreSQL is missing (no /usr/lib/postgresql/*/bin/initdb): the build root's package list has postgresql; run this inside scripts/buildroot"
  local -a as=()
  mkdir -p "$dir/pg" "$dir/pgsock"
  if (($(id -u) == 0)); then
    as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    chown 65534:65534 "$dir/pg" "$dir/pgsock"
    # nobody must reach them: open the test's own directories (mktemp makes
    # them 0700) from DIR up to the per-checkout directory.
    local d=$dir
    while chmod o+x "$d" && [[ $d == "$E2E_TMP"/* ]]; do d=$(dirname "$d"); done
  fi
  "${as[@]}" "$bin/initdb" -D "$dir/pg" -U bgd --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
    { tail -20 "$dir/initdb.log" >&2; fail "initdb failed; see $dir/initdb.log"; }
  for attempt in 1 2 3; do
    port=$(e2e_free_port)
    # No durability needed: the cluster lives as long as the test.
    e2e_spawn "$dir/postgres.log" "${as[@]}" "$bin/postgres" -D "$dir/pg" -h 127.0.0.1 -p "$port" \
      -k "$dir/pgsock" -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200
    if e2e_wait_port "$E2E_SPAWNED" "$port" 60 && e2e_pg_ready "$bin" "$port" 60; then
      E2E_PG_URL=postgresql://bgd@127.0.0.1:$port/postgres
      echo "--- PostgreSQL (pid $E2E_SPAWNED) on 127.0.0.1:$port"
      "$E2E_VENV/bin/bgd" migrate apply "$E2E_PG_URL" >"$dir/migrate.log" 2>&1 ||
        { tail -20 "$dir/migrate.log" >&2; fail "bgd migrate apply failed; see $dir/migrate.log"; }
      return 0
    fi
    echo "PostgreSQL did not come up on 127.0.0.1:$port (attempt $attempt):" >&2
    tail -20 "$dir/postgres.log" >&2
    e2e_stop_group "$E2E_SPAWNED"
  done
  fail "could not start PostgreSQL; see $dir/postgres.log"
}

# e2e_pg_ready BIN PORT SECONDS: the port opens before the server accepts
# sessions ("the database system is starting up"); wait for that too.
e2e_pg_ready() {
  local waited=0
  until "$1/pg_isready" -q -h 127.0.0.1 -p "$2"; do
    ((waited < $3)) && kill -0 "$E2E_SPAWNED" 2>/dev/null || return 1
    sleep 1
    waited=$((waited + 1))
  done
}

# --- buildbox worker ----------------------------------------------------------
# e2e_start_worker DIR SERVER_PORT PLATFORM...: buildbox-casd (the worker's
# local CAS, a proxy of BuildGrid's) and buildbox-worker with the bubblewrap
# runner. Actions see their input root plus /usr and /etc (and the merged-/usr
# links), read-only: what a worker image built from the build root offers.
# PLATFORM: KEY=VALUE pairs the worker registers (must equal the exec
# platform's exec_properties; matching is exact and case-sensitive).
e2e_start_worker() {
  local dir=$1 port=$2
  shift 2
  local b
  for b in buildbox-casd buildbox-worker buildbox-run-bubblewrap; do
    command -v "$b" >/dev/null || fail "$b is missing: the build root's package list has buildbox; run this inside scripts/buildroot"
  done
  mkdir -p "$dir/casd"
  local sock=$dir/casd.sock
  # Retries that outlast a server restart (8: about a minute, backing off
  # from 1 s; the default 4 gives up after 9 s, and a worker that gives up
  # drops its running actions, which the restarted scheduler never hands out
  # again: the build waits for them until --remote_timeout).
  e2e_spawn "$dir/casd.log" buildbox-casd --cas-remote="http://127.0.0.1:$port" \
    --bind="unix:$sock" --log-level=warning --retry-limit=8 "$dir/casd"
  local casd=$E2E_SPAWNED waited=0
  while [[ ! -S $sock ]]; do
    kill -0 "$casd" 2>/dev/null && ((waited < 60)) ||
      { tail -20 "$dir/casd.log" >&2; fail "buildbox-casd did not come up; see $dir/casd.log"; }
    sleep 0.5
    waited=$((waited + 1))
  done
  local -a args=(
    --bots-remote="http://127.0.0.1:$port" --cas-remote="unix:$sock"
    --buildbox-run=/usr/bin/buildbox-run-bubblewrap
    --runner-arg=--staging-mode=copy-or-link
    --concurrent-jobs="$(nproc)"
    --retry-limit=8
  )
  local m
  for m in /usr:/usr /etc:/etc /usr/bin:/bin /usr/sbin:/sbin /usr/lib:/lib /usr/lib64:/lib64; do
    [[ -e ${m%%:*} ]] && args+=(--runner-arg=--ro-bind-mount="$m")
  done
  for m in "$@"; do args+=(--platform "$m"); done
  e2e_spawn "$dir/worker.log" buildbox-worker "${args[@]}" "rules-rocm-e2e-$$"
  sleep 2
  kill -0 "$E2E_SPAWNED" 2>/dev/null ||
    { tail -20 "$dir/worker.log" >&2; fail "buildbox-worker exited at once; see $dir/worker.log"; }
  echo "--- buildbox-worker (pid $E2E_SPAWNED) for grpc://127.0.0.1:$port: $*"
}
