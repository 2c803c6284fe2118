"""Repository rule: finds local CPython installations and records their facts.

Looks in $(pyenv root)/versions (PYENV_ROOT, `pyenv root`, ~/.pyenv) and for
python3.N on PATH (Debian's python3.13, python3.14, ...), or takes the
`interpreters` attribute ({"3.12": "/path/to/python3.12"}). Each interpreter
is asked for its version, SOABI, EXT_SUFFIX and include directory; per minor
version the newest patch release with headers (Python.h) wins.
`detect_pythons` finds them and returns a struct; the repository's files are
then written from templates/rocm_python.*.tpl (the toolchain block once per
version).
"""

load(":labels.bzl", "abs_label")
load(":repository_utils.bzl", "render", "stdout_of", "write_template")

_PROBE = """
import sys, sysconfig, json
v = sys.version_info
print(json.dumps({
    "version": "%d.%d" % (v.major, v.minor),
    "full_version": "%d.%d.%d" % (v.major, v.minor, v.micro),
    "executable": sys.executable,
    "include": sysconfig.get_path("include"),
    "soabi": sysconfig.get_config_var("SOABI") or "",
    "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX") or "",
    "tag": "cp%d%d" % (v.major, v.minor),
    "abiflags": getattr(sys, "abiflags", ""),
}))
"""

def _version_key(v):
    return [int(p) if p.isdigit() else 0 for p in v.split(".")]

def _pyenv_root(rctx):
    env = rctx.os.environ
    if env.get("PYENV_ROOT"):
        return env["PYENV_ROOT"]
    pyenv = rctx.which("pyenv")
    if pyenv:
        root = stdout_of(rctx, [pyenv, "root"])
        if root:
            return root
    return env.get("HOME", "") + "/.pyenv"

def _is_release(name):
    parts = name.split(".")
    if len(parts) != 3:
        return False
    for p in parts:
        if not p.isdigit():
            return False
    return True

def _candidates(rctx):
    """Interpreters to probe: pyenv's releases, then python3.N on PATH."""
    out = []
    root = _pyenv_root(rctx)
    versions_dir = rctx.path(root + "/versions")
    if versions_dir.exists:
        for d in versions_dir.readdir():
            name = d.basename
            if not _is_release(name):
                continue
            minor = ".".join(name.split(".")[:2])
            exe = rctx.path(str(d) + "/bin/python" + minor)
            if exe.exists:
                out.append((minor, str(exe)))

    # System interpreters (Debian's python3.13, python3.14, ...).
    for n in range(0, 40):
        minor = "3." + str(n)
        exe = rctx.which("python" + minor)
        if exe:
            out.append((minor, str(exe)))
    return out, "{}/versions and python3.N on PATH".format(root)

def _try_probe(rctx, exe, minor):
    """struct(info = the interpreter's facts or None, problem = why not)."""
    r = rctx.execute([exe, "-I", "-c", _PROBE], timeout = 60)
    if r.return_code != 0:
        lines = (r.stderr or r.stdout).strip().splitlines()
        return struct(info = None, problem = "{} does not run (exit {}: {})".format(exe, r.return_code, lines[-1] if lines else "no output"))
    info = json.decode(r.stdout)
    if info["version"] != minor:
        return struct(info = None, problem = "{} reports Python {}, expected {}".format(exe, info["version"], minor))
    info["interpreter"] = exe
    return struct(info = info, problem = "")

def _probe(rctx, exe, minor):
    probed = _try_probe(rctx, exe, minor)
    if probed.problem:
        fail("rules_rocm: Python interpreter for {}: {}".format(minor, probed.problem))
    return probed.info

def _has_headers(rctx, info):
    return rctx.path(info["include"] + "/Python.h").exists

def _discover(rctx):
    """The newest patch release with headers per minor version, on this machine."""
    found = {}
    skipped = []
    candidates, where = _candidates(rctx)
    for minor, exe in candidates:
        if _version_key(minor) < _version_key(rctx.attr.min_version):
            continue

        # A broken interpreter somewhere on PATH must not fail builds that
        # need no Python (HIP only): it is reported when its version is asked for.
        probed = _try_probe(rctx, exe, minor)
        if probed.problem:
            skipped.append(probed.problem)
            continue
        info = probed.info
        if not _has_headers(rctx, info):
            skipped.append("{} ({}): no headers".format(exe, info["full_version"]))
            continue
        prev = found.get(minor)
        if prev == None or _version_key(info["full_version"]) > _version_key(prev["full_version"]):
            found[minor] = info
    where = "{} (versions >= {}; set PYENV_ROOT, PATH or pass interpreters to change)".format(
        where,
        rctx.attr.min_version,
    )
    return struct(pythons = found, searched = where, skipped = skipped)

def _given(rctx):
    """The interpreters of the `interpreters` attribute, each checked."""
    looked = "the `interpreters` attribute of @{}".format(rctx.name)
    facts = {}
    for minor, exe in rctx.attr.interpreters.items():
        parts = minor.split(".")
        if len(parts) != 2 or not parts[0].isdigit() or not parts[1].isdigit():
            fail("rules_rocm: malformed Python version '{}' in python_interpreters; use the minor version, e.g. \"3.12\"".format(minor))
        if not rctx.path(exe).exists:
            fail("rules_rocm: the interpreter given for Python {} ({}) does not exist; looked in {}".format(minor, exe, looked))
        info = _probe(rctx, exe, minor)
        if not _has_headers(rctx, info):
            fail("rules_rocm: Python {} at {} has no headers ({}/Python.h missing); ".format(minor, exe, info["include"]) +
                 "install its development files")
        facts[minor] = info
    return struct(pythons = facts, searched = looked, skipped = [])

def detect_pythons(rctx):
    """The Python installations to use; writes nothing.

    Returns struct(pythons = {"3.12": facts} in version order, searched =
    where they were looked for, skipped = interpreters found without headers).
    """
    found = _given(rctx) if rctx.attr.interpreters else _discover(rctx)
    pythons = {m: found.pythons[m] for m in sorted(found.pythons.keys(), key = _version_key)}
    return struct(pythons = pythons, searched = found.searched, skipped = found.skipped)

def _toolchain(rctx, minor, info, labels):
    return render(rctx, "rocm_python.toolchain.BUILD.tpl", {
        "{U}": minor.replace(".", "_"),
        "{V}": minor,
        "{ABI_TAG}": repr(info["tag"] + info["abiflags"]),
        "{EXT_SUFFIX}": repr(info["ext_suffix"]),
        "{FULL_VERSION}": repr(info["full_version"]),
        "{INTERPRETER}": repr(info["interpreter"]),
        "{TAG}": repr(info["tag"]),
        "{SOABI}": repr(info["soabi"]),
        "{VERSION_SETTING}": labels["{VERSION_SETTING}"],
        "{TOOLCHAIN_TYPE}": labels["{TOOLCHAIN_TYPE}"],
    })

def _local_python_repository_impl(rctx):
    found = detect_pythons(rctx)
    labels = {
        "{PYTHON_BZL}": abs_label(Label("//rules/private:python.bzl")),
        "{TOOLCHAIN_TYPE}": abs_label(Label("//rules/python:toolchain_type")),
        "{VERSION_SETTING}": abs_label(Label("//rules/python:version")),
    }
    for minor, info in found.pythons.items():
        # Headers are symlinked in so cc actions see them as repository files.
        rctx.symlink(info["include"], "include/" + minor)
    write_template(rctx, "versions.bzl", "rocm_python.versions.bzl.tpl", {
        "{SEARCHED}": repr(found.searched),
        "{SKIPPED}": repr(found.skipped),
        "{PYTHONS}": json.encode_indent(found.pythons, indent = "    "),
        "{PYTHON_VERSIONS}": repr(found.pythons.keys()),
    })
    build = dict(labels)

    # The key takes its line's newline: with no Python, no blank lines remain.
    build["{TOOLCHAINS}\n"] = "".join(["\n" + _toolchain(rctx, m, i, labels) for m, i in found.pythons.items()])
    write_template(rctx, "BUILD.bazel", "rocm_python.BUILD.tpl", build)

    # In its own package so that registering `@rocm_python//:all` and then
    # `@rocm_python//fallback:all` puts it last: it matches every
    # configuration, so resolution never fails and the rule explains what is
    # missing instead.
    write_template(rctx, "fallback/BUILD.bazel", "rocm_python.fallback.BUILD.tpl", labels)

local_python_repository = repository_rule(
    implementation = _local_python_repository_impl,
    attrs = {
        "interpreters": attr.string_dict(
            doc = "Explicit {minor version: interpreter path}; skips discovery.",
        ),
        "min_version": attr.string(
            default = "3.10",
            doc = "Oldest minor version picked up by discovery.",
        ),
    },
    environ = ["PYENV_ROOT", "HOME", "PATH"],
    local = True,
    doc = "Local CPython installations (pyenv by default) with their SOABI/EXT_SUFFIX facts.",
)
