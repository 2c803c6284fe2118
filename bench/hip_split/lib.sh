# Sourced by bench/hip_split/*.sh (from the checkout root): the TU's nonce,
# and hipcc with the device library of the clang it drives.

BAZEL=${BAZEL:-bazel}
FLAGS=(--jobs=2)
HIPCC=${HIPCC:-hipcc}

# renonce: rewrites the header the TU includes, so the next build is cold.
renonce() { echo "// nonce $(date +%s%N) $RANDOM" >bench/hip_split/nonce.h; }

command -v "$HIPCC" >/dev/null || { echo "hipcc not found (apt-get install hipcc librocprim-dev)" >&2; exit 1; }
# Debian's hipcc drives clang from llvm-<N>/bin; its device library lives in
# that clang's resource directory, which --rocm-path=/usr alone does not find.
clang=$("$HIPCC" --version 2>/dev/null | sed -n 's/^InstalledDir: //p')/clang++
DEVICE_LIB=${HIP_DEVICE_LIB_PATH:-$("$clang" -print-resource-dir)/amdgcn/bitcode}
[[ -e $DEVICE_LIB/ockl.bc ]] || { echo "no device library at $DEVICE_LIB (set HIP_DEVICE_LIB_PATH)" >&2; exit 1; }
