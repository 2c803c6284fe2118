"""The --//:gfx flag, the per-target device configuration and its split transition.

The user-facing flag is a comma list of amdgpu families / gfx targets. Device
code is compiled under a split transition: one configuration per gfx target,
in which `//platforms/gfx:device_target` names the target and the target
platform is `//platforms:<gfx>` (constraint `//platforms/gfx:<gfx>`), so device
code can `select()` on `//platforms/gfx:is_<gfx>` and use
`target_compatible_with`. A device configuration carries nothing of the set
it came from, which is why changing the set never recompiles a kept target.
"""

load(":gfx_families.bzl", "expand_gfx")

GfxInfo = provider(
    doc = "The validated value of the --//:gfx flag.",
    fields = {
        "value": "the flag as given",
        "targets": "sorted list of gfx targets it expands to",
    },
)

GfxDeviceTargetInfo = provider(
    doc = "The gfx target of a device configuration ('' outside device code).",
    fields = {"target": "gfx target name or ''"},
)

_FLAG = "//:gfx"

# The value of --//:gfx inside device configurations (never a user value).
DEVICE_CONFIGURATION_GFX = "(device configuration)"
_DEVICE_TARGET = "//platforms/gfx:device_target"
_PLATFORMS = "//command_line_option:platforms"

def label_as_typed(label, name = None):
    """`label` as users write it: //pkg:name here, @rules_rocm//pkg:name downstream.

    Bzlmod's canonical repository names (rules_rocm~ on Bazel 7, rules_rocm+
    on Bazel 8) are not what users write. `name` replaces the target name.
    """
    repo = label.workspace_name.split("~")[0].split("+")[0]
    return "{}//{}:{}".format("@" + repo if repo else "", label.package, name or label.name)

def _offload_arch_copts(targets):
    return " ".join(["--offload-arch=" + t for t in targets])

def _gfx_flag_impl(ctx):
    value = ctx.build_setting_value
    if value == DEVICE_CONFIGURATION_GFX:
        fail("{}: read inside a gfx device configuration; hip_library and --//:gfx users cannot be dependencies of device code".format(ctx.label))
    expanded = expand_gfx(value, flag = "--" + label_as_typed(ctx.label))
    if expanded.error:
        fail(expanded.error)
    return [
        GfxInfo(value = value, targets = expanded.targets),
        # For cc_library code built by a hipcc-style toolchain:
        #   toolchains = ["@rules_rocm//:gfx"], copts = ["$(ROCM_OFFLOAD_ARCH_COPTS)"]
        platform_common.TemplateVariableInfo({
            "ROCM_GFX_TARGETS": ",".join(expanded.targets),
            "ROCM_OFFLOAD_ARCH_COPTS": _offload_arch_copts(expanded.targets),
            "ROCM_AMDGPU_TARGETS": ",".join(expanded.targets),
        }),
    ]

gfx_flag = rule(
    implementation = _gfx_flag_impl,
    build_setting = config.string(flag = True),
    doc = "The GPU target flag: comma list of amdgpu families or gfx targets, validated at analysis.",
)

def _device_target_impl(ctx):
    return [GfxDeviceTargetInfo(target = ctx.build_setting_value)]

gfx_device_target_setting = rule(
    implementation = _device_target_impl,
    build_setting = config.string(flag = False),
    doc = "Internal: the gfx target of a device configuration, set by the split transition.",
)

def _platform_label(target):
    return str(Label("//platforms:" + target))

def _device_split_impl(settings, _attr):
    expanded = expand_gfx(settings[str(Label(_FLAG))], flag = "--" + label_as_typed(Label(_FLAG)))
    if expanded.error:
        fail(expanded.error)
    return {
        t: {
            str(Label(_FLAG)): DEVICE_CONFIGURATION_GFX,
            str(Label(_DEVICE_TARGET)): t,
            _PLATFORMS: _platform_label(t),
        }
        for t in expanded.targets
    }

# One configuration per gfx target of --//:gfx. The set itself is replaced by
# a constant: Bazel 4 hashes it into the output directory otherwise, and the
# device configuration of gfx1201 must be the same whether the set is
# gfx1200,gfx1201 or gfx1201 alone (same paths, same action keys: no rebuild).
gfx_device_split = transition(
    implementation = _device_split_impl,
    inputs = [str(Label(_FLAG))],
    outputs = [str(Label(_FLAG)), str(Label(_DEVICE_TARGET)), _PLATFORMS],
)

def gfx_targets(ctx):
    """The expanded gfx targets of the flag (needs a `_gfx` attribute on //:gfx)."""
    return ctx.attr._gfx[GfxInfo].targets

GFX_ATTRS = {
    "_gfx": attr.label(default = Label(_FLAG), providers = [GfxInfo]),
}
