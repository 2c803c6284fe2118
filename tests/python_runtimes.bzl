"""The interpreters installed on this machine as rules_python local runtimes.

Users with a network take rules_python's hermetic interpreters
(`python.toolchain(python_version = "3.12")`, docs/python.md); this machine
has none to download, so rules_rocm's own MODULE.bazel registers, as a dev
dependency, one `local_runtime_repo` per minor version found: the newest
pyenv release (`$PYENV_ROOT/versions/3.X.Y`) or the build root's
`/usr/bin/python3.X`, and the free-threaded CPython setup builds (3.14t,
scripts/freethreaded-python), bound at /opt/rules_rocm_python by
scripts/buildroot. Each fails loudly when its version is selected and the
interpreter does not work (`on_failure = "fail"`), never falls back.
"""

load("@rules_python//python/local_toolchains:repos.bzl", "local_runtime_repo", "local_runtime_toolchains_repo")

# buildifier: disable=bzl-visibility
load("//rules/private/util:python_versions.bzl", "version_key")

# 3.10 is past its end of life (October 2026) and JAX 0.10.2 has none.
_MIN_MINOR = 11

def _pyenv_interpreters(module_ctx):
    """{minor: newest pyenv release's interpreter path}."""
    root = module_ctx.os.environ.get("PYENV_ROOT") or module_ctx.os.environ.get("HOME", "") + "/.pyenv"
    versions = module_ctx.path(root + "/versions")
    if not versions.exists:
        return {}
    newest = {}
    for d in versions.readdir():
        parts = d.basename.split(".")
        if len(parts) != 3 or not all([p.isdigit() for p in parts]):
            continue
        minor = parts[0] + "." + parts[1]
        exe = module_ctx.path("{}/bin/python{}".format(d, minor))
        if int(parts[1]) < _MIN_MINOR or not exe.exists:
            continue
        if minor not in newest or version_key(d.basename) > version_key(newest[minor][0]):
            newest[minor] = (d.basename, str(exe))
    return {m: exe for m, (_, exe) in newest.items()}

# Where scripts/buildroot binds the free-threaded interpreters setup builds
# (scripts/freethreaded-python): <dir>/3.14t/bin/python3.14t.
_FREETHREADED_DIR = "/opt/rules_rocm_python"

def _freethreaded_interpreters(module_ctx):
    """{"3.Xt": interpreter path} of the free-threaded builds bound into the build root."""
    found = {}
    for minor in range(_MIN_MINOR, 40):
        version = "3.{}t".format(minor)
        exe = module_ctx.path("{}/{}/bin/python{}".format(_FREETHREADED_DIR, version, version))
        if exe.exists:
            found[version] = str(exe)
    return found

_FREETHREADED = str(Label("//rules/python:freethreaded"))
_NOT_FREETHREADED = str(Label("//rules/python:not_freethreaded"))

def _python_runtimes_impl(module_ctx):
    found = _pyenv_interpreters(module_ctx)
    for n in range(_MIN_MINOR, 40):
        minor = "3.{}".format(n)
        system = module_ctx.path("/usr/bin/python" + minor)
        if system.exists:
            # The build root's Debian interpreter wins over pyenv's: it is
            # the one with the distribution's headers and libpython.
            found[minor] = str(system)
    found |= _freethreaded_interpreters(module_ctx)
    names = []
    target_settings = {}
    for version in sorted(found.keys(), key = version_key):
        name = "local_python_" + version.replace(".", "_")
        local_runtime_repo(name = name, interpreter_path = found[version], on_failure = "fail")
        names.append(name)

        # rules_python's local runtimes match on the version alone: 3.14 and
        # 3.14t are told apart by its py_freethreaded flag, as its hermetic
        # toolchains are.
        target_settings[name] = [_FREETHREADED if version.endswith("t") else _NOT_FREETHREADED]
    local_runtime_toolchains_repo(name = "local_pythons", runtimes = names, target_settings = target_settings)
    return module_ctx.extension_metadata(reproducible = False)

python_runtimes = module_extension(
    implementation = _python_runtimes_impl,
    environ = ["PYENV_ROOT", "HOME"],
    doc = "Local rules_python runtimes for this machine's interpreters (offline development only).",
)

# WORKSPACE mode has no module extension: the build root's two Debian
# interpreters, whose paths are fixed there.
_BUILD_ROOT_PYTHONS = {
    "3.13": "/usr/bin/python3.13",
    "3.14": "/usr/bin/python3.14",
}

def build_root_python_runtimes():
    """WORKSPACE: the build root's interpreters as rules_python local runtimes, registered."""
    names = []
    for minor, path in _BUILD_ROOT_PYTHONS.items():
        name = "local_python_" + minor.replace(".", "_")
        local_runtime_repo(name = name, interpreter_path = path, on_failure = "fail")
        names.append(name)
    local_runtime_toolchains_repo(name = "local_pythons", runtimes = names)
    native.register_toolchains("@local_pythons//:all")
