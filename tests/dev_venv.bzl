"""Test-only repository: where `make setup` put the Python test tools
(twine, check-wheel-contents, wheel, auditwheel). Not part of the public API."""

def _dev_venv_impl(rctx):
    root = rctx.path(Label("//:MODULE.bazel")).dirname
    venv = rctx.os.environ.get("ROCM_WHEEL_VENV") or str(root) + "/.venv"
    rctx.file("BUILD.bazel", 'exports_files(["venv.bzl"])\n')
    rctx.file("venv.bzl", "# Generated: the test-tools venv.\nVENV = {}\n".format(repr(venv)))

dev_venv_repository = repository_rule(
    implementation = _dev_venv_impl,
    environ = ["ROCM_WHEEL_VENV"],
    local = True,
)
