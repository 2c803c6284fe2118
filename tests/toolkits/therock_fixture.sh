#!/usr/bin/env bash
# A TheRock ROCm distribution tarball made from Debian sid's ROCm 6.4.3 on
# clang 21, for tests that need a second, relocatable ROCm next to the build
# root's own /usr (ROCm 7.2 on clang 22).
#
#   tests/toolkits/therock_fixture.sh [FAMILY]     (inside scripts/buildroot)
#
# Prints the tarball's absolute path as the last stdout line:
#   /var/cache/rules_rocm/therock-fixture/<KEY>/therock-dist-linux-<FAMILY>-6.4.3.tar.gz
# (KEY: a hash of this script, so an edited recipe builds anew).
# (FAMILY defaults to gfx110X-all; it only names the file: Debian's compiler
# and device libraries serve every target). Next to it: <tarball>.sha256
# (sha256sum format) and <tarball>.packages (the .debs it came from).
#
# Layout, like TheRock's (no top-level directory):
#   .info/version                  6.4.3
#   include/{hip,hsa,rocprim,hipcub}, include/rocm-core/rocm_version.h
#   share/hip/version              HIP's version file, as clang reads it
#   lib/libamdhip64.so*, lib/libhsa-runtime64.so* (what libamdhip64 needs)
#   lib/llvm/bin/{clang,clang++,clang-offload-bundler,llvm-objcopy,llvm-cxxfilt,lld,ld.lld}
#   lib/llvm/lib/{libLLVM,libclang-cpp}.so.21.1, lib/llvm/lib/clang/21/include
#   lib/llvm/amdgcn/bitcode/*.bc
#
# The result is cached inside the build root (a new root builds its own) and
# is byte-identical when rebuilt from the same packages. Building takes about
# 20 s (downloads ~100 MB from deb.debian.org); a cached call returns at
# once. RULES_ROCM_THEROCK_FIXTURE_CACHE overrides the cache directory.
# Using it: Debian's clang 21 adds <root>/include with -idirafter, i.e. after
# /usr/include, which in the build root holds ROCm 7.2's hip/ and rocprim/:
# pass -isystem <root>/include (as hipcc does). It finds no device library by
# itself in lib/llvm/amdgcn/bitcode: pass --rocm-device-lib-path.
#
# The RUNPATH editor is rocm-wheel: $ROCM_WHEEL, else the checkout's
# //tools:rocm-wheel.
set -euo pipefail
export LC_ALL=C
checkout=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$checkout/tests/lib/common.sh"

family=${1:-gfx110X-all}
[[ $family =~ ^[A-Za-z0-9-]+$ ]] || fail "bad family name: $family"
version=6.4.3
mirror=${RULES_ROCM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
base=${RULES_ROCM_THEROCK_FIXTURE_CACHE:-/var/cache/rules_rocm/therock-fixture}
cache=$base/$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)
tarball=$cache/therock-dist-linux-$family-$version.tar.gz

# The tarball is renamed into place last, so its presence means complete.
print_and_exit() {
  echo "$tarball"
  exit 0
}
[[ -f $tarball ]] && print_and_exit

# What the fixture is made of. Beyond the compiler, device libraries, HIP,
# rocPRIM and hipCUB: HSA's headers (include/hsa) and runtime, the one ROCm
# library libamdhip64.so needs (comgr is dlopen'ed, so it is left out).
packages=(
  clang-21 clang-tools-21 llvm-21 lld-21 libllvm21 libclang-cpp21 libclang-common-21-dev
  rocm-device-libs-21
  libamdhip64-dev libamdhip64-6 libhsa-runtime-dev libhsa-runtime64-1
  librocprim-dev libhipcub-dev
)

mkdir -p "$base" 2>/dev/null || fail "cannot create $base: run this inside the build root (scripts/buildroot $0)"
for tool in apt-get dpkg-deb tar gzip sha256sum flock; do
  command -v "$tool" >/dev/null || fail "$tool is missing: run this inside the build root (scripts/buildroot)"
done
# One builder at a time; a second caller waits, then finds the tarball.
exec 9>"$base/.lock"
flock 9
[[ -f $tarball ]] && print_and_exit
# Under the lock nobody else builds: drop leftovers of killed builds and the
# results of other versions of this script.
for old in "$base"/.build.* "$base"/*; do
  if [[ -e $old && $old != "$cache" ]]; then rm -rf "$old"; fi
done
work=$(mktemp -d "$base/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
log() { echo "therock_fixture: $*" >&2; }

# rpath_set FILE RUNPATH: the project's own ELF editor, found on first use:
# $ROCM_WHEEL, else the checkout's (the resolved toolchain's binary, which
# `make bazel-test` already built).
rocm_wheel=${ROCM_WHEEL:-}
rpath_set() {
  local out
  if [[ -z $rocm_wheel ]]; then
    source "$checkout/tests/lib/rocm_wheel.sh"
    rocm_wheel=$(cd "$checkout" && rocm_wheel_path) ||
      fail "cannot build //tools:rocm-wheel (needed to set RUNPATH); set ROCM_WHEEL to a built rocm-wheel"
  fi
  [[ -x $rocm_wheel ]] || fail "no rocm-wheel at $rocm_wheel (ROCM_WHEEL)"
  out=$("$rocm_wheel" rpath set "$1" --rpath "$2" 2>&1) || fail "rocm-wheel rpath set ${1#"$work"/} failed: $out"
}

# --- download: a private apt state that sees only sid --------------------
# The root's own apt configuration lists experimental and its dpkg status has
# ROCm 7.2.4 installed, which would be the "candidate" for libamdhip64-dev
# and the like; an empty status and a sid-only source list make every
# candidate sid's. Nothing is installed and the root's apt state is untouched.
apt_dir=$work/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$work/debs"
echo "deb $mirror sid main" >"$apt_dir/sources.list"
: >"$apt_dir/status"
apt_opts=(
  -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache"
  -o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null
  -o Dir::State::status="$apt_dir/status"
  # The mirror's sid Release file can be past its Valid-Until date.
  -o Acquire::Check-Valid-Until=false
  # apt's download sandbox user cannot write here inside bwrap.
  -o APT::Sandbox::User=root
)
log "apt-get update (sid only, private state)"
apt-get "${apt_opts[@]}" update >"$work/update.log" 2>&1 ||
  fail "apt-get update of $mirror sid failed: $(tail -3 "$work/update.log")"
for p in "${packages[@]}"; do
  (cd "$work/debs" && apt-get "${apt_opts[@]}" download "$p") >"$work/download.log" 2>&1 ||
    fail "cannot download $p from Debian sid ($mirror): $(grep -E '^(E|W):' "$work/download.log" | tail -2)"
done

# --- unpack, checking the versions the fixture claims ---------------------
x=$work/x
: >"$work/packages"
for deb in "$work"/debs/*.deb; do
  echo "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)" >>"$work/packages"
  dpkg-deb -x "$deb" "$x"
done
sort -o "$work/packages" "$work/packages"
have_version() { awk -v p="$1" '$1 == p { print $2 }' "$work/packages"; }
hip=$(have_version libamdhip64-dev)
[[ $hip == "$version"-* ]] || fail "sid's libamdhip64-dev is $hip, not $version: the fixture's version claims (.info/version, rocm_version.h) need updating"
[[ $(have_version clang-21) == 1:21.* ]] || fail "sid's clang-21 is $(have_version clang-21)"

# --- assemble the TheRock layout -------------------------------------------
d=$work/dist
llvm=$x/usr/lib/llvm-21
multiarch=$x/usr/lib/x86_64-linux-gnu
mkdir -p "$d/.info" "$d/include/rocm-core" "$d/lib/llvm/bin" "$d/lib/llvm/lib/clang/21" "$d/lib/llvm/amdgcn"

# need PATH PACKAGE: PATH must have come out of PACKAGE.
need() { [[ -e $1 ]] || fail "${1#"$x"} is missing from $2 $(have_version "$2")"; }

# The tools as real files; clang++ and ld.lld stay links to them (as in
# Debian and TheRock), inside the tree.
for t in clang:clang-21 clang-offload-bundler:clang-tools-21 llvm-objcopy:llvm-21 llvm-cxxfilt:llvm-21 lld:lld-21; do
  need "$llvm/bin/${t%%:*}" "${t#*:}"
  cp "$llvm/bin/${t%%:*}" "$d/lib/llvm/bin/"
done
ln -s clang "$d/lib/llvm/bin/clang++"
ln -s lld "$d/lib/llvm/bin/ld.lld"

# Debian keeps the LLVM libraries in /usr/lib/x86_64-linux-gnu (llvm-21/lib
# has a link to them there); TheRock keeps them in lib/llvm/lib. Both already
# carry RUNPATH $ORIGIN/../lib, which is lib/llvm/lib again.
need "$multiarch/libLLVM.so.21.1" libllvm21
need "$multiarch/libclang-cpp.so.21.1" libclang-cpp21
cp "$multiarch/libLLVM.so.21.1" "$multiarch/libclang-cpp.so.21.1" "$d/lib/llvm/lib/"

# clang's resource directory: its headers. Debian's rocm-device-libs-21 puts
# the device libraries into it (amdgcn/bitcode); TheRock has lib/llvm/amdgcn.
need "$llvm/lib/clang/21/include/__clang_hip_runtime_wrapper.h" libclang-common-21-dev
cp -a "$llvm/lib/clang/21/include" "$d/lib/llvm/lib/clang/21/"
need "$llvm/lib/clang/21/amdgcn/bitcode/oclc_isa_version_1100.bc" rocm-device-libs-21
cp -a "$llvm/lib/clang/21/amdgcn/bitcode" "$d/lib/llvm/amdgcn/"

for t in hip:libamdhip64-dev hsa:libhsa-runtime-dev rocprim:librocprim-dev hipcub:libhipcub-dev; do
  need "$x/usr/include/${t%%:*}" "${t#*:}"
  cp -a "$x/usr/include/${t%%:*}" "$d/include/"
done
# clang reads the HIP version from share/hip/version; without it, it assumes
# HIP 3.5 and leaves out its runtime wrapper header (__clang_hip_runtime_wrapper.h),
# and HIP's own headers then fail to compile.
need "$x/usr/share/hip/version" libamdhip64-dev
mkdir -p "$d/share/hip"
cp "$x/usr/share/hip/version" "$d/share/hip/"
need "$multiarch/libamdhip64.so" libamdhip64-dev
need "$multiarch/libhsa-runtime64.so.1" libhsa-runtime64-1
# The soname chains are relative links within the directory: kept as links.
cp -a "$multiarch"/libamdhip64.so* "$multiarch"/libhsa-runtime64.so* "$d/lib/"

# Debian has no rocm-core package, so its version header is written here, in
# the form TheRock's rocm-core installs (what rules/private/repositories/hip_detect.bzl
# reads first for the ROCm release).
cat >"$d/include/rocm-core/rocm_version.h" <<EOF
// Written by rules_rocm's tests/toolkits/therock_fixture.sh (Debian sid's ROCm
// $version has no rocm-core package), in the form of rocm-core's header
// (its enum spelling included).
#ifndef _ROCM_VERSION_H_
#define _ROCM_VERSION_H_

#ifdef __cplusplus
extern "C" {
#endif  // __cplusplus

#define ROCM_VERSION_MAJOR   ${version%%.*}
#define ROCM_VERSION_MINOR   $(cut -d. -f2 <<<"$version")
#define ROCM_VERSION_PATCH   ${version##*.}

typedef enum {
  VerSuccess=0,
  VerIncorrecPararmeters,
  VerValuesNotDefined,
  VerErrorMAX
} VerErrors;

VerErrors getROCmVersion(unsigned int* Major, unsigned int* Minor, unsigned int* Patch) __attribute__((nonnull)) ;

#ifdef __cplusplus
}  // end extern "C" block
#endif

#endif  //_ROCM_VERSION_H_
EOF
echo "$version" >"$d/.info/version"

# Relocatable: the executables find lib/llvm/lib from wherever the tree is
# unpacked; libamdhip64 finds libhsa-runtime64 next to it.
for b in clang clang-offload-bundler llvm-objcopy llvm-cxxfilt lld; do
  rpath_set "$d/lib/llvm/bin/$b" '$ORIGIN/../lib'
done
rpath_set "$(readlink -f "$d/lib/libamdhip64.so")" '$ORIGIN'

# --- checks: self-contained, and it runs here ------------------------------
while IFS= read -r -d '' link; do
  target=$(readlink "$link")
  resolved=$(realpath -m "$link")
  [[ $target != /* && $resolved == "$d"/* && -e $resolved ]] ||
    fail "link ${link#"$d"/} -> $target leaves the tree or dangles"
done < <(find "$d" -type l -print0)
missing=$(cd "$d" && for f in lib/llvm/bin/* lib/libamdhip64.so; do ldd "$f" | sed -n "s|^\t*\(.*\) => not found|$f: \1|p"; done)
[[ -z $missing ]] || fail "shared libraries not found inside the build root:"$'\n'"$missing"
clang_says=$("$d/lib/llvm/bin/clang++" --version 2>&1) || true
[[ $clang_says == *"clang version 21."* ]] || fail "the assembled clang++ does not run: ${clang_says:0:300}"

# --- a deterministic tarball -----------------------------------------------
# Sorted names, one mtime, owner 0, normalised modes, GNU format (no pax
# atime/ctime), gzip without name or timestamp: same packages, same bytes.
log "writing $(basename "$tarball")"
(cd "$d" && tar --create --format=gnu --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
  --mode='u=rwX,go=rX' .info include lib share) | gzip -n -6 >"$work/out.tar.gz"
sum=$(sha256sum "$work/out.tar.gz" | cut -d' ' -f1)
echo "$sum  $(basename "$tarball")" >"$work/out.sha256"
mkdir -p "$cache"
mv "$work/packages" "$tarball.packages"
mv "$work/out.sha256" "$tarball.sha256"
mv "$work/out.tar.gz" "$tarball"
print_and_exit
