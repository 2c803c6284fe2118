"""--//:gfx / `rocm-wheel --gfx` expansion cases: the one table both sides are tested with.

The Starlark expansion (rules/private/data/gfx_families.bzl, //tests/outputs/gfx:families_test)
and the Rust one (tools/crates/gfx-targets/src/lib.rs, its
tests/expand_cases.rs reads the JSON between the triple quotes) must give
each `value` the same `targets` (as a set), or an error containing every
`error` needle. A name must be in the table on both sides: the build needs a
platform per target, and a typo is better caught with a hint than reported
as missing code.
"""

EXPAND_CASES = json.decode("""
[
  {"value": "gfx120X-all", "targets": ["gfx1200", "gfx1201"]},
  {"value": "gfx94X-dcgpu", "targets": ["gfx942"]},
  {"value": "gfx950-dcgpu", "targets": ["gfx950"]},
  {"value": "gfx90X-dcgpu", "targets": ["gfx906", "gfx908", "gfx90a"]},
  {"value": "gfx90X-dgpu", "targets": ["gfx906"]},
  {"value": " gfx94X-dcgpu , gfx950-dcgpu ", "targets": ["gfx942", "gfx950"]},
  {"value": "gfx1201,gfx120X-all,gfx1201", "targets": ["gfx1200", "gfx1201"]},
  {"value": "dcgpu-all", "targets": ["gfx908", "gfx90a", "gfx942", "gfx950"]},
  {"value": "gfx103X-all", "targets": ["gfx1030", "gfx1032", "gfx1035", "gfx1036"]},
  {"value": "gfx103X-dgpu,gfx103X-igpu", "targets": ["gfx1030", "gfx1032", "gfx1035", "gfx1036"]},
  {"value": "gfx1031,gfx90c-igpu", "targets": ["gfx90c", "gfx1031"]},
  {"value": "gfx12-generic,gfx9-4-generic,gfx1201", "targets": ["gfx1201", "gfx9-4-generic", "gfx12-generic"]},
  {"value": "gfx90a,gfx1100", "targets": ["gfx90a", "gfx1100"]},
  {"value": "gfx12_0", "targets": ["gfx1200", "gfx1201"]},
  {"value": "gfx115x,gfx9_4", "targets": ["gfx942", "gfx1150", "gfx1151", "gfx1152", "gfx1153"]},
  {"value": "gfx12", "targets": ["gfx1200", "gfx1201", "gfx1250", "gfx1251", "gfx1250-strict"]},
  {"value": "gfx12_9", "error": ["Did you mean 'gfx12_0'?", "rocm-bootstrap bundles: gfx10, gfx10_1, "]},
  {"value": "gfx120x-al", "error": ["unknown amdgpu family or gfx target 'gfx120x-al'", "Did you mean 'gfx120X-all'?", "Valid families: dcgpu-all"]},
  {"value": "gfx120x-ALL", "error": ["Did you mean 'gfx120X-all'?", "Single targets: gfx900, gfx902"]},
  {"value": "GFX942", "error": ["Did you mean 'gfx942'?"]},
  {"value": "GFX12-Generic", "error": ["Did you mean 'gfx12-generic'?"]},
  {"value": "gfx12-genric", "error": ["Did you mean 'gfx12-generic'?"]},
  {"value": "gfx1201-all", "error": ["Did you mean 'gfx120X-all'?"]},
  {"value": "gfx94X-dcgpu,bogus-family-name", "error": ["'bogus-family-name'", "Legacy aliases: gfx900-dgpu"]},
  {"value": "gfx1299", "error": ["unknown amdgpu family or gfx target 'gfx1299'", "Single targets: gfx900"]},
  {"value": "gfx12-5-generic", "error": ["unknown amdgpu family or gfx target 'gfx12-5-generic'", "Generic targets (one code object for several GPUs): gfx9-generic, "]},
  {"value": "radeon", "error": ["unknown amdgpu family or gfx target 'radeon'"]},
  {"value": "", "error": ["is empty"]},
  {"value": " , ", "error": ["is empty"]},
  {"value": "gfx942,,gfx950", "error": ["empty entry"]}
]
""")
