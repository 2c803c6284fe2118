# Sourced by e2e scripts that test on real wheels from PyPI.

# cached_pypi_wheel REQUIREMENT FILE SHA256 [PIP_DOWNLOAD_ARGS...]: prints the
# path of FILE in ~/.cache/rules_rocm/wheels/, downloading it once with
# `pip download --no-deps --only-binary=:all: PIP_DOWNLOAD_ARGS REQUIREMENT`
# (e.g. --python-version 3.12 --platform manylinux_2_27_x86_64). A cached or
# downloaded file must have sha256 SHA256, so a changed upload fails loudly
# instead of testing something else; a failed download leaves nothing in
# the cache. Needs $VENV/bin/pip (make setup) and `fail` (common.sh).
cached_pypi_wheel() {
  local req=$1 whl=$2 sha=$3 cache dl
  shift 3
  cache=${RULES_ROCM_CACHE:-$HOME/.cache/rules_rocm}/wheels
  mkdir -p "$cache"
  if ! echo "$sha  $cache/$whl" | sha256sum -c --status 2>/dev/null; then
    dl=$(mktemp -d "$cache/.download.XXXXXX")
    "$VENV/bin/pip" download --quiet --no-deps --only-binary=:all: "$@" -d "$dl" "$req" >&2 ||
      { rm -rf "$dl"; fail "pip download $req"; }
    echo "$sha  $dl/$whl" | sha256sum -c --status ||
      { rm -rf "$dl"; fail "downloaded $whl does not have sha256 $sha"; }
    mv "$dl/$whl" "$cache/$whl"
    rm -rf "$dl"
  fi
  echo "$cache/$whl"
}

# The real ROCm wheel the thin and repair tests and benches run on:
# jax-rocm7-pjrt 0.10.2 (154 MB; a 503 MB plugin whose .hip_fatbin holds 43
# zstd bundles for 27 targets).
PJRT_WHEEL=jax_rocm7_pjrt-0.10.2-py3-none-manylinux_2_27_x86_64.whl

# cached_pjrt_wheel: cached_pypi_wheel of $PJRT_WHEEL.
cached_pjrt_wheel() {
  cached_pypi_wheel jax-rocm7-pjrt==0.10.2 "$PJRT_WHEEL" 2e61678a00bfb72a616c555f1acabccc7cd8e64bb36b90b09d6f991c426b24f0 \
    --python-version 3.12 --platform manylinux_2_27_x86_64
}
