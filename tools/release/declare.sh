#!/usr/bin/env bash
# bazel run --config=release //tools/release:declare -- URL [URL...]
# Writes rules/private/data/rocm_wheel_release.bzl from the wheels just built
# (one per CPU): the version, and per execution platform the URLs naming
# that platform's wheel (where it was uploaded: PyPI's file URL first, then
# mirrors) and its sha256. Each URL must end in one of the wheels' own file
# names; a wheel no URL names is not declared (modules on that platform
# declare their own binary). Upload the wheels (dist/ has them after
# `make wheels`) before declaring them (docs/releasing.md).
#   declare.sh VERSION WHEEL... -- URL...
set -euo pipefail
version=$1
shift
wheels=()
while [[ $1 != -- ]]; do wheels+=("$1"); shift; done
shift
(($#)) || { echo "usage: bazel run --config=release //tools/release:declare -- URL..." >&2; exit 2; }
[[ -n ${BUILD_WORKSPACE_DIRECTORY:-} ]] || { echo "run it with bazel run" >&2; exit 2; }
# The execution platform a wheel's tag is for.
platform_of() {
  case $1 in
    *_x86_64.whl) echo x86_64-linux ;;
    *_aarch64.whl) echo aarch64-linux ;;
    *) echo "declare: $1 has no x86_64 or aarch64 platform tag" >&2; exit 1 ;;
  esac
}
declare -A urls=()
for url in "$@"; do
  found=""
  for w in "${wheels[@]}"; do
    [[ $(basename "$url") == "$(basename "$w")" ]] && found=$w
  done
  [[ -n $found ]] || { echo "declare: $url names none of the wheels just built: $(for w in "${wheels[@]}"; do basename "$w"; done | paste -sd' ')" >&2; exit 1; }
  urls[$found]+="\"$url\", "
done
out=$BUILD_WORKSPACE_DIRECTORY/rules/private/data/rocm_wheel_release.bzl
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
{
  # The docstring as it is, then the declaration.
  sed -n '1,/^"""$/p' "$out"
  printf '\nROCM_WHEEL_RELEASE = struct(\n    version = "%s",\n    wheels = {\n' "$version"
  for w in "${wheels[@]}"; do
    [[ -n ${urls[$w]:-} ]] || continue
    printf '        "%s": struct(\n            urls = [%s],\n            sha256 = "%s",\n        ),\n' \
      "$(platform_of "$w")" "${urls[$w]%, }" "$(sha256sum "$w" | cut -d' ' -f1)"
  done
  printf '    },\n)\n'
} >"$tmp"
chmod 0644 "$tmp"
mv -f "$tmp" "$out"
trap - EXIT
for w in "${wheels[@]}"; do
  if [[ -n ${urls[$w]:-} ]]; then
    echo "declared $(platform_of "$w"): $(basename "$w")"
  else
    echo "not declared (no URL names it): $(basename "$w")"
  fi
done
echo "wrote $out"
