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
