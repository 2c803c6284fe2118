#!/usr/bin/env bash
# What `make wheels` left in DIST (run inside the build root after it): the
# pjrt wheel with device code for exactly the default --//:gfx targets
# (gfx1200, gfx1201), both kernels (the rocPRIM sort among them) in each,
# and a jaxlib and a plugin wheel for every Python 3.11-3.14 and 3.14t.
set -euo pipefail
cd "$(dirname "$0")/../.."
dist=${1:?usage: dist_test.sh DIST_DIR}
source tests/lib/common.sh
PY=.venv/bin/python
[[ -x $PY ]] || fail "$PY missing: run scripts/setup.sh"

shopt -s nullglob
pjrt=("$dist"/example_rocm7_pjrt-*.whl)
((${#pjrt[@]} == 1)) || fail "want one example_rocm7_pjrt wheel in $dist, found ${#pjrt[@]}"
got=$("$PY" tests/lib/bundle_targets.py "${pjrt[0]}" --per-bundle)
want=$'gfx1200,gfx1201\ngfx1200,gfx1201'
[[ $got == "$want" ]] || fail "${pjrt[0]}: bundles hold [$got], want two bundles of gfx1200 gfx1201"
# The rocPRIM sort's kernels (symbols in namespace rocprim, read by llvm-nm)
# are in one of the two bundles, for each target.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unzip -q -o "${pjrt[0]}" -d "$tmp/w"
so=$(find "$tmp/w" -name xla_rocm_plugin.so)
source tests/lib/rocm_wheel.sh
rw=$(rocm_wheel_path) || fail "cannot build //tools:rocm-wheel"
for target in gfx1200 gfx1201; do
  found=0
  for i in 0 1; do
    "$rw" bundle extract --target "$target" --bundle "$i" --output "$tmp/$target.$i.co" "$so" ||
      fail "no $target code object in bundle $i of $so"
    # Whole output first: `llvm-nm | grep -q` would fail on SIGPIPE under pipefail.
    syms=$("$(llvm_bin)/llvm-nm" "$tmp/$target.$i.co") || fail "llvm-nm $target bundle $i"
    [[ $syms == *7rocprim* ]] && found=1
  done
  ((found)) || fail "${pjrt[0]}: no rocPRIM kernel in the $target code objects"
done
for dist_name in example_jaxlib example_rocm_plugin jax_rocm7_plugin; do
  # cp314-cp314t: the free-threaded 3.14t.
  for tags in cp311-cp311 cp312-cp312 cp313-cp313 cp314-cp314 cp314-cp314t; do
    w=("$dist/$dist_name"-*-$tags-manylinux_*.whl)
    ((${#w[@]} == 1)) || fail "want one $dist_name wheel tagged $tags in $dist, found ${#w[@]}"
  done
done
w=("$dist"/jax_rocm7_plugin-0.10.2-cp314-cp314t-manylinux_2_28_x86_64.whl)
[[ -f ${w[0]} ]] || fail "no jax_rocm7_plugin-0.10.2-cp314-cp314t-manylinux_2_28_x86_64.whl in $dist (manylinux_2_28 like the others)"
echo "ok: $dist holds the pjrt wheel for gfx1200,gfx1201 and the per-Python wheels (two examples, the real jax-rocm7-plugin) for cp311-cp314 and cp314t"
