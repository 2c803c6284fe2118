"""Flags whose values must name something declared in MODULE.bazel.

--@rules_rocm//rocm:toolkit, :toolkits and :sysroot: one rule shape,
parameterised by what the names are and how to declare one, so that a typo
fails at analysis with the declared names and the fix.
"""

load("//rules/private:providers.bzl", "SettingInfo")

def _declared_flag_impl(ctx):
    value = ctx.build_setting_value
    names = value if type(value) == "list" else [value]
    unknown = [n for n in names if n not in ctx.attr.declared and n not in ctx.attr.internal]
    if unknown:
        fail("--@rules_rocm//{}:{}={} names no declared {}; declared: {}. {}".format(
            ctx.label.package,
            ctx.label.name,
            ",".join(names),
            ctx.attr.what,
            ", ".join(ctx.attr.declared),
            ctx.attr.how,
        ))
    return [SettingInfo(value = value)]

_ATTRS = {
    "declared": attr.string_list(doc = "The names the flag may take."),
    "how": attr.string(doc = "How to declare another (the end of the error)."),
    "internal": attr.string_list(doc = "Values transitions write that no user types."),
    "what": attr.string(doc = "What the names are, e.g. `ROCm toolkit`."),
}

declared_name_flag = rule(
    implementation = _declared_flag_impl,
    build_setting = config.string(flag = True),
    attrs = _ATTRS,
    doc = "A string flag that must name one declared entry.",
)

declared_names_flag = rule(
    implementation = _declared_flag_impl,
    build_setting = config.string_list(flag = True),
    attrs = _ATTRS,
    doc = "A comma-separated list flag whose entries must each name a declared entry.",
)
