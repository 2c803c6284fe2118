"""`bazel run` target that copies wheels into a directory (make wheels -> dist/)."""

load("//rules/private/util:shell.bzl", "shell_quote")

def _wheel_dist_impl(ctx):
    wheels = ctx.files.wheels
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(script, """\
#!/usr/bin/env bash
# Copies the wheels into DEST (default: <workspace>/dist), atomically per file.
set -euo pipefail
dest="${{1:-${{BUILD_WORKSPACE_DIRECTORY:-$PWD}}/dist}}"
mkdir -p "$dest"
for f in {files}; do
  tmp="$dest/.$(basename "$f").tmp.$$"
  install -m 0644 "$f" "$tmp"
  mv -f "$tmp" "$dest/$(basename "$f")"
  echo "$dest/$(basename "$f")"
done
""".format(files = " ".join([shell_quote(f.short_path) for f in wheels])), is_executable = True)
    return [DefaultInfo(
        executable = script,
        runfiles = ctx.runfiles(files = wheels),
    )]

wheel_dist = rule(
    implementation = _wheel_dist_impl,
    attrs = {
        "wheels": attr.label_list(allow_files = [".whl"], doc = "Wheels to copy."),
    },
    executable = True,
    doc = "`bazel run` copies `wheels` into the directory given as argument (default dist/).",
)
