"""Offline stand-in for buildozer's buildozer_binary extension.

bazel_tools' MODULE.bazel uses it (for `bazel mod tidy`), and every `bazel
mod` command loads it: an extension that makes an empty `buildozer_binary`
repository, so that `bazel mod graph` works here. `bazel mod tidy` does not.
"""

def _empty_impl(rctx):
    rctx.file("BUILD.bazel", "# Offline stand-in: no buildozer binary here.\n")

_empty = repository_rule(implementation = _empty_impl)

def _buildozer_binary_impl(_module_ctx):
    _empty(name = "buildozer_binary")

buildozer_binary = module_extension(
    implementation = _buildozer_binary_impl,
    tag_classes = {
        "buildozer": tag_class(attrs = {
            "sha256": attr.string_dict(),
            "version": attr.string(),
        }),
    },
)
