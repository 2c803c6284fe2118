#!/usr/bin/env bash
# The wheels of `make wheels` (DIST) where users install them, on this host:
# Debian 12 (glibc 2.36), no ROCm anywhere, outside the build root. For each
# of pyenv's Python 3.11-3.13, pip installs the wheels for that version into
# a fresh venv and every extension module and shared library in them is
# loaded, with ROCm's libraries laid out
#   1. as TheRock's pip SDK does it: site-packages/_rocm_sdk_core/lib
#      (rocm-sdk-core) and _rocm_sdk_libraries_<family>/lib
#      (rocm-sdk-libraries-<family>), the families of the default --//:gfx;
#   2. as /opt/rocm/lib, bound in a private mount namespace (bwrap).
# No LD_LIBRARY_PATH: only the files' RUNPATH finds ROCm. pip itself checks
# the manylinux tag against this glibc. The build root's ROCm libraries need
# a newer glibc than this host has, so stand-ins are loaded: the same
# sonames, symbols and symbol versions (tests/host/stub_libs.py). Control:
# without libamdhip64.so.7 the imports must fail naming it. rocm-wheel
# itself is the one of dist/rocm_wheel-*.whl, pip-installed here: its
# --version, `python -m rocm_wheel`, and `check` of every wheel.
set -euo pipefail
cd "$(dirname "$0")/../.."
dist=$(cd "${1:?usage: import_test.sh DIST_DIR}" && pwd)
source tests/lib/common.sh
for tool in gcc readelf bwrap unzip; do
  command -v "$tool" >/dev/null || fail "$tool is missing: run scripts/setup.sh"
done
root=$(scripts/buildroot --path)
pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
family=gfx120X-all
# Only RUNPATH may find ROCm.
unset LD_LIBRARY_PATH

# TheRock's SDK packages, written down here as their wheels lay them out
# (an oracle independent of rocm-wheel's table): the math and ML libraries
# come from rocm-sdk-libraries-<family>, the runtime and what the libraries
# load besides (comgr's LLVM, boost, ...) from rocm-sdk-core.
sdk_dir() {
  case $1 in
    libhipblas*.so.* | librocblas.so.* | libhipsolver.so.* | librocsolver.so.* | libhipsparse*.so.* | \
      librocsparse.so.* | libMIOpen.so.* | librccl.so.* | libhipfft.so.* | librocfft.so.* | \
      libhiprand.so.* | librocrand.so.*)
      echo "_rocm_sdk_libraries_${family//-/_}/lib"
      ;;
    *) echo _rocm_sdk_core/lib ;;
  esac
}

# Under ~/.cache: the build root sees it too (it builds the tool there).
mkdir -p "$HOME/.cache/rules_rocm"
tmp=$(mktemp -d "$HOME/.cache/rules_rocm/import_test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

shopt -s nullglob
wheels=("$dist"/*.whl)
((${#wheels[@]})) || fail "no wheels in $dist: run make wheels"

# rocm-wheel as users get it: its own wheel from dist/ (make tool-wheels), pip-installed into a
# fresh venv of this host's Python (the binary was built against the
# sysroot's glibc 2.31; pip checks the tag). Both entries run the binary.
tool_wheels=("$dist"/rocm_wheel-*_x86_64.whl)
((${#tool_wheels[@]} == 1)) || fail "want one rocm_wheel-*_x86_64.whl in $dist, found ${#tool_wheels[@]}"
python3 -m venv "$tmp/tool"
"$tmp/tool/bin/pip" install --quiet --no-index "${tool_wheels[0]}" || fail "pip install ${tool_wheels[0]##*/}"
rw=$tmp/tool/bin/rocm-wheel
want="rocm-wheel $(sed -n 's/^version = "\(.*\)"/\1/p' tools/Cargo.toml | head -1)"
[[ $("$rw" --version) == "$want"* ]] || fail "rocm-wheel --version says '$("$rw" --version)', want '$want ...'"
[[ $("$tmp/tool/bin/python" -m rocm_wheel --version) == "$("$rw" --version)" ]] || fail "python -m rocm_wheel --version differs from rocm-wheel --version"
for w in "${wheels[@]}"; do
  "$rw" check "$w" >"$tmp/check.txt" || { cat "$tmp/check.txt" >&2; fail "the pip-installed rocm-wheel check refuses ${w##*/}"; }
done
echo "import_test: pip-installed $("$rw" --version) checks the ${#wheels[@]} wheels of $dist"

# The ROCm libraries the wheels' ELF files need: what the build root's ROCm
# provides and this host does not.
for w in "${wheels[@]}"; do
  unzip -q -o "$w" -d "$tmp/unpacked" '*.so' '*.so.*' 2>/dev/null || true
done
mapfile -t needed < <(find "$tmp/unpacked" -type f -name '*.so*' -exec readelf -d {} + 2>/dev/null |
  sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u)
rocm=()
for lib in "${needed[@]}"; do
  [[ -e $root/usr/lib/x86_64-linux-gnu/$lib ]] || continue
  /sbin/ldconfig -p | grep -q "^[[:space:]]*$lib " && continue
  rocm+=("$lib")
done
((${#rocm[@]})) || fail "no wheel in $dist needs a ROCm library: nothing would be tested"
[[ " ${rocm[*]} " == *" libamdhip64.so.7 "* ]] || fail "no wheel needs libamdhip64.so.7 (needs: ${rocm[*]})"
echo "import_test: ROCm libraries the wheels need: ${rocm[*]}"
mkdir -p "$tmp/empty"
# As TheRock's libraries do: a libraries package finds the core one.
python3 tests/host/stub_libs.py --runpath '$ORIGIN:$ORIGIN/../../_rocm_sdk_core/lib' \
  "$tmp/stubs" "${rocm[@]/#/$root/usr/lib/x86_64-linux-gnu/}"

# load_all PYTHON WHEEL_NAME...: import every extension module and load every
# other shared library of those wheels, installed in PYTHON's environment,
# by their RECORD.
load_all() {
  "$1" - "${@:2}" <<'PY'
import ctypes, importlib, importlib.machinery, importlib.metadata as md, os, sys, sysconfig
site = sysconfig.get_path("platlib")
wanted = {os.path.basename(w).split("-")[0].lower() for w in sys.argv[1:]}
# Module suffixes that only modules carry; a bare ".so" is a module only if
# it defines PyInit_<stem> (libxla_rocm7_kernels.so is a plain library).
tagged = [s for s in importlib.machinery.EXTENSION_SUFFIXES if s != ".so"]
loaded = 0
for dist in md.distributions(path=[site]):
    if dist.metadata["Name"].replace("-", "_").replace(".", "_").lower() not in wanted:
        continue
    for f in dist.files or []:
        p = str(f)
        if not (p.endswith(".so") or ".so." in p) or p.startswith(".."):
            continue
        suffix = next((s for s in tagged if p.endswith(s)), None)
        if not suffix and p.endswith(".so"):
            lib = ctypes.CDLL(os.path.join(site, p))
            if hasattr(lib, "PyInit_" + os.path.basename(p)[:-3]):
                suffix = ".so"
        if suffix:
            importlib.import_module(p[: -len(suffix)].replace("/", "."))
        else:
            ctypes.CDLL(os.path.join(site, p))
        print(f"  loaded {p}")
        loaded += 1
if not loaded:
    sys.exit("no shared object in the installed wheels")
PY
}

numpy=$(sed -n 's/^_NUMPY_VERSION = "\(.*\)"/\1/p' examples/jax_rocm_plugin/repositories.bzl)
[[ -n $numpy ]] || fail "no _NUMPY_VERSION in examples/jax_rocm_plugin/repositories.bzl"
versions=()
for v in 3.11 3.12 3.13; do
  exe=$(ls -d "$pyenv_root"/versions/"$v".*/bin/python"$v" 2>/dev/null | sort -V | tail -1)
  [[ -n $exe ]] || fail "pyenv has no Python $v ($pyenv_root/versions)"
  cp=cp${v/./}
  mine=()
  for w in "${wheels[@]}"; do
    # Another CPU's wheels (the aarch64 tool wheel) are not for this host.
    for_this_cpu "$w" || continue
    [[ $w == *-py3-none-* || $w == *-$cp-$cp-* ]] && mine+=("$w")
  done
  venv=$tmp/venv$v
  "$exe" -m venv "$venv"
  # NumPy: JAX's modules import it when they load (the version the JAX
  # example builds against).
  "$venv/bin/pip" install --quiet --only-binary :all: "numpy==$numpy" || fail "pip cannot install numpy $numpy"
  "$venv/bin/pip" install --quiet --no-index --no-deps "${mine[@]}" ||
    fail "pip (Python $v, glibc $(ldd --version | sed -n '1s/.* //p')) refuses ${mine[*]##*/}"
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')

  # 1. TheRock's pip SDK layout.
  for stub in "$tmp"/stubs/*; do
    lib=${stub##*/}
    mkdir -p "$site/$(sdk_dir "$lib")"
    cp "$stub" "$site/$(sdk_dir "$lib")/"
  done
  echo "import_test: Python $v, pip SDK layout"
  for w in "${mine[@]}"; do
    "$rw" check "$w" --resolve "$site" --root "$tmp/empty" >"$tmp/resolve.txt" ||
      fail "rocm-wheel check --resolve: $(cat "$tmp/resolve.txt")"
  done
  load_all "$venv/bin/python" "${mine[@]##*/}" || fail "Python $v: a module does not load with ROCm as TheRock's pip SDK"

  # Control: the same without the HIP runtime must fail, naming it.
  mv "$site/_rocm_sdk_core/lib/libamdhip64.so.7" "$tmp/hidden.so"
  expect_failure "$tmp/control.log" load_all "$venv/bin/python" "${mine[@]##*/}"
  expect_in "$tmp/control.log" "libamdhip64.so.7: cannot open shared object file"
  hip_users=()
  for w in "${mine[@]}"; do
    "$rw" check "$w" --resolve "$site" --root "$tmp/empty" >>"$tmp/unresolved.txt" || hip_users+=("$w")
  done
  ((${#hip_users[@]})) || fail "rocm-wheel check --resolve finds every library without libamdhip64.so.7"
  expect_in "$tmp/unresolved.txt" "libamdhip64.so.7 => NOT FOUND"
  rm "$tmp/unresolved.txt"

  # 2. /opt/rocm/lib (the SDK directories gone).
  rm -rf "$site"/_rocm_sdk_*
  echo "import_test: Python $v, /opt/rocm/lib"
  mkdir -p "$tmp/root/opt/rocm"
  ln -sfn "$tmp/stubs" "$tmp/root/opt/rocm/lib"
  for w in "${mine[@]}"; do
    "$rw" check "$w" --resolve "$site" --root "$tmp/root" >"$tmp/resolve.txt" ||
      fail "rocm-wheel check --resolve (/opt/rocm): $(cat "$tmp/resolve.txt")"
  done
  bwrap --dev-bind / / --tmpfs /opt --ro-bind "$tmp/stubs" /opt/rocm/lib --unsetenv LD_LIBRARY_PATH \
    bash -c "$(declare -f load_all); load_all '$venv/bin/python' ${mine[*]##*/}" ||
    fail "Python $v: a module does not load with ROCm in /opt/rocm/lib"
  versions+=("$v")
done
echo "PASS: ${wheels[*]##*/} load on glibc $(ldd --version | sed -n '1s/.* //p') without ROCm installed, Python ${versions[*]}, pip SDK and /opt/rocm layouts"
