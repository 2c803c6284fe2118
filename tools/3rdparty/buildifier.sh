#!/usr/bin/env bash
# The repository's buildifier (npm's @bazel/buildifier, scripts/setup.sh), for
# `bazel run` targets that format the files they write
# (//tools/3rdparty:crates_vendor). The native binary: the build root has no
# node to run npm's launcher.
case $(uname -m) in
  x86_64) arch=amd64 ;;
  aarch64) arch=arm64 ;;
  *) arch=$(uname -m) ;;
esac
exec "${BUILD_WORKSPACE_DIRECTORY:?run through bazel run}/node_modules/@bazel/buildifier/buildifier-linux_$arch" "$@"
