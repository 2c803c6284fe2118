"""Helpers shared by the repository rules: settings, probes, templates.

Each repository rule detects first (a `detect_*` function returning a struct
of facts, writing nothing) and then writes its files from templates under
rules/private/repositories/templates/ with these helpers.
"""

def attr_or_env(rctx, value, attr_name, env):
    """The setting given by an attribute, else by $env.

    Returns struct(value, source): `source` names where it came from, for
    messages (`attr_name` or "$env"); both are "" when neither is set.
    """
    if value:
        return struct(value = value, source = attr_name)
    from_env = rctx.os.environ.get(env, "")
    if from_env:
        return struct(value = from_env, source = "$" + env)
    return struct(value = "", source = "")

def exists(rctx, path):
    """Whether `path` (a string, possibly empty or None) exists."""
    return bool(path) and rctx.path(path).exists

def first_existing(rctx, candidates):
    """The first of `candidates` that exists, or None."""
    for c in candidates:
        if exists(rctx, c):
            return c
    return None

def stdout_of(rctx, argv, timeout = 600):
    """A probe's stripped stdout; "" when it fails or prints nothing.

    For facts that may legitimately be missing (the caller falls back).
    """
    r = rctx.execute(argv, timeout = timeout)
    if r.return_code != 0:
        return ""
    return r.stdout.strip()

def stdout_or_fail(rctx, argv, failure):
    """A probe's stdout; fails with `failure` and the probe's stderr when it does not run."""
    r = rctx.execute(argv)
    if r.return_code != 0:
        fail("{}: {}".format(failure, r.stderr))
    return r.stdout

def _template(name):
    return Label("//rules/private/repositories/templates:" + name)

def expand(text, substitutions):
    """`text` with every key of `substitutions` replaced, in order, as rctx.template does."""
    for key, value in substitutions.items():
        text = text.replace(key, value)
    return text

def render(rctx, name, substitutions):
    """The text of templates/`name` with `substitutions`, for parts repeated within a file."""
    return expand(rctx.read(_template(name)), substitutions)

def write_template(rctx, path, name, substitutions, executable = False):
    """Writes `path` from templates/`name` with `substitutions`."""
    rctx.template(path, _template(name), substitutions, executable = executable)

def _is_release_part(text):
    """Whether `text` is digits joined by dots (7.13.0)."""
    parts = text.split(".")
    return all([p.isdigit() for p in parts])

def sdk_version_problem(version):
    """Why `version` is not a TheRock SDK release as its packages are versioned, or "".

    Public releases (7.13.0) and pre-releases (7.13.0a20261201, 7.13.0rc1,
    7.13.0.dev20261201), with a local label or not (7.10.0.dev0+<sha>), in
    PEP 440's normal form: the pin is compared
    with the wheels' own versions, so it must be spelled as they are.
    """
    if not version:
        return "it is empty"

    # A local label (TheRock's dev builds: 7.10.0.dev0+<sha>) is kept.
    version, _, local = version.partition("+")
    if "+" in local or (local and not local.replace(".", "").isalnum()):
        return "'+{}' is not a local version label".format(local)
    release = version
    for mark in (".dev", "rc", "a", "b"):
        head, sep, number = release.partition(mark)
        if sep:
            if not number.isdigit():
                return "'{}{}' must be followed by digits".format(mark, number)
            release = head
            break
    if not _is_release_part(release) or release.count(".") != 2:
        return "'{}' is not major.minor.patch".format(release)
    return ""

def therock_tarball_release(urls):
    """The release in a TheRock tarball's file name, or "".

    therock-dist-linux-<family>-<version>.tar.gz (and .tar.xz, .tar.zst)
    names the exact build the tarball and TheRock's pip packages came from,
    e.g. 7.10.0a20251120; the tree inside only says 7.10.0.
    """
    for url in urls:
        base = url.rpartition("/")[2].partition("?")[0]
        if not base.startswith("therock-dist-") or ".tar" not in base:
            continue
        version = base.rpartition(".tar")[0].rpartition("-")[2]
        if not sdk_version_problem(version):
            return version
    return ""
