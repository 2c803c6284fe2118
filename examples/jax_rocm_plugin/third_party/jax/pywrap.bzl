"""STAND-IN for JAX's jaxlib/pywrap.bzl (examples/jax_rocm_plugin): its targets make jaxlib's _jax, not built here."""

def _not_built_impl(ctx):
    fail("{} is JAX's {}, which examples/jax_rocm_plugin does not build".format(ctx.label, ctx.attr.kind))

_not_built = rule(implementation = _not_built_impl, attrs = {"kind": attr.string()})

def nanobind_pywrap_extension(name, **_kwargs):
    _not_built(name = name, kind = "nanobind_pywrap_extension", tags = ["manual"])

def pywrap_binaries(name, **_kwargs):
    _not_built(name = name, kind = "pywrap_binaries", tags = ["manual"])

def pywrap_library(name, **_kwargs):
    _not_built(name = name, kind = "pywrap_library", tags = ["manual"])
