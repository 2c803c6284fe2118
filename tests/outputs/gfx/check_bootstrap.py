"""rules_rocm's copy of rocm-bootstrap's gfx hierarchy (gfx_families.bzl's
BOOTSTRAP_BUNDLES, as families_json writes it) equals the installed
rocm-bootstrap's: the same family and sub-family keys, levels and members
in order, and every target-level bundle a target --//:gfx accepts; and its
variant provider's amd :: gfx_arch values are the bundles' targets that a
variant value can spell.

argv: the families JSON."""

import json
import sys

from rocm_bootstrap import targets as rb
from rocm_bootstrap.naming import device_dist_name

table = json.load(open(sys.argv[1]))
ours = table["bundles"]
theirs = {
    b.key: {"level": b.level.value, "members": [m.name for m in b.members]}
    for b in rb.all_bundles()
    if b.level != rb.PackagingLevel.TARGET
}
assert ours == theirs, "gfx_families.bzl BOOTSTRAP_BUNDLES differs from rocm-bootstrap %s:\n ours   %s\n theirs %s" % (
    rb.__name__, json.dumps(ours, sort_keys=True), json.dumps(theirs, sort_keys=True))

accepted = set()
for group in ("families", "legacy_families"):
    for members in table[group].values():
        accepted.update(members)
for b in ours.values():
    accepted.update(b["members"])
accepted.update(table["retired_targets"])
target_keys = {b.key for b in rb.all_bundles(rb.PackagingLevel.TARGET)}
missing = sorted(target_keys - accepted)
assert not missing, "rocm-bootstrap targets --//:gfx does not accept: %s" % missing

# Variant wheels (rocm-wheel variant) take the amd provider's gfx_arch values
# to be the bundles' targets a variant value can spell (^[a-z0-9_.]+$).
import re
from rocm_bootstrap.variant_provider import AMDVariantPlugin

(gfx_arch,) = AMDVariantPlugin.get_all_configs()
spellable = {m for b in ours.values() for m in b["members"] if re.fullmatch(r"[a-z0-9_.]+", m)}
assert gfx_arch.name == "gfx_arch" and set(gfx_arch.values) == spellable, (
    "rocm-bootstrap's amd :: gfx_arch values %s, the bundles' spellable targets %s" % (sorted(gfx_arch.values), sorted(spellable)))

# Device wheels are named as rocm-bootstrap names device packages.
assert device_dist_name("jax-rocm7-plugin-device", rb.lookup_bundle("gfx1201")) == "jax-rocm7-plugin-device-gfx1201"
print("ok: %d bundles and %d targets agree with rocm-bootstrap" % (len(ours), len(target_keys)))
