"""Public API of rules_rocm.

Load everything from here; rules/private is internal and may change.

Flags users set (declared in //BUILD.bazel, validated by rules/private/settings/flags.bzl):
  --@rules_rocm//:gfx=gfx94X-dcgpu,gfx120X-all   GPU targets (families: docs/gfx.md)
  --@rules_rocm//:python_versions=3.12,3.13       Python versions of //:wheels-style targets (or `all`)
  --@rules_rocm//:hip_bundle_compression=auto     offload bundles: auto, none, zstd, zlib
  --@rules_rocm//:family_wheels                   //:wheels also builds per-family wheels
  --@rules_rocm//rocm:toolkit=therock_7_2         the declared ROCm toolkit (docs/toolkits.md)
"""

load(
    "//rules/private:providers.bzl",
    _FamilyWheelsInfo = "FamilyWheelsInfo",
    _GfxInfo = "GfxInfo",
    _HipCompilerInfo = "HipCompilerInfo",
    _HipInfo = "HipInfo",
    _HipToolchainInfo = "HipToolchainInfo",
    _KpackWheelInfo = "KpackWheelInfo",
    _PythonExtensionInfo = "PythonExtensionInfo",
    _PythonFactsInfo = "PythonFactsInfo",
    _PythonWheelInfo = "PythonWheelInfo",
    _PythonWheelSetInfo = "PythonWheelSetInfo",
    _WheelFilesInfo = "WheelFilesInfo",
    _WheelInfo = "WheelInfo",
)
load("//rules/private/data:gfx_families.bzl", _DEFAULT_GFX = "DEFAULT_GFX", _GFX_FAMILIES = "FAMILIES")
load("//rules/private/rules:family_wheels.bzl", _family_wheels = "family_wheels")
load("//rules/private/rules:hip_library.bzl", _hip_library = "hip_library")
load("//rules/private/rules:hip_toolchain.bzl", _hip_toolchain = "hip_toolchain")
load("//rules/private/rules:python_extension.bzl", _python_extension = "python_extension")
load("//rules/private/rules:python_toolchain.bzl", _rocm_python_toolchain = "rocm_python_toolchain")
load("//rules/private/rules:python_version_module.bzl", _python_version_module = "python_version_module")
load("//rules/private/rules:python_wheel.bzl", _python_wheels = "python_wheels", _rocm_python_wheel = "rocm_python_wheel")
load("//rules/private/rules:rocm_wheel_toolchain.bzl", _rocm_wheel_toolchain = "rocm_wheel_toolchain")
load("//rules/private/rules:wheel.bzl", _rocm_wheel = "rocm_wheel", _wheel_files = "wheel_files")
load("//rules/private/rules:wheel_dist.bzl", _wheel_dist = "wheel_dist")
load("//rules/private/rules:wheel_index.bzl", _wheel_index = "wheel_index")
load("//rules/private/rules:wheel_shared_library.bzl", _wheel_shared_library = "wheel_shared_library")
load("//rules/private/testing:python_wheels_install_test.bzl", _python_wheels_install_test = "python_wheels_install_test")
load("//rules/private/testing:wheel_install_test.bzl", _wheel_install_test = "wheel_install_test")

# HIP: device code per gfx target of --//:gfx, linked like any cc_library.

# See rules/private/rules/hip_library.bzl.
hip_library = _hip_library

# Wheels: one file set, one wheel, built once.

# See rules/private/rules/wheel.bzl: files with their archive paths.
wheel_files = _wheel_files

# See rules/private/rules/wheel.bzl: a Python-independent wheel (the pjrt plugin).
rocm_wheel = _rocm_wheel

# See rules/private/rules/wheel_shared_library.bzl: a shared library with its RUNPATH set for its place in a wheel.
wheel_shared_library = _wheel_shared_library

# See rules/private/rules/family_wheels.bzl: one wheel per GPU family, thinned from one fat wheel.
family_wheels = _family_wheels

# See rules/private/rules/wheel_dist.bzl: copies built wheels to a directory (`bazel run`).
wheel_dist = _wheel_dist

# See rules/private/rules/wheel_index.bzl: a static package index (PEP 503 / PEP 691) of built wheels.
wheel_index = _wheel_index

# Python: per-version extensions and wheels, fanned out by python_wheels.

# See rules/private/rules/python_extension.bzl: a CPython extension module for the configuration's Python.
python_extension = _python_extension

# See rules/private/rules/python_wheel.bzl: a wheel for the configuration's Python.
rocm_python_wheel = _rocm_python_wheel

# See rules/private/rules/python_wheel.bzl: per-Python wheels for every --//:python_versions, the rest once.
python_wheels = _python_wheels

# See rules/private/rules/python_version_module.bzl: __version__ and, with --stamp, the commits.
python_version_module = _python_version_module

# Testing: wheels pip-installed into a venv and imported.

# See rules/private/testing/wheel_install_test.bzl.
wheel_install_test = _wheel_install_test

# See rules/private/testing/python_wheels_install_test.bzl: every wheel of a python_wheels target, per version.
python_wheels_install_test = _python_wheels_install_test

# Toolchains: bring your own ROCm, interpreter or rocm-wheel binary.

# See rules/private/rules/hip_toolchain.bzl and docs/toolkits.md (declared ROCm toolkits).
hip_toolchain = _hip_toolchain

# See rules/private/rules/python_toolchain.bzl and docs/python.md.
rocm_python_toolchain = _rocm_python_toolchain

# See rules/private/rules/rocm_wheel_toolchain.bzl and the README (a prebuilt rocm-wheel).
rocm_wheel_toolchain = _rocm_wheel_toolchain

# Providers (documented in rules/private/providers.bzl).

FamilyWheelsInfo = _FamilyWheelsInfo
GfxInfo = _GfxInfo
HipCompilerInfo = _HipCompilerInfo
HipInfo = _HipInfo
HipToolchainInfo = _HipToolchainInfo
KpackWheelInfo = _KpackWheelInfo
PythonExtensionInfo = _PythonExtensionInfo
PythonFactsInfo = _PythonFactsInfo
PythonWheelInfo = _PythonWheelInfo
PythonWheelSetInfo = _PythonWheelSetInfo
WheelFilesInfo = _WheelFilesInfo
WheelInfo = _WheelInfo

# GPU families (rules/private/data/gfx_families.bzl, docs/gfx.md): name -> gfx
# targets, and the default of --//:gfx.
GFX_FAMILIES = _GFX_FAMILIES
DEFAULT_GFX = _DEFAULT_GFX
