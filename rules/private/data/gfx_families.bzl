"""The amdgpu_family table: the single source of truth for GPU target names.

Names follow TheRock's `THEROCK_AMDGPU_FAMILIES`. Every gfx target is also a
family of its own name. `LEGACY_FAMILIES` are retired names XLA/JAX still use.
"""

FAMILIES = {
    "dcgpu-all": ["gfx908", "gfx90a", "gfx942", "gfx950"],
    "dgpu-all": [
        "gfx906",
        "gfx1010",
        "gfx1011",
        "gfx1012",
        "gfx1030",
        "gfx1032",
        "gfx1100",
        "gfx1101",
        "gfx1102",
        "gfx1200",
        "gfx1201",
    ],
    "gfx90X-all": ["gfx906", "gfx908", "gfx90a"],
    "gfx90X-dcgpu": ["gfx906", "gfx908", "gfx90a"],
    "gfx90X-dgpu": ["gfx906"],
    "gfx94X-all": ["gfx942"],
    "gfx94X-dcgpu": ["gfx942"],
    "gfx950-all": ["gfx950"],
    "gfx950-dcgpu": ["gfx950"],
    "gfx101X-all": ["gfx1010", "gfx1011", "gfx1012"],
    "gfx101X-dgpu": ["gfx1010", "gfx1011", "gfx1012"],
    "gfx103X-all": ["gfx1030", "gfx1032", "gfx1035", "gfx1036"],
    "gfx103X-dgpu": ["gfx1030", "gfx1032"],
    "gfx103X-igpu": ["gfx1035", "gfx1036"],
    "gfx110X-all": ["gfx1100", "gfx1101", "gfx1102", "gfx1103"],
    "gfx110X-dgpu": ["gfx1100", "gfx1101", "gfx1102"],
    "gfx110X-igpu": ["gfx1103"],
    "gfx115X-all": ["gfx1150", "gfx1151", "gfx1152", "gfx1153"],
    "gfx115X-igpu": ["gfx1150", "gfx1151", "gfx1152", "gfx1153"],
    "gfx120X-all": ["gfx1200", "gfx1201"],
    # TheRock's bring-up family for MI450 (clang 22 and ROCm 7.2 build it).
    "gfx125X-all": ["gfx1250"],
    "gfx125X-dcgpu": ["gfx1250"],
    # TheRock's table passes gfx1035 before FAMILY, so it leaves it out of
    # igpu-all; every other gfx103X iGPU is in, and so is it here.
    "igpu-all": [
        "gfx1035",
        "gfx1036",
        "gfx1103",
        "gfx1150",
        "gfx1151",
        "gfx1152",
        "gfx1153",
    ],
}

# Names TheRock retired, still accepted because build scripts pass them.
LEGACY_FAMILIES = {
    "gfx900-dgpu": ["gfx900"],
    "gfx906-dgpu": ["gfx906"],
    "gfx908-dcgpu": ["gfx908"],
    "gfx90a-dcgpu": ["gfx90a"],
    "gfx90c-igpu": ["gfx90c"],
}

# rocm-bootstrap's packaging hierarchy (PyPI rocm-bootstrap 0.3.0,
# rocm_bootstrap/targets.py), whose keys name its device packages: target ->
# sub-family -> family (gfx1201 -> gfx12_0 -> gfx12). The family and
# sub-family bundles, members in its order; a target bundle is the target.
# //tests/outputs/gfx:bootstrap_test compares this with the installed package.
BOOTSTRAP_BUNDLES = {
    "gfx9": struct(level = "family", members = ["gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a", "gfx90c", "gfx942", "gfx950"]),
    "gfx10": struct(level = "family", members = ["gfx1010", "gfx1011", "gfx1012", "gfx1013", "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"]),
    "gfx11": struct(level = "family", members = ["gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"]),
    "gfx12": struct(level = "family", members = ["gfx1200", "gfx1201", "gfx1250", "gfx1250-strict", "gfx1251"]),
    "gfx9_0": struct(level = "sub_family", members = ["gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a", "gfx90c"]),
    "gfx9_4": struct(level = "sub_family", members = ["gfx942"]),
    "gfx9_5": struct(level = "sub_family", members = ["gfx950"]),
    "gfx10_1": struct(level = "sub_family", members = ["gfx1010", "gfx1011", "gfx1012", "gfx1013"]),
    "gfx10_3": struct(level = "sub_family", members = ["gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"]),
    "gfx110x": struct(level = "sub_family", members = ["gfx1100", "gfx1101", "gfx1102", "gfx1103"]),
    "gfx115x": struct(level = "sub_family", members = ["gfx1150", "gfx1151", "gfx1152", "gfx1153"]),
    "gfx12_0": struct(level = "sub_family", members = ["gfx1200", "gfx1201"]),
    "gfx12_5": struct(level = "sub_family", members = ["gfx1250", "gfx1250-strict", "gfx1251"]),
}

# Generic targets (code-object version 6): one code object that runs on each
# listed target. AMDGPUUsage's table; gfx908 and gfx90a have none.
GENERIC_TARGETS = {
    "gfx9-generic": ["gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"],
    "gfx9-4-generic": ["gfx942", "gfx950"],
    "gfx10-1-generic": ["gfx1010", "gfx1011", "gfx1012", "gfx1013"],
    "gfx10-3-generic": ["gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"],
    "gfx11-generic": ["gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"],
    "gfx12-generic": ["gfx1200", "gfx1201"],
}

# Targets TheRock no longer builds, still accepted on their own.
RETIRED_TARGETS = ["gfx900", "gfx90c", "gfx1031", "gfx1033", "gfx1034"]

_GENERIC_ORDER = list(GENERIC_TARGETS)

def _gfx_sort_key(t):
    # gfx90a sorts after gfx909 and before gfx1010: compare (length, name);
    # generic targets after all others, in the table's (ISA) order.
    if t in GENERIC_TARGETS:
        return (1, _GENERIC_ORDER.index(t), t)
    return (0, len(t), t)

def _all_targets():
    seen = {t: True for t in RETIRED_TARGETS + list(GENERIC_TARGETS)}
    for group in (FAMILIES, LEGACY_FAMILIES):
        for targets in group.values():
            for t in targets:
                seen[t] = True
    for bundle in BOOTSTRAP_BUNDLES.values():
        for t in bundle.members:
            seen[t] = True
    return sorted(seen.keys(), key = _gfx_sort_key)

# Every gfx target any family names, in ISA order.
GFX_TARGETS = _all_targets()

# The default of --//:gfx: the RDNA4 family, two targets.
DEFAULT_GFX = "gfx120X-all"

def therock_families(gfx):
    """The TheRock families a --//:gfx value names (its single targets are no family), e.g. ["gfx120X-all"]."""
    return [f.strip() for f in gfx.split(",") if f.strip() in FAMILIES]

def all_family_names():
    """Every accepted name (families, legacy aliases, rocm-bootstrap bundles, single targets) -> its targets."""
    names = dict(FAMILIES)
    names.update(LEGACY_FAMILIES)
    for key, bundle in BOOTSTRAP_BUNDLES.items():
        names[key] = bundle.members
    for t in GFX_TARGETS:
        names[t] = [t]
    return names

# Levels of rocm-bootstrap's hierarchy, narrowest first (--//:device_wheel_level).
BOOTSTRAP_LEVELS = ["target", "sub_family", "family"]

def bootstrap_bundle(target, level):
    """The key of rocm-bootstrap's `level` bundle holding `target` (gfx1201, family -> gfx12).

    A target no bundle of that level holds (a generic target) is its own bundle.
    """
    if level != "target":
        for key, bundle in BOOTSTRAP_BUNDLES.items():
            if bundle.level == level and target in bundle.members:
                return key
    return target

def sort_gfx_targets(targets):
    return sorted(targets, key = _gfx_sort_key)

def _edit_distance(a, b):
    # Case-insensitive Levenshtein distance (names are short).
    a = a.lower()
    b = b.lower()
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
        prev = cur
    return prev[len(b)]

def did_you_mean(name, candidates):
    """The closest candidate within a small distance, or None."""
    best = None
    best_d = 0
    for c in sorted(candidates):
        if c.lower() == name.lower():
            return c
        d = _edit_distance(name, c)
        if best == None or d < best_d:
            best = c
            best_d = d
    if best != None and best_d <= max(2, len(name) // 3):
        return best
    return None

def expand_gfx(value, flag = "--//:gfx"):
    """Expands a comma list of family/target names.

    Returns:
      struct(targets = sorted unique gfx targets, error = None or a message).
    """
    names = all_family_names()
    parts = [p.strip() for p in value.split(",")]
    if not [p for p in parts if p]:
        return struct(targets = [], error = (
            "{flag} is empty; give at least one amdgpu family or gfx target, " +
            "e.g. {flag}={default}. Valid families: {valid}"
        ).format(flag = flag, default = DEFAULT_GFX, valid = ", ".join(sorted(FAMILIES.keys()))))
    found = {}
    for p in parts:
        if not p:
            return struct(targets = [], error = "{}={}: empty entry in the comma-separated list".format(flag, value))
        if p not in names:
            hint = did_you_mean(p, names.keys())
            return struct(targets = [], error = (
                "{flag}={value}: unknown amdgpu family or gfx target '{name}'.{hint}\n" +
                "Valid families: {families}\nLegacy aliases: {legacy}\n" +
                "rocm-bootstrap bundles: {bundles}\nSingle targets: {targets}\n" +
                "Generic targets (one code object for several GPUs): {generic}"
            ).format(
                flag = flag,
                value = value,
                name = p,
                hint = " Did you mean '{}'?".format(hint) if hint else "",
                families = ", ".join(sorted(FAMILIES.keys())),
                legacy = ", ".join(sorted(LEGACY_FAMILIES.keys())),
                bundles = ", ".join(sorted(BOOTSTRAP_BUNDLES.keys())),
                targets = ", ".join([t for t in GFX_TARGETS if t not in GENERIC_TARGETS]),
                generic = ", ".join(GENERIC_TARGETS.keys()),
            ))
        for t in names[p]:
            found[t] = True
    return struct(targets = sort_gfx_targets(found.keys()), error = None)

def generic_target_of(target):
    """The generic target whose code object runs on `target`, or None."""
    for generic, members in GENERIC_TARGETS.items():
        if target in members:
            return generic
    return None

def compile_targets(targets, generic):
    """The gfx targets device code is compiled for.

    Args:
      targets: expanded --//:gfx targets.
      generic: --//:gfx_generic: each target a generic target covers is
        compiled through it (one compile per generic target); the others
        (gfx908, gfx90a, gfx1250) stay as they are.
    """
    if not generic:
        return targets
    found = {}
    for t in targets:
        found[generic_target_of(t) or t] = True
    return sort_gfx_targets(found.keys())

def families_json():
    """The table as JSON, the form the Rust tools read.

    A copy is checked in under tools/; //tests/outputs/gfx:families_json_test keeps
    it equal to this.
    """
    return json.encode_indent({
        "bundles": {k: {"level": b.level, "members": b.members} for k, b in BOOTSTRAP_BUNDLES.items()},
        "families": FAMILIES,
        "generic_targets": GENERIC_TARGETS,
        "legacy_families": LEGACY_FAMILIES,
        "retired_targets": RETIRED_TARGETS,
    }, indent = "  ") + "\n"
