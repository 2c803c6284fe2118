"""STAND-IN for JAX's jaxlib/jax.bzl (examples/jax_rocm_plugin; JAX's BUILD files load it unchanged).

JAX's jax.bzl wires its build to XLA's and TSL's macros (15 repositories:
protobuf, flatbuffers, local_config_cuda, the wheel machinery, ...). This
stand-in keeps the names JAX's jaxlib/BUILD, jaxlib/cpu/BUILD,
jaxlib/gpu/BUILD and jaxlib/rocm/BUILD load, and maps the ones the ROCm
plugin's modules need onto rules_rocm:

- rocm_library, if_rocm_is_configured: @local_config_rocm's (rules_rocm's
  XLA compatibility layer: rocm_library is a hip_library).
- nanobind_extension: python_extension. Deps that depend on Python
  (nanobind, the NumPy API, the helpers that include them) are built per
  Python version; every other dep (HIP kernels, abseil, the kernel
  libraries) is a python_independent_deps entry, built once for all
  versions.

- cc_proto_library: protoc's C++ code for JAX's (native) proto_library
  targets, compiled against the example's protobuf
  (third_party/protobuf/cc_proto_library.bzl).

Everything else (Python libraries and tests, pytype, pywrap) makes a target
that fails naming itself when something builds it: this example builds the
plugin's eight modules only.
"""

load("@local_config_rocm//rocm:build_defs.bzl", _if_rocm_is_configured = "if_rocm_is_configured", _rocm_library = "rocm_library")
load("@rules_rocm//examples/jax_rocm_plugin/third_party/protobuf:cc_proto_library.bzl", _cc_proto_library = "cc_proto_library")
load("@rules_rocm//rules:defs.bzl", "python_extension")

rocm_library = _rocm_library
if_rocm_is_configured = _if_rocm_is_configured

xla_python_packages = []

def _not_built_impl(ctx):
    fail("{} is JAX's {}, which examples/jax_rocm_plugin does not build (its jaxlib/jax.bzl is a stand-in that builds the ROCm kernel modules only)".format(ctx.label, ctx.attr.kind))

_not_built = rule(implementation = _not_built_impl, attrs = {"kind": attr.string()})

def _placeholder(kind):
    def make(name, **_kwargs):
        _not_built(name = name, kind = kind, tags = ["manual"])

    return make

cc_proto_library = _cc_proto_library
proto_library = _placeholder("proto_library")
py_binary = _placeholder("py_binary")
py_library = _placeholder("py_library")
py_test = _placeholder("py_test")
pytype_library = _placeholder("pytype_library")
pytype_strict_library = _placeholder("pytype_strict_library")
py_library_providing_imports_info = _placeholder("py_library_providing_imports_info")
jax_bzl_library = _placeholder("bzl_library")

def xla_py_proto_library(**_kwargs):
    pass

def py_deps(_package):
    return []

def if_oss(oss_value, google_value = []):  # buildifier: disable=unused-variable
    return oss_value

def jax_visibility(_target):
    return [
        "//jax:__subpackages__",
        "//jaxlib:__subpackages__",
    ]

# Deps whose code depends on the Python version (Python.h, nanobind's ABI, the
# NumPy API table): linked per version. JAX's spellings, resolved here.
_PER_PYTHON = [str(Label(d)) for d in [
    "@nanobind//:nanobind",
    "//jaxlib:absl_status_casters",
    "//jaxlib:kernel_nanobind_helpers",
    "//jaxlib/gpu:gpu_plugin_extension",
    "//jaxlib/rocm:py_client_gpu",
    "@xla//xla/tsl/python/lib/core:numpy",
]]

# Python-independent libraries that per-Python deps reach (XLA's shapes and
# transpose under py_client_gpu): linked from their Python-independent
# configuration too, so that they compile once, not once per version.
_INDEPENDENT_UNDER = {str(Label(d)): [str(Label(i)) for i in independent] for d, independent in {
    "//jaxlib/rocm:py_client_gpu": [
        "@xla//xla:shape_util",
        "@xla//xla/pjrt:transpose",
        "@xla//xla/python:dlpack_types",
        "@xla//xla/python:strides",
    ],
    "//jaxlib/gpu:gpu_plugin_extension": [
        "@xla//xla/pjrt/c:pjrt_c_api_status_utils",
    ],
}.items()}

def nanobind_extension(
        name,
        deps = [],
        module_name = None,
        additional_stubgen_deps = [],  # @unused
        stub_replacement_patterns = {},  # @unused
        postprocess_stubgen = None,  # @unused
        enable_stub_generation = False,  # @unused
        pytype_srcs = None,  # @unused
        data = [],
        **kwargs):
    """JAX's nanobind_extension as a rules_rocm python_extension (see the module doc)."""
    if type(deps) != "list":
        fail("{}: deps must be a plain list here (the stand-in splits them into per-Python and Python-independent deps)".format(name))
    if data:
        fail("{}: data {} has no place in a python_extension; ship it with the wheel".format(name, data))
    labels = [str(native.package_relative_label(d)) for d in deps]
    per_python = [d for d in labels if d in _PER_PYTHON]
    independent = [d for d in labels if d not in _PER_PYTHON]
    for d in per_python:
        independent.extend([i for i in _INDEPENDENT_UNDER.get(d, []) if i not in independent])
    python_extension(
        name = name,
        module_name = module_name or name,
        deps = per_python,
        python_independent_deps = independent,
        **kwargs
    )
