"""Public API of rules_rocm. Everything else under rules/private is internal."""

load("//rules/private:dist.bzl", _wheel_dist = "wheel_dist")
load("//rules/private:family_wheels.bzl", _FamilyWheelsInfo = "FamilyWheelsInfo", _family_wheels = "family_wheels", _family_wheels_flag = "family_wheels_flag")
load("//rules/private:gfx.bzl", _GfxInfo = "GfxInfo", _gfx_device_target_setting = "gfx_device_target_setting", _gfx_flag = "gfx_flag")
load("//rules/private:gfx_families.bzl", _DEFAULT_GFX = "DEFAULT_GFX", _GFX_FAMILIES = "FAMILIES", _GFX_LEGACY_FAMILIES = "LEGACY_FAMILIES", _GFX_TARGETS = "GFX_TARGETS", _expand_gfx = "expand_gfx", _sort_gfx_targets = "sort_gfx_targets")
load("//rules/private:hip.bzl", _HipInfo = "HipInfo", _hip_compression_flag = "hip_compression_flag", _hip_library = "hip_library")
load("//rules/private:python.bzl", _PythonFactsInfo = "PythonFactsInfo", _python_versions_flag = "python_versions_flag", _rocm_python_toolchain = "rocm_python_toolchain")
load("//rules/private:python_extension.bzl", _PythonExtensionInfo = "PythonExtensionInfo", _python_extension = "python_extension")
load("//rules/private:python_testing.bzl", _python_wheels_install_test = "python_wheels_install_test")
load(
    "//rules/private:python_wheel.bzl",
    _PythonWheelInfo = "PythonWheelInfo",
    _PythonWheelSetInfo = "PythonWheelSetInfo",
    _python_wheels = "python_wheels",
    _rocm_python_wheel = "rocm_python_wheel",
    _wheel_shared_library = "wheel_shared_library",
)
load("//rules/private:stamp.bzl", _python_version_module = "python_version_module")
load("//rules/private:testing.bzl", _wheel_install_test = "wheel_install_test")
load("//rules/private:toolchain.bzl", _rocm_wheel_toolchain = "rocm_wheel_toolchain")
load(
    "//rules/private:wheel.bzl",
    _WheelFilesInfo = "WheelFilesInfo",
    _WheelInfo = "WheelInfo",
    _rocm_wheel = "rocm_wheel",
    _wheel_files = "wheel_files",
)

DEFAULT_GFX = _DEFAULT_GFX
GFX_FAMILIES = _GFX_FAMILIES
GFX_LEGACY_FAMILIES = _GFX_LEGACY_FAMILIES
GFX_TARGETS = _GFX_TARGETS
FamilyWheelsInfo = _FamilyWheelsInfo
GfxInfo = _GfxInfo
HipInfo = _HipInfo
PythonExtensionInfo = _PythonExtensionInfo
PythonFactsInfo = _PythonFactsInfo
PythonWheelInfo = _PythonWheelInfo
PythonWheelSetInfo = _PythonWheelSetInfo
python_extension = _python_extension
python_version_module = _python_version_module
python_versions_flag = _python_versions_flag
python_wheels = _python_wheels
python_wheels_install_test = _python_wheels_install_test
rocm_python_toolchain = _rocm_python_toolchain
rocm_python_wheel = _rocm_python_wheel
WheelFilesInfo = _WheelFilesInfo
WheelInfo = _WheelInfo
expand_gfx = _expand_gfx
family_wheels = _family_wheels
family_wheels_flag = _family_wheels_flag
gfx_device_target_setting = _gfx_device_target_setting
gfx_flag = _gfx_flag
hip_compression_flag = _hip_compression_flag
hip_library = _hip_library
sort_gfx_targets = _sort_gfx_targets
rocm_wheel = _rocm_wheel
rocm_wheel_toolchain = _rocm_wheel_toolchain
wheel_dist = _wheel_dist
wheel_files = _wheel_files
wheel_shared_library = _wheel_shared_library
wheel_install_test = _wheel_install_test
