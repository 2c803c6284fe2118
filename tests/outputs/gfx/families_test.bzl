"""Analysis-time checks of the family table and of expand_gfx (the shared
cases of expand_cases.bzl), reported by a generated test script (fails
listing every mismatch)."""

# buildifier: disable=bzl-visibility
load("//rules/private/data:gfx_families.bzl", "FAMILIES", "GENERIC_TARGETS", "GFX_TARGETS", "LEGACY_FAMILIES", "compile_targets", "expand_gfx", "sort_gfx_targets")
load(":expand_cases.bzl", "EXPAND_CASES")

# (targets, compile targets with --//:gfx_generic)
_GENERIC_CASES = [
    (["gfx1200", "gfx1201"], ["gfx12-generic"]),
    (["gfx908", "gfx90a", "gfx942", "gfx950"], ["gfx908", "gfx90a", "gfx9-4-generic"]),
    (["gfx1100", "gfx1151", "gfx1250"], ["gfx1250", "gfx11-generic"]),
    (["gfx12-generic"], ["gfx12-generic"]),
]

def _check(errors):
    for case in EXPAND_CASES:
        value = case["value"]
        got = expand_gfx(value)
        if "targets" in case:
            if got.error:
                errors.append("{}: unexpected error {}".format(repr(value), got.error))
            elif got.targets != sort_gfx_targets(case["targets"]):
                errors.append("{}: got {}, want {}".format(repr(value), got.targets, case["targets"]))
        elif not got.error:
            errors.append("{}: accepted as {}, want an error".format(repr(value), got.targets))
        else:
            for n in case["error"]:
                if n not in got.error:
                    errors.append("{}: error lacks {}: {}".format(repr(value), repr(n), got.error))

    # Table invariants: sizes from TheRock's list, every family sorted and
    # known, every target a family of its own.
    sizes = {"dgpu-all": 11, "igpu-all": 7, "dcgpu-all": 4, "gfx103X-all": 4, "gfx115X-all": 4}
    for fam, n in sizes.items():
        if len(FAMILIES[fam]) != n:
            errors.append("{} has {} targets, want {}".format(fam, len(FAMILIES[fam]), n))
    for table in (FAMILIES, LEGACY_FAMILIES):
        for fam, targets in table.items():
            r = expand_gfx(fam)
            if r.error or r.targets != sort_gfx_targets(targets):
                errors.append("family {} expands to {} / {}".format(fam, r.targets, r.error))
    for t in GFX_TARGETS:
        r = expand_gfx(t)
        if r.targets != [t]:
            errors.append("target {} expands to {}".format(t, r.targets))
    if GFX_TARGETS.index("gfx90a") > GFX_TARGETS.index("gfx1010"):
        errors.append("gfx targets are not in ISA order: {}".format(GFX_TARGETS))

    # 28 named by TheRock's families, 6 generic, and rocm-bootstrap's gfx902,
    # gfx904, gfx909, gfx1013, gfx1251 and gfx1250-strict.
    if len(GFX_TARGETS) != 40:
        errors.append("{} gfx targets, want 40: {}".format(len(GFX_TARGETS), GFX_TARGETS))

    # --//:gfx_generic: a generic target per covered target, the rest as is.
    for targets, want in _GENERIC_CASES:
        got = compile_targets(targets, True)
        if got != want:
            errors.append("generic compile targets of {}: got {}, want {}".format(targets, got, want))
        if compile_targets(targets, False) != targets:
            errors.append("compile targets of {} without --//:gfx_generic changed".format(targets))
    for generic, members in GENERIC_TARGETS.items():
        for t in members:
            if t in GFX_TARGETS and compile_targets([t], True) != [generic]:
                errors.append("{} is not compiled through {}".format(t, generic))

def _families_test_impl(ctx):
    errors = []
    _check(errors)
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    lines = ["#!/usr/bin/env bash", "# Generated: results of the analysis-time checks."]
    if errors:
        lines += ["echo " + repr("FAIL: " + e) + " >&2" for e in errors] + ["exit 1"]
    else:
        lines.append("echo 'PASS: {} expansion cases, {} families, {} targets'".format(
            len(EXPAND_CASES),
            len(FAMILIES) + len(LEGACY_FAMILIES),
            len(GFX_TARGETS),
        ))
    ctx.actions.write(script, "\n".join(lines) + "\n", is_executable = True)
    return [DefaultInfo(executable = script)]

families_test = rule(
    implementation = _families_test_impl,
    test = True,
    doc = "Checks the amdgpu family table and --//:gfx expansion.",
)
