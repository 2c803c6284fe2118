"""The variant wheels of a kpack build (--//:wheel_variants) judged by
variantlib 0.2.2 with rocm-bootstrap 0.3.0's amd provider installed (the
dev venv):

- every variant wheel passes `variantlib analyze-wheel`, and the provider
  finds each of its properties valid;
- `variantlib generate-index-json` on each DIST's variant wheels writes the
  same `{name}-{version}-variants.json` as `rocm-wheel index` did in that
  DIST's INDEX (compared parsed, and byte for byte);
- with ROCM_BOOTSTRAP_FORCE_GFX_ARCH=gfx1201, get_variants_by_priority puts
  the `rocm` variant first, its properties filtered to gfx1201, and the
  wheel's markers, evaluated with get_variant_environment_dict's values,
  select exactly the gfx1201 device wheel (the family build's: the one
  gfx12 wheel); with the wheel's own, unfiltered properties they select
  every target's (the negative control: the filter is what narrows);
- for gfx1100 (not built) and with detection disabled the null variant
  comes first, and the markers select nothing: the installer falls back to
  the plain or null wheel;
- the provider rejects gfx9999.

packaging 26 does not parse the draft's variant markers: the test adds the
four variables to its tokenizer (PEP 825's names) and evaluates them with
packaging's own marker code, set membership included.

argv: SCRATCH INDEX DIST [INDEX DIST...] (a scratch directory, then each
build's folder with the index written of it).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from packaging import _tokenizer, markers
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

_tokenizer.DEFAULT_RULES["VARIABLE"] = re.compile(
    r"\b(variant_namespaces|variant_features|variant_properties|variant_label)\b|"
    + _tokenizer.DEFAULT_RULES["VARIABLE"].pattern,
    re.VERBOSE,
)

from variantlib.api import (  # noqa: E402 (after the tokenizer's variables)
    VariantDescription,
    VariantProperty,
    get_variant_environment_dict,
    get_variants_by_priority,
    validate_variant,
)
from variantlib.variant_dist_info import VariantDistInfo  # noqa: E402

scratch, pairs = Path(sys.argv[1]), sys.argv[2:]
assert pairs and len(pairs) % 2 == 0, "argv: SCRATCH INDEX DIST [INDEX DIST...]"
indexes = {Path(d): Path(i) for i, d in zip(pairs[::2], pairs[1::2])}
dists = list(indexes)
VARIANTLIB = Path(sys.executable).parent / "variantlib"


def member(wheel, suffix):
    with zipfile.ZipFile(wheel) as z:
        (name,) = [n for n in z.namelist() if n.count("/") == 1 and n.endswith(suffix)]
        return z.read(name).decode()


def variant_requires(wheel):
    """The wheel's requirements that carry a variant marker."""
    lines = member(wheel, ".dist-info/METADATA").split("\n\n", 1)[0].splitlines()
    reqs = [Requirement(l.split(":", 1)[1].strip()) for l in lines if l.startswith("Requires-Dist:")]
    return [r for r in reqs if r.marker and "variant_" in str(r.marker)]


def selected(wheel, vdesc):
    """The device wheels the markers select for the variant `vdesc`."""
    env = markers.default_environment() | get_variant_environment_dict(vdesc)
    return sorted({canonicalize_name(r.name) for r in variant_requires(wheel) if r.marker.evaluate(env)})


def ranked(variants_json, **env):
    """get_variants_by_priority for `variants_json` with the provider seeing
    `env`, in a process of its own (the provider caches what it detected)."""
    code = (
        "import json, sys\n"
        "from variantlib.api import get_variants_by_priority\n"
        "v = get_variants_by_priority(variants_json=json.load(open(sys.argv[1])))\n"
        "print(json.dumps([[d.label, [p.to_str() for p in d.properties]] for d in v]))\n"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ROCM_BOOTSTRAP_")}
    out = subprocess.run([sys.executable, "-c", code, variants_json], env=clean | env, capture_output=True, text=True)
    assert out.returncode == 0, "get_variants_by_priority: %s" % out.stderr
    return [VariantDescription([VariantProperty.from_str(p) for p in props], label) for label, props in json.loads(out.stdout)]


wheels = sorted(w for d in dists for w in d.glob("*-rocm.whl"))
assert wheels, "no variant wheel (*-rocm.whl) in %s: build with --//:wheel_variants" % ", ".join(map(str, dists))
for w in wheels:
    out = subprocess.run([VARIANTLIB, "analyze-wheel", "-i", w], capture_output=True, text=True)
    assert out.returncode == 0 and "Variant: `rocm`" in out.stdout, "%s: variantlib analyze-wheel: %s%s" % (w.name, out.stdout, out.stderr)
    info = VariantDistInfo(member(w, ".dist-info/variant.json"), "rocm")
    result = validate_variant(info.variant_desc, info)
    assert result.is_valid(allow_unknown_plugins=False), "%s: the amd provider rejects %s" % (w.name, result)
print("ok: variantlib validates %d variant wheels: %s" % (len(wheels), ", ".join(w.name for w in wheels)))

bogus = VariantDescription([VariantProperty("amd", "gfx_arch", "gfx9999")], "rocm")
assert validate_variant(bogus, info).invalid_properties == bogus.properties, "the amd provider accepts gfx9999"

# variantlib's index file of each folder against its index's.
for d in dists:
    folder = scratch / ("variantlib-" + d.name)
    folder.mkdir(parents=True)
    for w in d.glob("*-rocm.whl"):
        shutil.copy(w, folder)
    out = subprocess.run([VARIANTLIB, "generate-index-json", "-d", folder], capture_output=True, text=True)
    assert out.returncode == 0, "variantlib generate-index-json: %s" % out.stderr
    theirs = sorted(folder.glob("*-variants.json"))
    assert len(theirs) == len(list(d.glob("*-rocm.whl"))), "variantlib wrote %s in %s" % (theirs, folder)
    for t in theirs:
        ours = indexes[d] / canonicalize_name(t.name.split("-", 1)[0]) / t.name
        assert ours.exists(), "the index has no %s" % ours
        assert json.loads(ours.read_text()) == json.loads(t.read_text()), "%s: ours %s, variantlib's %s" % (t.name, ours.read_text(), t.read_text())
        assert ours.read_bytes() == t.read_bytes(), "%s: equal parsed, different bytes" % t.name
    print("ok: variantlib's generate-index-json on %s: %s, equal to its index's, byte for byte" % (
        d.name, ", ".join(t.name for t in theirs)))


def serving(folder, dist, target=""):
    """The device wheels of `dist` (those pinning it, whatever their prefix) in `folder` with an archive (for `target`)."""
    out = set()
    for d in folder.glob("*_device_*.whl"):
        z = zipfile.ZipFile(d)
        (md,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        pins = [r.split("==")[0].strip() for r in z.read(md).decode().splitlines() if r.startswith("Requires-Dist: ")]
        if canonicalize_name(dist) not in [canonicalize_name(p[len("Requires-Dist: "):]) for p in pins]:
            continue
        if any(n.endswith("/.kpack/%s.kpack" % target if target else ".kpack") for n in z.namelist()):
            out.add(canonicalize_name(d.name.split("-")[0]))
    return sorted(out)


# Ranking (each DIST's index's variants file) and the markers of each
# variant wheel.
for w in wheels:
    dist, version = w.name.split("-")[:2]
    name = "%s-%s-variants.json" % (dist, version)
    vj = indexes[w.parent] / canonicalize_name(dist) / name
    first = ranked(vj, ROCM_BOOTSTRAP_FORCE_GFX_ARCH="gfx1201")[0]
    assert first.label == "rocm", "%s: gfx1201 ranks %s first" % (w.name, first.label)
    assert [p.to_str() for p in first.properties] == ["amd :: gfx_arch :: gfx1201"], first
    want = serving(w.parent, dist, "gfx1201")
    got = selected(w, first)
    assert len(want) == 1 and got == want, "%s for gfx1201: the markers select %s, want %s" % (w.name, got, want)
    own = VariantDistInfo(member(w, ".dist-info/variant.json"), "rocm").variant_desc
    every = selected(w, own)
    assert len(own.properties) == 2 and every == serving(w.parent, dist), "%s: the unfiltered properties select %s" % (w.name, every)
    for env in ({"ROCM_BOOTSTRAP_FORCE_GFX_ARCH": "gfx1100"}, {"ROCM_BOOTSTRAP_DISABLE_DETECTION": "1"}):
        order = ranked(vj, **env)
        assert [v.label for v in order] == ["null"], "%s with %s: %s" % (w.name, env, [v.label for v in order])
        assert selected(w, order[0]) == [], "%s with %s: the null variant selects device wheels" % (w.name, env)
    print("ok: %s: gfx1201 -> rocm -> %s (unfiltered: %s); gfx1100, no GPU -> null, no device wheel" % (w.name, got[0], ", ".join(every)))
