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
cat >"$tmp" <<BZL
"""The rocm-wheel release that modules using rules_rocm run (a prebuilt binary).

Written by \`bazel run --config=release //tools/release:declare\` when a
release is cut (docs/releasing.md): the version of tools/Cargo.toml, and per
execution platform the release wheel's URLs and sha256.
//tools/release:version_test keeps them equal to what the tool builds.
"""

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
mv -f "$tmp" "$out"
echo "wrote $out: $name sha256 $sha"
