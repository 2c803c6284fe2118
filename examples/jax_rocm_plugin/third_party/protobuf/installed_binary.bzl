"""An installed executable (a file of a repository) as a binary target."""

def _installed_binary_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name)
    ctx.actions.symlink(output = out, target_file = ctx.file.src, is_executable = True)
    return [DefaultInfo(executable = out, files = depset([out]))]

installed_binary = rule(
    implementation = _installed_binary_impl,
    attrs = {"src": attr.label(allow_single_file = True, mandatory = True, doc = "The executable file.")},
    executable = True,
    doc = "The file as an executable target, for attributes that take binaries (executable = True).",
)
