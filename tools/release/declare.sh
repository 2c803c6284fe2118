#!/usr/bin/env bash
# bazel run --config=release //tools/release:declare -- URL_PREFIX [URL_PREFIX...]
# Writes rules/private/prebuilt_tool_release.bzl from the wheel just built:
# its version, and its sha256 at URL_PREFIX/<wheel file> for each prefix
# (the release's download location, then mirrors). Upload the wheel there
# (dist/ has it after `make wheels`) before tagging (docs/releasing.md).
set -euo pipefail
wheel=$1 version=$2
shift 2
(($#)) || { echo "usage: bazel run --config=release //tools/release:declare -- URL_PREFIX..." >&2; exit 2; }
[[ -n ${BUILD_WORKSPACE_DIRECTORY:-} ]] || { echo "run it with bazel run" >&2; exit 2; }
name=$(basename "$wheel")
sha=$(sha256sum "$wheel" | cut -d' ' -f1)
out=$BUILD_WORKSPACE_DIRECTORY/rules/private/prebuilt_tool_release.bzl
urls=""
for prefix in "$@"; do urls+="\"${prefix%/}/$name\", "; done
tmp=$(mktemp "$out.XXXXXX")
# The declaration's three values, in place (one platform: x86_64-linux).
sed -e "s|^    version = \".*\",\$|    version = \"$version\",|" \
  -e "s|^            urls = \[.*\],\$|            urls = [${urls%, }],|" \
  -e "s|^            sha256 = \".*\",\$|            sha256 = \"$sha\",|" "$out" >"$tmp"
grep -qF "sha256 = \"$sha\"" "$tmp" && grep -qF "version = \"$version\"" "$tmp" ||
  { rm -f "$tmp"; echo "declare: $out does not have the expected shape (version, urls, sha256 lines)" >&2; exit 1; }
chmod 0644 "$tmp"
mv -f "$tmp" "$out"
echo "wrote $out: $name sha256 $sha"
