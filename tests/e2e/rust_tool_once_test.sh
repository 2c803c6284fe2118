#!/usr/bin/env bash
# The rocm-wheel tool and each of its crates are compiled once per build, in
# one configuration, whatever rules_rocm's flags say: Bazel 7 carries
# Starlark settings (--//:gfx, the per-gfx device setting, the Python version
# of each per-Python wheel) into the exec configuration, and without
# tool_reset_transition (rules/private/rules/tool_configuration.bzl) every Python
# version and gfx target would compile the crates again.
#
# aquery, no build: every Rustc action of //:wheels and of the tool's own
# wheels, //tools/release:wheels (all Python versions,
# several gfx targets) names a distinct crate target in its configuration
# (the tool's, or the exec one of its proc-macros and build scripts), the
# tool's crates are among them, and a narrower command line (one gfx target, one Python
# version) plans exactly the same actions (same outputs, same keys: no
# recompilation when flags change between commands). The tool's aarch64
# wheel compiles the crates once more, for aarch64 (its own configuration,
# told apart by rustc's --target): once per CPU.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib/common.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# rustc_actions NAME FLAGS...: "target<TAB>output<TAB>rustc --target" per Rustc action.
rustc_actions() {
  local name=$1
  shift
  bazel aquery "$@" --output=jsonproto 'mnemonic("Rustc", deps(//:wheels + //tools/release:wheels))' >"$tmp/$name.json" 2>"$tmp/$name.err" ||
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
    triple = next((x.split("=", 1)[1] for x in a.get("arguments", []) if x.startswith("--target=")), "")
    print(f"{targets[a['targetId']]}\t{outs[0]}\t{triple}")
PY
}

wide=(--//:gfx=gfx120X-all,gfx94X-dcgpu,gfx110X-all --//:python_versions=all)
# The tool's crates: every library under tools/crates the binary links, and the binary.
CRATES=(rocm-wheel wheel-writer wheel-rewrite parallel-zip wheel-repair wheel-thin elf-edit elf-read manylinux-check
  offload-bundle gfx-targets kpack rocm-layout wheel-inspect wheel-read wheel-format atomic-write)
rustc_actions wide "${wide[@]}" | sort >"$tmp/wide.txt"
n=$(wc -l <"$tmp/wide.txt")
echo "Rustc actions for //:wheels and //tools/release:wheels with ${wide[*]}: $n"
# configuration<TAB>target per action (bazel-out/<configuration>/bin/...),
# for x86_64 (the tool, its build tools) and for aarch64 (the arm64 wheel's).
arm=aarch64-unknown-linux-gnu
awk -F'\t' -v arm=$arm '$3 != arm {split($2, p, "/"); print p[2] "\t" $1}' "$tmp/wide.txt" | sort >"$tmp/by_config.txt"
awk -F'\t' -v arm=$arm '$3 == arm {split($2, p, "/"); print p[2] "\t" $1}' "$tmp/wide.txt" | sort >"$tmp/arm.txt"
tool_configs=""
for crate in "${CRATES[@]}"; do
  mapfile -t in_configs < <(grep "	//tools/crates/$crate:$crate\$" "$tmp/by_config.txt" | cut -f1)
  [[ ${#in_configs[@]} == 1 ]] ||
    { cat "$tmp/wide.txt" >&2; fail "${#in_configs[@]} Rustc actions for //tools/crates/$crate (want 1)"; }
  tool_configs+="${in_configs[0]}"$'\n'
done
tool_config=$(sort -u <<<"${tool_configs%$'\n'}")
[[ $(wc -l <<<"$tool_config") == 1 ]] || fail "the tool's crates in several configurations: $tool_config"
# The same crates once each for aarch64, in one configuration.
for crate in "${CRATES[@]}"; do
  n_arm=$(grep -c "	//tools/crates/$crate:\(release\|$crate\)\$" "$tmp/arm.txt" || true)
  [[ $n_arm == 1 ]] || { cat "$tmp/arm.txt" >&2; fail "$n_arm Rustc actions for //tools/crates/$crate for aarch64 (want 1)"; }
done
[[ -z $(uniq -d "$tmp/arm.txt") ]] || fail "compiled more than once for aarch64: $(uniq -d "$tmp/arm.txt")"
arm_configs=$(cut -f1 "$tmp/arm.txt" | sort -u)
[[ $(wc -l <<<"$arm_configs") == 1 ]] || fail "the aarch64 crates in several configurations: $arm_configs"
# Two configurations at most: the tool's, and the exec one its proc-macros
# and build scripts (and their dependencies) are built in, unoptimized as in
# cargo's release profile; a crate both need is compiled once in each.
dups=$(uniq -d "$tmp/by_config.txt")
[[ -z $dups ]] || { cat "$tmp/wide.txt" >&2; fail "compiled more than once in one configuration: $dups"; }
configs=$(cut -f1 "$tmp/by_config.txt" | sort -u)
(($(wc -l <<<"$configs") <= 2)) || fail "Rustc outputs in more than two configurations: $configs"
in_both=$(cut -f2 "$tmp/by_config.txt" | sort | uniq -d | tr '\n' ' ')
echo "ok: each crate compiled once per configuration; the tool in $tool_config (aarch64: $arm_configs)," \
  "its build tools in $(grep -vx "$tool_config" <<<"$configs" || echo "the same one");" \
  "in both: ${in_both:-none}"

rustc_actions narrow --//:gfx=gfx1201 --//:python_versions=3.13 | sort >"$tmp/narrow.txt"
diff "$tmp/wide.txt" "$tmp/narrow.txt" >&2 ||
  fail "a narrower --//:gfx / --//:python_versions plans other Rustc actions (outputs must not move)"
echo "ok: the same $n Rustc actions for --//:gfx=gfx1201 --//:python_versions=3.13"
