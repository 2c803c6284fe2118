#!/usr/bin/env bash
# crate_universe's generator for //tools/3rdparty:crates_vendor: cargo-bazel
# on PATH (crates_vendor passes PATH and little else). It must match
# rules_rust's version (0.54.1 here): third_party/offline/rust_setup.sh DIR
# builds that one into DIR, with DIR/cargo-home, the CARGO_HOME it reads the
# crates.io index from.
set -euo pipefail
bin=$(command -v cargo-bazel) || {
  echo "crates_vendor: no cargo-bazel on PATH: build one for rules_rust's version (third_party/offline/rust_setup.sh DIR) and put DIR on PATH" >&2
  exit 1
}
home=$(dirname "$bin")/cargo-home
[[ ! -d $home ]] || export CARGO_HOME=$home
"$bin" "$@"
# cargo-bazel writes the download URL the crates.io index it read names (a
# mirror's, behind a proxy); the checked-in files name crates.io's own, the
# same bytes (each archive is pinned by its Cargo.lock checksum).
defs=${BUILD_WORKSPACE_DIRECTORY:?run through bazel run}/tools/3rdparty/crates/defs.bzl
sed -E -i 's#urls = \["[^"]*/([^/"]+)/([^/"]+)/download"\]#urls = ["https://static.crates.io/crates/\1/\2/download"]#' "$defs"
if grep -n 'urls = ' "$defs" | grep -v 'https://static.crates.io/crates/'; then
  echo "crates_vendor: URLs above are not crates.io's" >&2
  exit 1
fi
# What the files were rendered from, for //tools/3rdparty:vendored_crates_test.
here=$(dirname "$defs")/..
python3 "$here/vendored_crates_test.py" --record "$here/.." "$here/crates"
