"""family_wheels: one wheel per GPU family, thinned from one fat build.

The fat wheel is built once, for every target of the listed families (an
incoming transition sets --//:gfx to their union), and `rocm-wheel thin`
writes one wheel per family from it: the same host code, only that family's
code objects.

Naming: each wheel's distribution is renamed to `<distribution>-<family>`
(example-rocm7-pjrt-gfx120X-all; file example_rocm7_pjrt_gfx120x_all-…whl), as
TheRock names its per-family packages. A name of its own is the only scheme
that a package index (PyPI included) and pip both keep apart: a local version
label (`+gfx120X`) is refused by PyPI and, on other indexes, pip picks the
highest label rather than the user's GPU; a build tag only orders uploads of
the same name and version. The cost: a requirement on the fat distribution's
name is not met by a per-family wheel.
"""

load("//rules/private:providers.bzl", "FamilyWheelsInfo", "KpackWheelInfo", "WheelInfo")
load("//rules/private/actions:rocm_wheel.bzl", "rocm_wheel_thin")
load("//rules/private/data:gfx_families.bzl", "expand_gfx")
load("//rules/private/settings:transitions.bzl", "ALLOWLIST_ATTRS", "all_families_transition")
load("//rules/private/util:wheel_names.bzl", "wheel_file_name")
load(":rocm_wheel_toolchain.bzl", "ROCM_WHEEL_TOOLCHAIN_TYPE")

def _check_families(ctx):
    if not ctx.attr.families:
        fail("{}: families is empty; list amdgpu families such as gfx120X-all".format(ctx.label))
    seen = {}
    for f in ctx.attr.families:
        expanded = expand_gfx(f, flag = "{} families".format(ctx.label))
        if expanded.error:
            fail(expanded.error)
        if f in seen:
            fail("{}: family {} is listed twice".format(ctx.label, f))
        seen[f] = True

def _thin(ctx, info, family):
    """`info`'s wheel with only `family`'s code objects."""
    out = ctx.actions.declare_file(wheel_file_name(info.distribution + "-" + family, info.version, info.tag))
    rocm_wheel_thin(ctx, info.wheel, family, out)
    return out

def _family_wheels_impl(ctx):
    _check_families(ctx)
    fat = ctx.attr.wheel[0]
    if WheelInfo not in fat:
        fail("{}: wheel {} is not a rocm_wheel".format(ctx.label, fat.label))
    if KpackWheelInfo in fat:
        fail(("{}: {} is a kpack build (--//:hip_device_code=kpack): its binaries carry no device code to thin; " +
              "its device wheels already come one per GPU target").format(ctx.label, fat.label))
    info = fat[WheelInfo]
    by_family = {family: _thin(ctx, info, family) for family in ctx.attr.families}
    return [
        DefaultInfo(files = depset(by_family.values())),
        FamilyWheelsInfo(by_family = by_family, fat = info.wheel),
    ]

family_wheels = rule(
    implementation = _family_wheels_impl,
    attrs = ALLOWLIST_ATTRS | {
        "families": attr.string_list(
            mandatory = True,
            doc = "amdgpu families (or single gfx targets), one wheel each.",
        ),
        "wheel": attr.label(
            mandatory = True,
            cfg = all_families_transition,
            providers = [WheelInfo],
            doc = "The fat rocm_wheel; built for the union of `families`.",
        ),
    },
    toolchains = [str(ROCM_WHEEL_TOOLCHAIN_TYPE)],
    doc = "One wheel per GPU family from one fat wheel (`rocm-wheel thin`), each named <distribution>-<family>.",
)
