"""kernels_test: a HIP shared library's code objects hold the kernels its host code registers."""

# buildifier: disable=bzl-visibility
load("//rules/private/util:shell.bzl", "shell_quote")

def _kernels_test_impl(ctx):
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    targets = ctx.expand_make_variables("targets", ctx.attr.targets, {})
    ctx.actions.write(script, "\n".join([
        "#!/usr/bin/env bash",
        "set -euo pipefail",
        "exec python3 {} {} --targets {} --bundles {} {}".format(
            shell_quote(ctx.file._checker.short_path),
            shell_quote(ctx.file.lib.short_path),
            shell_quote(targets),
            ctx.attr.bundles,
            " ".join([shell_quote(k) for k in ctx.attr.kernels]),
        ),
    ]) + "\n", is_executable = True)
    runfiles = ctx.runfiles(files = [ctx.file.lib, ctx.file._checker] + ctx.files._oracle)
    return [DefaultInfo(executable = script, runfiles = runfiles)]

kernels_test = rule(
    implementation = _kernels_test_impl,
    attrs = {
        "bundles": attr.int(mandatory = True, doc = "Offload bundles expected (one per HIP source)."),
        "kernels": attr.string_list(mandatory = True, doc = "Mangled names of the kernels the host code launches."),
        "lib": attr.label(allow_single_file = True, mandatory = True, doc = "The shared library."),
        "targets": attr.string(mandatory = True, doc = "Comma-separated gfx targets each bundle must hold (make variables expanded)."),
        "_checker": attr.label(default = "check_kernels.py", allow_single_file = True),
        "_oracle": attr.label(default = "//tests/lib:bundle_targets.py", allow_single_file = True),
    },
    test = True,
    doc = "Every bundle of `lib` holds exactly `targets`, each target's code objects define `<kernel>.kd` for every kernel, and `lib` defines each kernel's handle.",
)
