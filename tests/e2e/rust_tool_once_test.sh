#!/usr/bin/env bash
# The rocm-wheel tool and each of its crates are compiled once per build, in
# one configuration, whatever rules_rocm's flags say: Bazel 7 carries
# Starlark settings (--//:gfx, the per-gfx device setting, the Python version
# of each per-Python wheel) into the exec configuration, and without
# tool_reset_transition (rules/private/tool_configuration.bzl) every Python
# version and gfx target would compile the crates again.
#
# aquery, no build: every Rustc action of //:wheels (all Python versions,
# several gfx targets) names a distinct crate target, the tool's crates are
# among them, and a narrower command line (one gfx target, one Python
# version) plans exactly the same actions (same outputs, same keys: no
# recompilation when flags change between commands).
set -euo pipefail
cd "$(dirname "$0")/../.."
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# rustc_actions NAME FLAGS...: "target<TAB>output" per Rustc action.
rustc_actions() {
  local name=$1
  shift
  bazel aquery "$@" --output=jsonproto 'mnemonic("Rustc", deps(//:wheels))' >"$tmp/$name.json" 2>"$tmp/$name.err" ||
    { tail -30 "$tmp/$name.err" >&2; fail "aquery $*"; }
  python3 - "$tmp/$name.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
targets = {t["id"]: t["label"] for t in d.get("targets", [])}
frags = {f["id"]: f for f in d.get("pathFragments", [])}
arts = {a["id"]: a["pathFragmentId"] for a in d.get("artifacts", [])}
def path(fid):
    parts = []
    while fid:
        f = frags[fid]
        parts.append(f["label"])
        fid = f.get("parentId", 0)
    return "/".join(reversed(parts))
for a in d.get("actions", []):
    outs = sorted(path(arts[o]) for o in a.get("outputIds", []))
    print(f"{targets[a['targetId']]}\t{outs[0]}")
PY
}

wide=(--//:gfx=gfx120X-all,gfx94X-dcgpu,gfx110X-all --//:python_versions=all)
rustc_actions wide "${wide[@]}" | sort >"$tmp/wide.txt"
n=$(wc -l <"$tmp/wide.txt")
echo "Rustc actions for //:wheels with ${wide[*]}: $n"
for crate in rocm-wheel wheel-writer elf-edit manylinux-check offload-bundle wheel-inspect atomic-write; do
  c=$(cut -f1 "$tmp/wide.txt" | grep -c "//tools/crates/$crate:$crate\$" || true)
  [[ $c == 1 ]] || { cat "$tmp/wide.txt" >&2; fail "$c Rustc actions for //tools/crates/$crate (want 1)"; }
done
dups=$(cut -f1 "$tmp/wide.txt" | sort | uniq -d)
[[ -z $dups ]] || { cat "$tmp/wide.txt" >&2; fail "compiled more than once: $dups"; }
configs=$(cut -f2 "$tmp/wide.txt" | cut -d/ -f2 | sort -u)
[[ $(wc -l <<<"$configs") == 1 ]] || fail "Rustc outputs in several configurations: $configs"
echo "ok: each crate compiled once, all in $configs"

rustc_actions narrow --//:gfx=gfx1201 --//:python_versions=3.13 | sort >"$tmp/narrow.txt"
diff "$tmp/wide.txt" "$tmp/narrow.txt" >&2 ||
  fail "a narrower --//:gfx / --//:python_versions plans other Rustc actions (outputs must not move)"
echo "ok: the same $n Rustc actions for --//:gfx=gfx1201 --//:python_versions=3.13"
