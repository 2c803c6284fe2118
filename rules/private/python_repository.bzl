"""Repository rule: finds local CPython installations and records their facts.

Looks in $(pyenv root)/versions (PYENV_ROOT, `pyenv root`, ~/.pyenv) and for
python3.N on PATH (Debian's python3.13, python3.14, ...), or takes the
`interpreters` attribute ({"3.12": "/path/to/python3.12"}). Each interpreter
is asked for its version, SOABI, EXT_SUFFIX and include directory; per minor
version the newest patch release with headers (Python.h) wins.
"""

load(":labels.bzl", "abs_label")

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
        r = rctx.execute([pyenv, "root"])
        if r.return_code == 0 and r.stdout.strip():
            return r.stdout.strip()
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

def _discover(rctx):
    """Returns ({"3.12": facts}, where, skipped): newest patch release with headers per minor."""
    found = {}
    skipped = []
    candidates, where = _candidates(rctx)
    for minor, exe in candidates:
        if _version_key(minor) < _version_key(rctx.attr.min_version):
            continue
        info = _probe(rctx, exe, minor)
        if not rctx.path(info["include"] + "/Python.h").exists:
            skipped.append("{} ({}): no headers".format(exe, info["full_version"]))
            continue
        prev = found.get(minor)
        if prev == None or _version_key(info["full_version"]) > _version_key(prev["full_version"]):
            found[minor] = info
    where = "{} (versions >= {}; set PYENV_ROOT, PATH or pass interpreters to change)".format(
        where,
        rctx.attr.min_version,
    )
    return found, where, skipped

def _probe(rctx, exe, minor):
    r = rctx.execute([exe, "-I", "-c", _PROBE])
    if r.return_code != 0:
        fail("rules_rocm: Python interpreter {} for {} does not run: {}".format(exe, minor, r.stderr))
    info = json.decode(r.stdout)
    if info["version"] != minor:
        fail("rules_rocm: {} reports Python {}, expected {}".format(exe, info["version"], minor))
    info["interpreter"] = exe
    return info

def _local_python_repository_impl(rctx):
    skipped = []
    if rctx.attr.interpreters:
        looked = "the `interpreters` attribute of @{}".format(rctx.name)
        facts = {}
        for minor, exe in rctx.attr.interpreters.items():
            parts = minor.split(".")
            if len(parts) != 2 or not parts[0].isdigit() or not parts[1].isdigit():
                fail("rules_rocm: malformed Python version '{}' in python_interpreters; use the minor version, e.g. \"3.12\"".format(minor))
            if not rctx.path(exe).exists:
                fail("rules_rocm: the interpreter given for Python {} ({}) does not exist; looked in {}".format(minor, exe, looked))
            info = _probe(rctx, exe, minor)
            if not rctx.path(info["include"] + "/Python.h").exists:
                fail("rules_rocm: Python {} at {} has no headers ({}/Python.h missing); ".format(minor, exe, info["include"]) +
                     "install its development files")
            facts[minor] = info
    else:
        facts, looked, skipped = _discover(rctx)
    facts = {m: facts[m] for m in sorted(facts.keys(), key = _version_key)}
    for minor in facts:
        # Headers are symlinked in so cc actions see them as repository files.
        rctx.symlink(facts[minor]["include"], "include/" + minor)
    rctx.file("versions.bzl", """\
\"\"\"Generated by local_python_repository: the Python installations found.\"\"\"

# Where the installations were looked for (used in error messages).
SEARCHED = {searched}

# Interpreters found but not usable (no headers).
SKIPPED = {skipped}

# {{"3.12": {{"version", "full_version", "interpreter", "include", "soabi", "ext_suffix", "tag", "abiflags"}}}}
PYTHONS = {facts}

PYTHON_VERSIONS = {versions}
""".format(
        searched = repr(looked),
        skipped = repr(skipped),
        facts = json.encode_indent(facts, indent = "    "),
        versions = repr(sorted(facts.keys(), key = _version_key)),
    ))
    rctx.file("BUILD.bazel", _build_file(facts))

    # In its own package so that registering `@rocm_python//:all` and then
    # `@rocm_python//fallback:all` puts it last: it matches every
    # configuration, so resolution never fails and the rule explains what is
    # missing instead.
    rctx.file("fallback/BUILD.bazel", """\
# Generated by local_python_repository: the no-Python fallback toolchain.
load("{bzl}", "rocm_python_toolchain")

rocm_python_toolchain(name = "no_python")

toolchain(
    name = "toolchain",
    toolchain = ":no_python",
    toolchain_type = "{toolchain_type}",
)
""".format(
        bzl = abs_label(Label("//rules/private:python.bzl")),
        toolchain_type = abs_label(Label("//rules/python:toolchain_type")),
    ))

def _build_file(facts):
    out = [
        "# Generated by local_python_repository.",
        'load("@rules_cc//cc:defs.bzl", "cc_library")',
        'load("{}", "rocm_python_toolchain")'.format(abs_label(Label("//rules/private:python.bzl"))),
        "",
        'package(default_visibility = ["//visibility:public"])',
        "",
        'exports_files(["versions.bzl"])',
        "",
    ]
    toolchain_type = abs_label(Label("//rules/python:toolchain_type"))
    setting = abs_label(Label("//rules/python:version"))
    for minor in sorted(facts.keys(), key = _version_key):
        info = facts[minor]
        u = minor.replace(".", "_")
        out.append("""\
cc_library(
    name = "python_headers_{u}",
    hdrs = glob(["include/{v}/**/*.h"]),
    includes = ["include/{v}"],
)

rocm_python_toolchain(
    name = "python_{u}",
    abi_tag = {abi_tag},
    ext_suffix = {ext_suffix},
    full_version = {full_version},
    headers = ":python_headers_{u}",
    interpreter = {interpreter},
    python_tag = {tag},
    soabi = {soabi},
    version = "{v}",
)

config_setting(
    name = "is_{u}",
    flag_values = {{"{setting}": "{v}"}},
)

toolchain(
    name = "toolchain_{u}",
    target_settings = [":is_{u}"],
    toolchain = ":python_{u}",
    toolchain_type = "{toolchain_type}",
)
""".format(
            u = u,
            v = minor,
            abi_tag = repr(info["tag"] + info["abiflags"]),
            ext_suffix = repr(info["ext_suffix"]),
            full_version = repr(info["full_version"]),
            interpreter = repr(info["interpreter"]),
            tag = repr(info["tag"]),
            soabi = repr(info["soabi"]),
            setting = setting,
            toolchain_type = toolchain_type,
        ))

    return "\n".join(out)

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
