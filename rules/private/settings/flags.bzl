"""rules_rocm's build settings: each validated where it is declared, parsed once.

Flags users set (//BUILD.bazel instantiates them):
  --//:gfx                     amdgpu families / gfx targets        -> GfxInfo
  --//:gfx_generic             compile through generic targets      -> SettingInfo
  --//:python_versions         `all` or minor versions              -> PythonVersionsInfo
  --//:hip_bundle_compression  auto, none, zstd, zlib               -> SettingInfo
  --//:hip_device_code         fat (offload bundles) or kpack       -> SettingInfo
  --//:device_wheel_level      kpack device wheels per target, sub_family or family -> SettingInfo
  --//:wheel_variants          kpack host wheels also as variant wheels (drafts) -> SettingInfo
  --//:rocm_local_version      versions +rocm<SDK or ROCm release>  -> SettingInfo
  --//:family_wheels           per-family wheels in //:wheels       -> SettingInfo
  --//:hip_copts               flags of every HIP compile (repeatable) -> SettingInfo
  --//:hip_device_copts        flags of every HIP device compile     -> SettingInfo
  --//rocm:toolkit             the declared ROCm toolkit (declared_flag.bzl)
  --//rocm:toolkits            ROCm toolkits of per_toolkit wheel sets (parse_toolkits)
  --//rocm:sysroot             the declared sysroot (declared_flag.bzl)
Settings transitions write (never set by hand, except the Python version to
build one per-Python target directly):
  @rules_python//python/config_settings:python_version  Python of the configuration (rules_python's)
  @rules_python//python/config_settings:py_freethreaded  whether it is free-threaded (rules_python's)
  //platforms/gfx:device_target  gfx target of a device configuration -> SettingInfo
  //rules/stamp:stamp          whether --stamp is on                -> SettingInfo

Transitions write the constants below into configurations where a flag has
no meaning: values no user types, so a misplaced read fails loudly, and
constant, so configurations (hence output paths and action keys) stay the same
whatever the user typed.
"""

load("@rocm_python//:versions.bzl", "DECLARED_IN", "PYTHON_VERSIONS")
load("@rocm_toolkits//:toolkits.bzl", "TOOLKITS")
load("//rules/private:providers.bzl", "GfxInfo", "PythonVersionsInfo", "SettingInfo")
load("//rules/private/data:gfx_families.bzl", "BOOTSTRAP_LEVELS", "compile_targets", "expand_gfx")
load("//rules/private/util:labels.bzl", "label_as_typed")
load("//rules/private/util:python_versions.bzl", "is_minor_version", "version_key")

# str(Label) so the settings resolve to this repository when rules_rocm is
# used as an external repository, too.
GFX_FLAG = str(Label("//:gfx"))
GFX_GENERIC_FLAG = str(Label("//:gfx_generic"))
PYTHON_VERSIONS_FLAG = str(Label("//:python_versions"))
HIP_COMPRESSION_FLAG = str(Label("//:hip_bundle_compression"))
HIP_DEVICE_CODE_FLAG = str(Label("//:hip_device_code"))
DEVICE_WHEEL_LEVEL_FLAG = str(Label("//:device_wheel_level"))
WHEEL_VARIANTS_FLAG = str(Label("//:wheel_variants"))
ROCM_LOCAL_VERSION_FLAG = str(Label("//:rocm_local_version"))
HIP_COPTS_FLAG = str(Label("//:hip_copts"))
HIP_DEVICE_COPTS_FLAG = str(Label("//:hip_device_copts"))
TOOLKIT_FLAG = str(Label("//rocm:toolkit"))
TOOLKITS_FLAG = str(Label("//rocm:toolkits"))

# rules_python's: the Python version of a configuration, and whether its
# Python is free-threaded (a "3.14t" entry of --//:python_versions is 3.14
# with py_freethreaded=yes, as rules_python's toolchains select it).
PYTHON_VERSION_SETTING = str(Label("@rules_python//python/config_settings:python_version"))
PY_FREETHREADED_SETTING = str(Label("@rules_python//python/config_settings:py_freethreaded"))
DEVICE_TARGET_SETTING = str(Label("//platforms/gfx:device_target"))

# --//:gfx inside gfx device configurations.
DEVICE_CONFIGURATION_GFX = "(device configuration)"

# --//:python_versions inside per-Python and Python-independent configurations,
# --//rocm:toolkits inside per-toolkit ones.
FLAG_IN_TRANSITIONED_CONFIGURATIONS = "(transitioned configuration)"

# Every rules_rocm setting inside the configuration the rocm-wheel tool is built in.
TOOL_CONFIGURATION = "(tool configuration)"

# rules_python's python_version in the Python-independent configuration the
# reset transition makes: "unset", distinct from the top-level default (a
# version), so that the configuration is the same whether it is entered from
# the top level or from a per-version configuration.
PYTHON_INDEPENDENT = ""

# --//:gfx

def _offload_arch_copts(targets):
    return " ".join(["--offload-arch=" + t for t in targets])

def _gfx_flag_impl(ctx):
    value = ctx.build_setting_value
    if value == DEVICE_CONFIGURATION_GFX:
        fail("{}: read inside a gfx device configuration; hip_library and --//:gfx users cannot be dependencies of device code".format(ctx.label))
    expanded = expand_gfx(value, flag = "--" + label_as_typed(ctx.label))
    if expanded.error:
        fail(expanded.error)
    targets = compile_targets(expanded.targets, ctx.attr._generic[SettingInfo].value)
    return [
        GfxInfo(value = value, targets = targets, requested = expanded.targets),
        # For cc_library code built by a hipcc-style toolchain:
        #   toolchains = ["@rules_rocm//:gfx"], copts = ["$(ROCM_OFFLOAD_ARCH_COPTS)"]
        platform_common.TemplateVariableInfo({
            "ROCM_GFX_TARGETS": ",".join(targets),
            "ROCM_OFFLOAD_ARCH_COPTS": _offload_arch_copts(targets),
            "ROCM_AMDGPU_TARGETS": ",".join(targets),
        }),
    ]

gfx_flag = rule(
    implementation = _gfx_flag_impl,
    build_setting = config.string(flag = True),
    attrs = {"_generic": attr.label(default = GFX_GENERIC_FLAG)},
    doc = "The GPU target flag: comma list of amdgpu families or gfx targets, validated at analysis.",
)

# The settings whose value is their provider, unchanged.
def _setting_value_impl(ctx):
    return [SettingInfo(value = ctx.build_setting_value)]

gfx_generic_flag = rule(
    implementation = _setting_value_impl,
    build_setting = config.bool(flag = True),
    doc = "--//:gfx_generic: device code for each --//:gfx target a generic target covers is compiled once, for that generic target.",
)

gfx_device_target_setting = rule(
    implementation = _setting_value_impl,
    build_setting = config.string(flag = False),
    doc = "The gfx target of a device configuration ('' elsewhere), set by the device split transition.",
)

# --//:python_versions

def declared_python_versions():
    """The Python versions `all` means (rules_rocm.python_versions in MODULE.bazel)."""
    return list(PYTHON_VERSIONS)

def parse_python_versions(value, available = PYTHON_VERSIONS, declared_in = DECLARED_IN):
    """`--//:python_versions` as a sorted list of "3.X" (or "3.Xt"), or fail() saying what is wrong.

    Args:
      value: the flag value, "all" or "3.11,3.12".
      available: the declared versions.
      declared_in: where they were declared (for the message).
    """
    hint = ("--//:python_versions takes `all` or comma-separated minor versions (3.14t: free-threaded); " +
            "valid here: {}").format(", ".join(["all"] + list(available)))
    if value == FLAG_IN_TRANSITIONED_CONFIGURATIONS:
        fail("rules_rocm: --//:python_versions read inside a per-Python or Python-independent " +
             "configuration; python_wheels (//:wheels) cannot be a dependency of a wheel")
    if value.strip() == "all":
        return list(available)
    wanted = []
    for raw in value.split(","):
        v = raw.strip()
        if not is_minor_version(v):
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
        fail(("rules_rocm: Python {} (requested by --//:python_versions={}) is not a declared version; " +
              "declared: {} ({}). Declare it there (rules_rocm.python_versions in MODULE.bazel, " +
              "rules_rocm_dependencies(python_versions = ...) in a WORKSPACE) and register a " +
              "rules_python toolchain for it, or drop it from the flag.").format(
            ", ".join(missing),
            value,
            ", ".join(available) or "none",
            declared_in,
        ))
    return sorted(wanted, key = version_key)

def _python_versions_flag_impl(ctx):
    value = ctx.build_setting_value
    return [PythonVersionsInfo(value = value, versions = parse_python_versions(value))]

python_versions_flag = rule(
    implementation = _python_versions_flag_impl,
    build_setting = config.string(flag = True),
    doc = "Comma-separated Python versions to build per-Python targets for, or `all` " +
          "(every declared version); validated against the declared versions.",
)

# --//rocm:toolkit and --//rocm:toolkits

# The end of their errors (also rocm/BUILD.bazel's flag rules).
DECLARE_TOOLKIT = "Declare toolkits in MODULE.bazel with rocm.toolkit(name = ..., urls = ... | path = ...)"

def parse_toolkits(value, declared = TOOLKITS):
    """--//rocm:toolkits (a non-empty list) in the order given, or fail() saying what is wrong.

    Args:
      value: the flag's value.
      declared: the declared toolkits' names.
    """
    seen = []
    for name in value:
        if name not in declared:
            fail("--@rules_rocm//rocm:toolkits={} names no declared ROCm toolkit ({}); declared: {}. {}".format(
                ",".join(value),
                name,
                ", ".join(declared),
                DECLARE_TOOLKIT,
            ))
        if name in seen:
            fail("--@rules_rocm//rocm:toolkits={} lists {} twice".format(",".join(value), name))
        seen.append(name)
    return seen

# String flags with a fixed set of values: --//:hip_bundle_compression,
# --//:hip_device_code.

# Sentinels written by transitions, no user's choice, start with this.
_SENTINEL_START = "("

def _choice_flag_impl(ctx):
    value = ctx.build_setting_value
    if value not in ctx.attr._values:
        choices = [v for v in ctx.attr._values if not v.startswith(_SENTINEL_START)]
        fail("--{}={}: must be one of {}".format(label_as_typed(ctx.label), value, ", ".join(choices)))
    return [SettingInfo(value = value)]

def _choice_flag(values, doc):
    return rule(
        implementation = _choice_flag_impl,
        build_setting = config.string(flag = True),
        attrs = {"_values": attr.string_list(default = values)},
        doc = doc,
    )

hip_compression_flag = _choice_flag(
    ["auto", "none", "zstd", "zlib"],
    "Offload-bundle compression: auto (zstd for ROCm >= 6.2, else none), none, zstd, zlib.",
)

# Its value in per-Python and Python-independent configurations is
# FLAG_IN_TRANSITIONED_CONFIGURATIONS: python_wheels writes the device wheels
# in its own configuration, so the level does not reach (and rebuild) what the
# wheels are made of.
device_wheel_level_flag = _choice_flag(
    BOOTSTRAP_LEVELS + [FLAG_IN_TRANSITIONED_CONFIGURATIONS],
    "kpack device wheels per GPU target (target), per rocm-bootstrap sub-family (sub_family: gfx12_0) or per family (family: gfx12).",
)

hip_device_code_flag = _choice_flag(
    ["fat", "kpack"],
    "Where device code goes: fat (offload bundles in each host object) or kpack (per-target archives, docs/kpack.md; host objects keep a marker).",
)

# --//:wheel_variants: refused without kpack device code. A fat wheel holds
# all its device code, so there are no device wheels for a variant to pull
# and nothing for an installer to choose between: silently writing no
# variant would hide the mistake.

def _wheel_variants_flag_impl(ctx):
    value = ctx.build_setting_value
    device_code = ctx.attr._device_code[SettingInfo].value
    if value and device_code != "kpack":
        fail(("--{}: variant wheels pull per-target device wheels, which only kpack builds write " +
              "(--{}={} keeps device code in every binary); add --config=kpack or drop the flag").format(
            label_as_typed(ctx.label),
            label_as_typed(ctx.attr._device_code.label),
            device_code,
        ))
    return [SettingInfo(value = value)]

wheel_variants_flag = rule(
    implementation = _wheel_variants_flag_impl,
    build_setting = config.bool(flag = True),
    attrs = {"_device_code": attr.label(default = HIP_DEVICE_CODE_FLAG)},
    doc = "--//:wheel_variants: kpack host wheels are also written as variant wheels (PEP 825 / PEP 850 drafts, docs/kpack.md).",
)

rocm_local_version_flag = rule(
    implementation = _setting_value_impl,
    build_setting = config.bool(flag = True),
    doc = "--//:rocm_local_version: wheel versions +rocm<SDK or ROCm release>, as AMD's index spells them.",
)

# --//:hip_copts, --//:hip_device_copts

def _hip_copts_flag_impl(ctx):
    for flag in ctx.build_setting_value:
        if flag.startswith("--offload-arch") or flag.startswith("--cuda-gpu-arch"):
            fail("--{}={}: GPU targets come from --{} (each target is its own device compile)".format(
                label_as_typed(ctx.label),
                flag,
                label_as_typed(Label(GFX_FLAG)),
            ))
    return [SettingInfo(value = ctx.build_setting_value)]

hip_copts_flag = rule(
    implementation = _hip_copts_flag_impl,
    build_setting = config.string_list(flag = True, repeatable = True),
    doc = "Repeatable: flags added to HIP compiles of every hip_library (after the -c mode flags, before the target's copts).",
)

# --//:family_wheels, and the carrier of --stamp

family_wheels_flag = rule(
    implementation = _setting_value_impl,
    build_setting = config.bool(flag = True),
    doc = "--//:family_wheels: //:wheels also offers the per-family wheels.",
)

def _stamp_setting_impl(ctx):
    return [SettingInfo(value = ctx.attr.value)]

# Also carries rules_python's py_freethreaded (//rules/python:freethreaded_setting),
# a skylib flag whose provider rules_rocm does not load.
stamp_setting = rule(
    implementation = _stamp_setting_impl,
    attrs = {"value": attr.bool()},
    doc = "Carries a bool chosen by select() into rules (--stamp: value = select on a stamp config_setting).",
)
