"""Configuration transitions for Python versions.

- python_split_transition: one configuration per version in
  `--//:python_versions` (the per-Python wheels and their extensions).
- python_reset_transition: the one configuration for everything that does
  not depend on Python (the pjrt plugin, shared C++/HIP libraries). It writes
  a sentinel, not the setting's default: a default written by a transition
  still yields a configuration distinct from the top-level one,
  while a sentinel written by every consumer (the top level included, through
  python_wheels) yields one configuration, so that work runs once.
"""

load("@rocm_python//:versions.bzl", "PYTHON_VERSIONS", "SEARCHED")
load(":python.bzl", "PYTHON_INDEPENDENT")

# str(Label) so the settings resolve to this repository when rules_rocm is
# used as an external repository, too.
PYTHON_VERSIONS_FLAG = str(Label("//:python_versions"))
PYTHON_VERSION_SETTING = str(Label("//rules/python:version"))

def _is_minor_version(v):
    parts = v.split(".")
    if len(parts) != 2:
        return False
    for p in parts:
        if not p.isdigit() or (len(p) > 1 and p[0] == "0"):
            return False
    return parts[0] == "3"

def _version_key(v):
    return [int(p) for p in v.split(".")]

def parse_python_versions(value, available = PYTHON_VERSIONS, searched = SEARCHED):
    """`--//:python_versions` as a sorted list of "3.X", or fail() saying what is wrong.

    Args:
      value: the flag value, "all" or "3.11,3.12".
      available: the versions with an interpreter.
      searched: where the interpreters were looked for (for the message).
    """
    hint = "--//:python_versions takes `all` or comma-separated minor versions such as 3.11,3.12,3.13"
    if value == FLAG_IN_TRANSITIONED_CONFIGURATIONS:
        fail("rules_rocm: --//:python_versions read inside a per-Python or Python-independent " +
             "configuration; python_wheels (//:wheels) cannot be a dependency of a wheel")
    if value.strip() == "all":
        if not available:
            fail(("rules_rocm: no Python interpreter >= 3.10 found in {}; install one " +
                  "(e.g. `pyenv install 3.12`) or pass python_interpreters to " +
                  "rules_rocm_dependencies()").format(searched))
        return list(available)
    wanted = []
    for raw in value.split(","):
        v = raw.strip()
        if not _is_minor_version(v):
            fail("rules_rocm: malformed Python version '{}' in --//:python_versions={}: {}".format(
                raw,
                value,
                hint,
            ))
        if v in wanted:
            fail("rules_rocm: Python {} is listed twice in --//:python_versions={}".format(v, value))
        wanted.append(v)
    missing = [v for v in wanted if v not in available]
    if missing:
        fail(("rules_rocm: no interpreter for Python {} (requested by --//:python_versions={}); " +
              "looked in {} and found {}. Install it (e.g. `pyenv install {}`), pass " +
              "python_interpreters to rules_rocm_dependencies(), or drop it from the flag.").format(
            ", ".join(missing),
            value,
            searched,
            ", ".join(available) or "none",
            missing[0],
        ))
    return sorted(wanted, key = _version_key)

# Both transitions also pin --//:python_versions, to a value no user gives.
# Bazel records a transition input's value in the resulting configuration, so
# without a pin the reset configuration reached from the top level (flag not
# read) and the one reached through the split (flag read) could differ and
# the Python-independent work would run twice. And Bazel 7 names output
# directories by the difference to the top-level configuration: a constant
# that always differs from what the user typed keeps that difference, hence
# the paths and action keys, the same whatever versions were requested, so
# `--//:python_versions=3.12` (or the same versions in another order) reuses
# a full build's outputs and its remote cache entries.
FLAG_IN_TRANSITIONED_CONFIGURATIONS = "(transitioned configuration)"
_FLAG_PINNED = FLAG_IN_TRANSITIONED_CONFIGURATIONS

def _split_impl(settings, _attr):
    versions = parse_python_versions(settings[PYTHON_VERSIONS_FLAG])
    return {v: {PYTHON_VERSION_SETTING: v, PYTHON_VERSIONS_FLAG: _FLAG_PINNED} for v in versions}

python_split_transition = transition(
    implementation = _split_impl,
    inputs = [PYTHON_VERSIONS_FLAG],
    outputs = [PYTHON_VERSION_SETTING, PYTHON_VERSIONS_FLAG],
)

def _reset_impl(_settings, _attr):
    return {PYTHON_VERSION_SETTING: PYTHON_INDEPENDENT, PYTHON_VERSIONS_FLAG: _FLAG_PINNED}

python_reset_transition = transition(
    implementation = _reset_impl,
    inputs = [],
    outputs = [PYTHON_VERSION_SETTING, PYTHON_VERSIONS_FLAG],
)

ALLOWLIST_ATTRS = {
    "_allowlist_function_transition": attr.label(
        default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
    ),
}
