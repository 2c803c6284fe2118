"""What the tests of tests/outputs/gfx expect the --//:gfx flag to give.

gfx_expected provides Make variables with the expected targets of the
current --//:gfx value. For the default value they are written out below,
not derived from the family table under test, so a wrong table entry or a
wrong expansion fails `bazel test //...`. Other values (tests run with
--//:gfx=...) fall back to the family table (`expand_gfx`), which
//tests/outputs/gfx:families_test checks case by case.
"""

load("//rules:defs.bzl", "DEFAULT_GFX")

# buildifier: disable=bzl-visibility
load("//rules/private:providers.bzl", "GfxInfo")

# buildifier: disable=bzl-visibility
load("//rules/private/data:gfx_families.bzl", "expand_gfx", "families_json")

# buildifier: disable=bzl-visibility
load("//rules/private/util:shell.bzl", "shell_quote")

# Flag value -> its targets, written out by hand.
LITERAL_EXPECTATIONS = {
    "gfx120X-all": ["gfx1200", "gfx1201"],
}

def _gfx_expected_impl(ctx):
    if DEFAULT_GFX not in LITERAL_EXPECTATIONS:
        fail("the default --//:gfx is now {!r}: add its targets to LITERAL_EXPECTATIONS in tests/outputs/gfx/expected.bzl".format(DEFAULT_GFX))
    value = ctx.attr._gfx[GfxInfo].value
    if value in LITERAL_EXPECTATIONS:
        targets, source = LITERAL_EXPECTATIONS[value], "written out in tests/outputs/gfx/expected.bzl"
    else:
        expanded = expand_gfx(value)
        if expanded.error:
            fail(expanded.error)
        targets, source = expanded.targets, "the family table"
    return [platform_common.TemplateVariableInfo({
        "EXPECTED_GFX_FLAG": value,
        "EXPECTED_GFX_TARGETS": ",".join(targets),
        "EXPECTED_OFFLOAD_ARCH_COPTS": " ".join(["--offload-arch=" + t for t in targets]),
        "EXPECTED_GFX_SOURCE": source,
    })]

gfx_expected = rule(
    implementation = _gfx_expected_impl,
    attrs = {"_gfx": attr.label(default = "//:gfx", providers = [GfxInfo])},
    doc = "Make variables EXPECTED_GFX_* for the current --//:gfx (see the file docstring).",
)

def _files_equal_test_impl(ctx):
    got, want = ctx.file.got.short_path, ctx.file.want.short_path
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    lines = [
        "#!/usr/bin/env bash",
        "set -euo pipefail",
        "diff -u {} {} || {{ echo 'FAIL: {} differs from {}'; exit 1; }}".format(shell_quote(want), shell_quote(got), got, want),
        "echo 'ok: {} ='; cat {}".format(got, shell_quote(got)),
    ]
    ctx.actions.write(script, "\n".join(lines) + "\n", is_executable = True)
    return [DefaultInfo(executable = script, runfiles = ctx.runfiles(files = [ctx.file.got, ctx.file.want]))]

files_equal_test = rule(
    implementation = _files_equal_test_impl,
    attrs = {
        "got": attr.label(allow_single_file = True, mandatory = True),
        "want": attr.label(allow_single_file = True, mandatory = True),
    },
    test = True,
    doc = "`got` and `want` have the same content (diff -u).",
)

def _families_json_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".json")
    ctx.actions.write(out, families_json())
    return [DefaultInfo(files = depset([out]))]

families_json_file = rule(
    implementation = _families_json_impl,
    doc = "The amdgpu_family table as JSON, as the Rust tools embed it.",
)
