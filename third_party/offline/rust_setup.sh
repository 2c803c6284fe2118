#!/usr/bin/env bash
# crate_universe's generator on this offline machine, for re-rendering the
# tool's crate BUILD files only (bazel run //tools/3rdparty:crates_vendor;
# builds never run it, and setup does not make it), into DIR:
#   cargo-bazel   built with cargo from rules_rust's own sources and
#                 Cargo.lock (what its cargo_bazel_bootstrap repository does;
#                 rules_rust's default downloads it from GitHub). A few minutes.
#   cargo-home    the CARGO_HOME cargo-bazel runs with: cargo >= 1.85 names
#                 the crates.io index cache index.crates.io-1949cf8c6b5b557f,
#                 rules_rust 0.54.1's crates-index looks for the older name.
# Then, inside the build root (DIR as /opt/rules_rocm_rust, where
# scripts/buildroot binds the root's rust directory):
#   env PATH=/opt/rules_rocm_rust:$PATH bazel run //tools/3rdparty:crates_vendor
# Idempotent: a stamp of this script and the rustc/rules_rust versions.
#
#   third_party/offline/rust_setup.sh DIR
set -euo pipefail
out=${1:?usage: rust_setup.sh DIR}
src=/usr/share/bazel/rules/rust/crate_universe
[[ -f $src/Cargo.toml ]] || {
  echo "rust_setup: $src is missing: run this inside the build root (scripts/buildroot), which has bazel-rules-rust" >&2
  exit 1
}
want=$( (
  cat "${BASH_SOURCE[0]}"
  rustc --version
  grep -m1 version /usr/share/bazel/rules/rust/MODULE.bazel
) | sha256sum | cut -d' ' -f1)
if [[ -x $out/cargo-bazel && -f $out/stamp && $(cat "$out/stamp") == "$want" ]]; then
  exit 0
fi
echo "rust_setup: creating $out (cargo-bazel: a few minutes the first time)"
mkdir -p "$out"
cargo build --quiet --release --locked --manifest-path "$src/Cargo.toml" \
  --target-dir "$out/target" --bin cargo-bazel
install -m 0755 "$out/target/release/cargo-bazel" "$out/cargo-bazel.tmp"
mv -f "$out/cargo-bazel.tmp" "$out/cargo-bazel"
rm -rf "$out/target"
mkdir -p "$out/cargo-home/registry/index"
ln -sfn index.crates.io-1949cf8c6b5b557f "$out/cargo-home/registry/index/index.crates.io-6f17d22bba15001f"
echo "$want" >"$out/stamp"
