#!/usr/bin/env bash
# bazel run --config=release //tools/release:declare -- URL [URL...]
# Writes rules/private/prebuilt_tool_release.bzl from the wheel just built:
# its version, and its sha256 at each URL (where it was uploaded: PyPI's
# file URL first, then mirrors). Each URL must end in the wheel's own file
# name. Upload the wheel (dist/ has it after `make wheels`) before declaring
# it (docs/releasing.md).
set -euo pipefail
wheel=$1 version=$2
shift 2
(($#)) || { echo "usage: bazel run --config=release //tools/release:declare -- URL..." >&2; exit 2; }
[[ -n ${BUILD_WORKSPACE_DIRECTORY:-} ]] || { echo "run it with bazel run" >&2; exit 2; }
name=$(basename "$wheel")
urls=""
for url in "$@"; do
  [[ $(basename "$url") == "$name" ]] || { echo "declare: $url does not name $name, the wheel just built" >&2; exit 1; }
  urls+="\"$url\", "
done
sha=$(sha256sum "$wheel" | cut -d' ' -f1)
out=$BUILD_WORKSPACE_DIRECTORY/rules/private/prebuilt_tool_release.bzl
tmp=$(mktemp "$out.XXXXXX")
{
  # The docstring as it is, then the declaration (one platform: x86_64-linux).
  sed -n '1,/^"""$/p' "$out"
  cat <<BZL

ROCM_WHEEL_RELEASE = struct(
    version = "$version",
    wheels = {
        "x86_64-linux": struct(
            urls = [${urls%, }],
            sha256 = "$sha",
        ),
    },
)
BZL
} >"$tmp"
chmod 0644 "$tmp"
mv -f "$tmp" "$out"
echo "wrote $out: $name sha256 $sha"
