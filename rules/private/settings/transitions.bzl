"""Every configuration transition of rules_rocm.

Python:
- python_split_transition: one configuration per version in
  `--//:python_versions` (the per-Python wheels and their extensions).
- python_versions_attr_split: one configuration per version a test names.
- python_reset_transition: the one configuration for everything that does
  not depend on Python (the pjrt plugin, shared C++/HIP libraries). It writes
  a sentinel, not the setting's default: a default written by a transition
  still yields a configuration distinct from the top-level one,
  while a sentinel written by every consumer (the top level included, through
  python_wheels) yields one configuration, so that work runs once.
ROCm:
- toolkit_split_transition: one configuration per toolkit in
  `--//rocm:toolkits` (the ROCm-dependent wheel sets of python_wheels).
GPU:
- gfx_device_split: one device configuration per gfx target of --//:gfx
  (per generic target with --//:gfx_generic).
- all_families_transition: --//:gfx set to a family_wheels target's families.
Tools:
- tool_reset_transition: the configuration rocm-wheel is built in;
  tool_platform_transition: the same for another target platform.
"""

load("//rules/private/data:gfx_families.bzl", "compile_targets", "expand_gfx")
load("//rules/private/util:labels.bzl", "label_as_typed")
load("//rules/private/util:python_versions.bzl", "split_python_version")
load(
    ":flags.bzl",
    "DEVICE_CONFIGURATION_GFX",
    "DEVICE_TARGET_SETTING",
    "DEVICE_WHEEL_LEVEL_FLAG",
    "FLAG_IN_TRANSITIONED_CONFIGURATIONS",
    "GFX_FLAG",
    "GFX_GENERIC_FLAG",
    "HIP_COMPRESSION_FLAG",
    "HIP_COPTS_FLAG",
    "HIP_DEVICE_CODE_FLAG",
    "HIP_DEVICE_COPTS_FLAG",
    "PYTHON_INDEPENDENT",
    "PYTHON_VERSIONS_FLAG",
    "PYTHON_VERSION_SETTING",
    "PY_FREETHREADED_SETTING",
    "TOOLKITS_FLAG",
    "TOOLKIT_FLAG",
    "TOOL_CONFIGURATION",
    "declared_python_versions",
    "parse_python_versions",
    "parse_toolkits",
)

_PLATFORMS = "//command_line_option:platforms"

# Both Python transitions also pin --//:python_versions, to a value no user
# gives. Bazel records a transition input's value in the resulting
# configuration, so without a pin the reset configuration reached from the
# top level (flag not read) and the one reached through the split (flag read)
# could differ and the Python-independent work would run twice. And Bazel 7
# names output directories by the difference to the top-level configuration:
# a constant that always differs from what the user typed keeps that
# difference, hence the paths and action keys, the same whatever versions
# were requested, so `--//:python_versions=3.12` (or the same versions in
# another order) reuses a full build's outputs and its remote cache entries.
_FLAG_PINNED = FLAG_IN_TRANSITIONED_CONFIGURATIONS

# rules_python's py_freethreaded values.
_FREETHREADED = {True: "yes", False: "no"}

def python_version_settings(version):
    """rules_python's settings for a --//:python_versions entry: "3.14t" is 3.14, free-threaded."""
    split = split_python_version(version)
    return {PYTHON_VERSION_SETTING: split.minor, PY_FREETHREADED_SETTING: _FREETHREADED[split.freethreaded]}

def _python_split_impl(settings, _attr):
    versions = parse_python_versions(settings[PYTHON_VERSIONS_FLAG])
    return {
        v: python_version_settings(v) | _WHEEL_FLAGS_PINNED
        for v in versions
    }

# --//:device_wheel_level is pinned too: python_wheels writes the device
# wheels in its own configuration, so the level rebuilds nothing below it.
# --//:wheel_variants is not: a bool has no value a user never types, and
# pinning it to one differs from what was typed in one case (the output
# paths below change with the flag). Left as typed it is the same in every
# configuration, which keeps the paths; below python_wheels no wheel has
# device wheels, so none writes a variant.
_WHEEL_FLAGS_PINNED = {PYTHON_VERSIONS_FLAG: _FLAG_PINNED, DEVICE_WHEEL_LEVEL_FLAG: _FLAG_PINNED}

python_split_transition = transition(
    implementation = _python_split_impl,
    inputs = [PYTHON_VERSIONS_FLAG],
    outputs = [PYTHON_VERSION_SETTING, PY_FREETHREADED_SETTING] + list(_WHEEL_FLAGS_PINNED),
)

# py_freethreaded goes back to "no" too: the Python-independent configuration
# reached from a free-threaded one is the one reached from any other.
_PYTHON_RESET = {PYTHON_VERSION_SETTING: PYTHON_INDEPENDENT, PY_FREETHREADED_SETTING: _FREETHREADED[False]}

def _python_reset_impl(_settings, _attr):
    return _PYTHON_RESET | _WHEEL_FLAGS_PINNED

python_reset_transition = transition(
    implementation = _python_reset_impl,
    inputs = [],
    outputs = [PYTHON_VERSION_SETTING, PY_FREETHREADED_SETTING] + list(_WHEEL_FLAGS_PINNED),
)

def _python_versions_attr_impl(_settings, attr):
    if getattr(attr, "interpreters", None):
        # Explicit interpreters: no toolchain is looked at.
        return {"unused": _PYTHON_RESET}
    versions = attr.python_versions or declared_python_versions()
    return {v: python_version_settings(v) for v in versions}

# One configuration per entry of the rule's `python_versions` attribute (all
# declared versions when empty): install tests find each interpreter through
# rules_python's toolchain for that version.
python_versions_attr_split = transition(
    implementation = _python_versions_attr_impl,
    inputs = [],
    outputs = [PYTHON_VERSION_SETTING, PY_FREETHREADED_SETTING],
)

def _toolkit_split_impl(settings, _attr):
    listed = settings[TOOLKITS_FLAG]
    current = settings[TOOLKIT_FLAG]
    if not listed or listed == [_FLAG_PINNED]:
        return {current: {TOOLKIT_FLAG: current, TOOLKITS_FLAG: listed}}
    return {t: {TOOLKIT_FLAG: t, TOOLKITS_FLAG: [_FLAG_PINNED]} for t in parse_toolkits(listed)}

# One configuration per ROCm toolkit in --//rocm:toolkits: toolchain
# resolution then picks that toolkit's compiler and libraries, and
# $(ROCM_MAJOR) names its wheels. Without the flag it changes nothing (the
# configuration stays the top level's: `bazel build //...` builds the ROCm
# wheels once, not once directly and once through //:wheels). With it,
# --//rocm:toolkits is pinned as above, so that a toolkit's configuration is
# the same whichever other toolkits were listed with it, and in what order.
toolkit_split_transition = transition(
    implementation = _toolkit_split_impl,
    inputs = [TOOLKITS_FLAG, TOOLKIT_FLAG],
    outputs = [TOOLKIT_FLAG, TOOLKITS_FLAG],
)

def _gfx_platform(target):
    return str(Label("//platforms:" + target))

def _gfx_device_split_impl(settings, _attr):
    expanded = expand_gfx(settings[GFX_FLAG], flag = "--" + label_as_typed(Label(GFX_FLAG)))
    if expanded.error:
        fail(expanded.error)
    return {
        t: {
            GFX_FLAG: DEVICE_CONFIGURATION_GFX,
            GFX_GENERIC_FLAG: False,
            DEVICE_TARGET_SETTING: t,
            DEVICE_WHEEL_LEVEL_FLAG: FLAG_IN_TRANSITIONED_CONFIGURATIONS,
            _PLATFORMS: _gfx_platform(t),
        }
        for t in compile_targets(expanded.targets, settings[GFX_GENERIC_FLAG])
    }

# One configuration per gfx target of --//:gfx, in which
# //platforms/gfx:device_target names the target and the target platform is
# //platforms:<gfx> (so device code can select() on it). The set itself is
# replaced by a constant: the device configuration of gfx1201 must be the
# same whether the set is gfx1200,gfx1201 or gfx1201 alone (same paths, same
# action keys: narrowing the set recompiles nothing).
gfx_device_split = transition(
    implementation = _gfx_device_split_impl,
    inputs = [GFX_FLAG, GFX_GENERIC_FLAG],
    outputs = [GFX_FLAG, GFX_GENERIC_FLAG, DEVICE_TARGET_SETTING, DEVICE_WHEEL_LEVEL_FLAG, _PLATFORMS],
)

def _all_families_impl(_settings, attr):
    return {GFX_FLAG: ",".join(attr.families)}

# A family_wheels target's fat wheel carries the union of its families,
# whatever --//:gfx says.
all_families_transition = transition(
    implementation = _all_families_impl,
    inputs = [],
    outputs = [GFX_FLAG],
)

# Bazel 7 carries Starlark build settings into the exec configuration, so
# rocm-wheel would otherwise be compiled once per Python version, per gfx
# target, per ROCm toolkit and per --//:gfx value. Every rules_rocm setting gets a constant no
# user types (the argument of _FLAG_PINNED above: paths and action keys stay
# the same across commands).
_TOOL_CONSTANTS = {
    GFX_FLAG: DEVICE_CONFIGURATION_GFX,
    GFX_GENERIC_FLAG: False,
    HIP_COMPRESSION_FLAG: TOOL_CONFIGURATION,
    HIP_DEVICE_CODE_FLAG: TOOL_CONFIGURATION,
    DEVICE_WHEEL_LEVEL_FLAG: TOOL_CONFIGURATION,
    HIP_COPTS_FLAG: [TOOL_CONFIGURATION],
    HIP_DEVICE_COPTS_FLAG: [TOOL_CONFIGURATION],
    PYTHON_VERSIONS_FLAG: FLAG_IN_TRANSITIONED_CONFIGURATIONS,
    DEVICE_TARGET_SETTING: TOOL_CONFIGURATION,
    PYTHON_VERSION_SETTING: PYTHON_INDEPENDENT,
    PY_FREETHREADED_SETTING: _FREETHREADED[False],
    TOOLKIT_FLAG: TOOL_CONFIGURATION,
    TOOLKITS_FLAG: [FLAG_IN_TRANSITIONED_CONFIGURATIONS],
    # Cargo's release profile: no debug info, whose compile directories
    # (sandbox paths, e.g. zstd-sys's C objects) made the binary differ
    # between output bases.
    "//command_line_option:compilation_mode": "opt",
    # And its build-override: proc-macros and build scripts (exec
    # configuration) unoptimized; at opt-level 3 syn, serde_derive and
    # clap_derive alone took most of a cold build's Rust time.
    "//command_line_option:host_compilation_mode": "fastbuild",
}

def _tool_reset_impl(_settings, _attr):
    return _TOOL_CONSTANTS

tool_reset_transition = transition(
    implementation = _tool_reset_impl,
    inputs = [],
    outputs = list(_TOOL_CONSTANTS),
)

def _tool_platform_impl(_settings, attr):
    return _TOOL_CONSTANTS | {"//command_line_option:platforms": [str(attr.platform)]}

# The tool's configuration for another target platform (its aarch64 wheel):
# the same constants, cross-compiled for `platform`.
tool_platform_transition = transition(
    implementation = _tool_platform_impl,
    inputs = [],
    outputs = list(_TOOL_CONSTANTS) + ["//command_line_option:platforms"],
)

ALLOWLIST_ATTRS = {
    "_allowlist_function_transition": attr.label(
        default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
    ),
}
