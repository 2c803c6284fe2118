#!/usr/bin/env bash
# kpack against fat, and the build-time split against the reference's
# after-the-fact one, in the same run (run inside the build root, after
# `make wheels` and `bazel run --config=kpack //:copy_wheels -- DIST_KPACK`):
#   1. sizes: each distribution's fat wheel (anchor) against its host wheel
#      and device wheels, compressed and installed (sum of members);
#   2. an incremental build after a one-line change to a HIP kernel
#      (examples/pjrt/kernels/vector_add.hip, restored on exit): `bazel build
#      //:wheels` fat (anchor) and --config=kpack, alternating, twice each;
#   3. the packaging of jax-rocm7-plugin's device code: rocm-kpack's own
#      ArtifactSplitter on the fat wheel's package (anchor: unbundling,
#      ELF transform of each binary, archives) against what the build runs
#      for it (`rocm-wheel kpack marker` and objcopy per source,
#      `rocm-wheel kpack archive` per target), and the bytes each writes.
#
#   scripts/buildroot bash bench/kpack/run.sh dist dist-kpack
set -euo pipefail
cd "$(dirname "$0")/../.."
fat=$(cd "${1:?usage: run.sh FAT_DIST KPACK_DIST}" && pwd)
kp=$(cd "${2:?usage: run.sh FAT_DIST KPACK_DIST}" && pwd)
out=bench/out/kpack
mkdir -p "$out"
py=.venv/bin/python

echo "## sizes" | tee "$out/sizes.txt"
"$py" - "$fat" "$kp" <<'PY' | tee -a "$out/sizes.txt"
import glob, os, sys, zipfile
fat, kp = sys.argv[1:3]
def installed(w):
    return sum(i.file_size for i in zipfile.ZipFile(w).infolist())
print("| distribution | fat wheel (anchor) | host wheel | device wheels | host / fat | installed: host + one device / fat |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for dist, tag in (("jax_rocm7_plugin", "cp312-cp312"), ("example_rocm_plugin", "cp312-cp312"), ("example_rocm7_pjrt", "py3-none")):
    f = glob.glob(f"{fat}/{dist}-*-{tag}-*.whl")[0]
    h = glob.glob(f"{kp}/{dist}-*-{tag}-*.whl")[0]
    devs = sorted(glob.glob(f"{kp}/{dist}_device_*.whl"))
    size = os.path.getsize
    one = installed(h) + installed(devs[-1])
    print("| %s | %d B | %d B | %s | **%.3f×** | %.3f× (%d B vs %d B) |" % (
        dist, size(f), size(h), ", ".join("%s %d B" % (d.split("_device_")[1].split("-")[0], size(d)) for d in devs),
        size(h) / size(f), one / installed(f), one, installed(f)))
PY

echo "## incremental build after a kernel edit" | tee "$out/incremental.txt"
src=examples/pjrt/kernels/vector_add.hip
cp "$src" "$out/vector_add.hip.orig"
trap 'cp "$out/vector_add.hip.orig" "$src"' EXIT
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
build() {
  local start end
  start=$(date +%s.%N)
  bazel build "$@" //:wheels >"$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }
  end=$(date +%s.%N)
  printf '%s %s s, %s\n' "${1:-fat}" "$(elapsed "$start" "$end")" "$(grep -o '[0-9,]* processes[^.]*' "$out/build.log" | tail -1)"
}
# Both configurations built once before the measured edits.
build >/dev/null
build --config=kpack >/dev/null
for round in 1 2; do
  echo "// bench edit $round $(date +%s%N)" >>"$src"
  build | tee -a "$out/incremental.txt"
  build --config=kpack | tee -a "$out/incremental.txt"
done
cp "$out/vector_add.hip.orig" "$src"

echo "## packaging jax-rocm7-plugin's device code" | tee "$out/split.txt"
work=$(mktemp -d "$HOME/.cache/rules_rocm/bench_kpack.XXXXXX")
trap 'cp "$out/vector_add.hip.orig" "$src"; rm -rf "$work"' EXIT
wheel=$(ls "$fat"/jax_rocm7_plugin-*-cp312-cp312-*.whl)
mkdir -p "$work/in"
unzip -q "$wheel" 'jax_rocm7_plugin/*' -d "$work/in"
echo jax_rocm7_plugin >"$work/in/artifact_manifest.txt"
start=$(date +%s.%N)
PYTHONPATH=/opt/rules_rocm_shared/third_party/rocm-kpack-e348328/python "$py" tests/host/kpack/split_reference.py "$work/in" "$work/split" >"$work/split.log" 2>&1
ref_s=$(elapsed "$start" "$(date +%s.%N)")
ref_bytes=$(du -sb "$work/split" | cut -f1)
# What the build runs for the same package: its host objects' markers and
# embeds, then one archive per target, on the code objects of the build.
rw=$(bazel cquery --output=files //tools:rocm-wheel 2>/dev/null | head -1)
objcopy=$(ls /usr/lib/llvm-*/bin/llvm-objcopy | sort -V | tail -1)
mapfile -t objs < <(find -L bazel-out/ -path '*jaxlib/rocm/_hip*' -name '*.host.o' | grep k8-opt | sort -u)
start=$(date +%s.%N)
n=0
for o in "${objs[@]}"; do
  "$rw" kpack marker --kernel-name "k$n" --search-path '.kpack/@GFXARCH@.kpack' --output "$work/m$n" --wrapper-output "$work/w$n"
  "$objcopy" --update-section ".hip_fatbin=$work/m$n" --update-section ".hipFatBinSegment=$work/w$n" \
    --set-section-alignment .hip_fatbin=1 --rename-section .hip_fatbin=.rocm_kpack_ref "$o" "$work/o$n.o"
  n=$((n + 1))
done
for t in gfx1200 gfx1201; do
  args=()
  i=0
  for co in $(find -L bazel-out/ -path '*jaxlib/rocm/_hip*' -name "*.$t.co" | grep k8-opt | sort -u); do
    args+=(--kernel "k$i#0@$t=$co")
    i=$((i + 1))
  done
  "$rw" kpack archive --group jax_rocm7_plugin --family "$t" --target "$t" "${args[@]}" --output "$work/$t.kpack"
done
ours_s=$(elapsed "$start" "$(date +%s.%N)")
ours_bytes=$(cat "$work"/m* "$work"/w* "$work"/*.kpack | wc -c)
printf '| rocm-kpack ArtifactSplitter on the fat package (anchor) | %.2f s | %d B written (the package again, transformed, and archives) |\n' "$ref_s" "$ref_bytes" | tee -a "$out/split.txt"
printf '| the build'"'"'s kpack packaging (%d sources, 2 targets) | %.2f s (**%s×**) | %d B written (markers, wrappers, archives; %s×) |\n' \
  "$n" "$ours_s" "$(awk -v a="$ours_s" -v b="$ref_s" 'BEGIN { printf "%.2f", a / b }')" "$ours_bytes" \
  "$(awk -v a="$ours_bytes" -v b="$ref_bytes" 'BEGIN { printf "%.3f", a / b }')" | tee -a "$out/split.txt"
