#!/usr/bin/env bash
# A newcomer's first `make wheels`, or CI's `.ci/run`, on a machine with
# nothing cached: a fresh clone of REF with a fresh HOME (no build root, no
# Bazel output base or repository cache, no cargo, pip or npm cache), on the
# host, as the README's quick start runs it. Debian's host packages stay
# installed (apt is not undone: about a minute more on a new machine) and
# pyenv's interpreters are shared.
#
#   bench/cold_wheels/first_build.sh [wheels|ci] [REF]      (default: wheels HEAD)
#
# Prints the time of every make recipe line (and of each e2e test for ci),
# setup's parts from the times its lines appeared, and for wheels where the
# //:wheels build's action time went (action_kinds.py over Bazel's own
# profile of the command). Everything is kept under bench/out/first_build/<job>-<ref>/.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=$PWD
job=${1:-wheels}
ref=$(git rev-parse --short "${2:-HEAD}")
case $job in wheels | ci) ;; *) echo "usage: $0 [wheels|ci] [REF]" >&2; exit 2 ;; esac
out=$here/bench/out/first_build/$job-$ref
rm -rf "$out"
mkdir -p "$out"
# Next to this checkout: the offline build takes ../shared from there.
work=$(dirname "$here")/first-build-$job-$ref
rm -rf "$work" "$work.home"
git clone -q "$here" "$work"
git -C "$work" checkout -q "$ref"
# Bazel's profile of the build (not of the `bazel run` after it: a run:
# line wins over build: for the commands it names). user.bazelrc is the
# .bazelrc's try-import; inside the checkout, the build root sees the files.
[[ $job != wheels ]] || printf 'build --profile=%s/build.profile.gz\nrun --profile=%s/run.profile.gz\n' \
  "$work" "$work" >"$work/user.bazelrc"
mkdir -p "$work.home"
pyenv_root=${PYENV_ROOT:-$( (pyenv root) 2>/dev/null || echo "$HOME/.pyenv")}

start=$(date +%s)
rc=0
(
  cd "$work"
  export HOME=$work.home PYENV_ROOT=$pyenv_root CI_TIMES=$out/steps.txt
  if [[ $job == wheels ]]; then
    make wheels SHELL="$PWD/.ci/timed-shell"
  else
    bash .ci/run
  fi
) 2>&1 | while IFS= read -r line; do printf '%s %s\n' "$(date +%s)" "$line"; done >"$out/log.txt" || rc=$?
end=$(date +%s)
echo "$job of $ref from nothing: $((end - start)) s (exit $rc)" | tee "$out/summary.txt"
echo "steps (s, recipe line):" | tee -a "$out/summary.txt"
# .ci/run keeps its own CI_TIMES and prints them at its end.
[[ -f $out/steps.txt ]] || sed -n '/=== .ci\/run: make test exited/,$p' "$out/log.txt" | cut -d' ' -f2- >"$out/steps.txt"
tee -a "$out/summary.txt" <"$out/steps.txt"
# setup's parts: the seconds between the lines that start and end each.
awk -v t0="$start" '
  / setup: installing apt/ { mark("apt", $1) }
  / setup: creating .venv/ { mark("venv", $1) }
  / setup: installing buildifier/ { mark("npm", $1) }
  / buildroot: creating/ { mark("build root", $1) }
  / rust_registry: creating/ { mark("rules_rust registry", $1) }
  function mark(name, t) { print "  " name " starts at +" (t - t0) " s" }
' "$out/log.txt" | tee -a "$out/summary.txt"
if [[ -f $work/build.profile.gz ]]; then
  cp "$work/build.profile.gz" "$out/"
  python3 bench/cold_wheels/profile_parts.py "$out/build.profile.gz" >"$out/phases.json"
  python3 bench/cold_wheels/action_kinds.py "$out/build.profile.gz" | tee "$out/action_kinds.md"
fi
(cd "$work" && HOME=$work.home scripts/buildroot bazel shutdown >/dev/null 2>&1) || true
echo "kept: $out; scratch: $work and $work.home (remove them when done)"
exit "$rc"
