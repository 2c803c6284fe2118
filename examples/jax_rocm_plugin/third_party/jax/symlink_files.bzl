"""STAND-IN for JAX's jaxlib/symlink_files.bzl (examples/jax_rocm_plugin): jaxlib's Python sources, not built here."""

def _not_built_impl(ctx):
    fail("{} is JAX's symlink_files, which examples/jax_rocm_plugin does not build".format(ctx.label))

_not_built = rule(implementation = _not_built_impl)

def symlink_files(name, **_kwargs):
    _not_built(name = name, tags = ["manual"])
