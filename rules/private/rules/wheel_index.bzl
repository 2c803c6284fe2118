"""wheel_index: a static package index (PEP 503 / PEP 691) of built wheels.

`rocm-wheel index` writes it as one tree artifact: `index.html` and
`index.json` listing the projects, and per project (its normalised name) a
page and the wheels. pip installs from it with `--index-url
file://<path>`, and any static file server can serve it: a kpack build's
host wheel, its device extras and its device wheels resolve together
(`pip install "jax-rocm7-plugin[device-gfx1201]"`).
"""

load("//rules/private/actions:rocm_wheel.bzl", "rocm_wheel_index")
load(":rocm_wheel_toolchain.bzl", "ROCM_WHEEL_TOOLCHAIN_TYPE")

def _wheel_index_impl(ctx):
    wheels = [f for f in ctx.files.wheels if f.extension == "whl"]
    if not wheels:
        fail("{}: wheels gives no .whl file".format(ctx.label))
    out = ctx.actions.declare_directory(ctx.label.name)
    rocm_wheel_index(ctx, wheels, out)
    return [DefaultInfo(files = depset([out]))]

wheel_index = rule(
    implementation = _wheel_index_impl,
    attrs = {
        "wheels": attr.label_list(allow_files = [".whl"], doc = "Wheels to index (`.whl` files, or targets providing them, e.g. a `python_wheels` target)."),
    },
    toolchains = [str(ROCM_WHEEL_TOOLCHAIN_TYPE)],
    doc = "A static package index (a directory named after the target) of `wheels`, for `pip install --index-url file://...` or a static file server.",
)
