"""Public API of rules_rocm. Everything else under rules/private is internal."""

load("//rules/private:dist.bzl", _wheel_dist = "wheel_dist")
load("//rules/private:testing.bzl", _wheel_install_test = "wheel_install_test")
load("//rules/private:toolchain.bzl", _rocm_wheel_toolchain = "rocm_wheel_toolchain")
load(
    "//rules/private:wheel.bzl",
    _WheelFilesInfo = "WheelFilesInfo",
    _WheelInfo = "WheelInfo",
    _rocm_wheel = "rocm_wheel",
    _wheel_files = "wheel_files",
)

WheelFilesInfo = _WheelFilesInfo
WheelInfo = _WheelInfo
rocm_wheel = _rocm_wheel
rocm_wheel_toolchain = _rocm_wheel_toolchain
wheel_dist = _wheel_dist
wheel_files = _wheel_files
wheel_install_test = _wheel_install_test
