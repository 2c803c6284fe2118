#!/usr/bin/env bash
# A file:// Bazel registry with one module, rules_rust 0.54.1 as Debian
# installs it (local_path /usr/share/bazel/rules/rust), made inside the
# build root into DIR/registry (bound at /opt/rules_rocm_rust/registry;
# bazel.bazelrc lists it). A registry, not --override_module: an override of
# a module absent from the graph is an error, and only rules_rocm's own
# builds have rules_rust in theirs (a dev dependency). Idempotent.
#
#   third_party/offline/rust_registry.sh DIR
set -euo pipefail
out=${1:?usage: rust_registry.sh DIR}
src=/usr/share/bazel/rules/rust
[[ -f $src/MODULE.bazel ]] || {
  echo "rust_registry: $src is missing: run this inside the build root (scripts/buildroot)" >&2
  exit 1
}
version=$(sed -n 's/^ *version = "\([^"]*\)",*$/\1/p' "$src/MODULE.bazel" | head -1)
[[ -n $version ]] || { echo "rust_registry: no version in $src/MODULE.bazel" >&2; exit 1; }
reg=$out/registry
mkdir -p "$out"
tmp=$(mktemp -d "$out/.registry.XXXXXX")
mkdir -p "$tmp/modules/rules_rust/$version"
echo '{"mirrors": [], "module_base_path": "."}' >"$tmp/bazel_registry.json"
printf '{"homepage": "https://github.com/bazelbuild/rules_rust", "versions": ["%s"], "yanked_versions": {}}\n' "$version" \
  >"$tmp/modules/rules_rust/metadata.json"
cp "$src/MODULE.bazel" "$tmp/modules/rules_rust/$version/MODULE.bazel"
printf '{"type": "local_path", "path": "%s"}\n' "$src" >"$tmp/modules/rules_rust/$version/source.json"
if diff -r "$tmp" "$reg" >/dev/null 2>&1; then
  rm -rf "$tmp"
  exit 0
fi
echo "rust_registry: creating $reg"
rm -rf "$reg"
mv "$tmp" "$reg"
