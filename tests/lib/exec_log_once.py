"""Reads a Bazel JSON execution log of a clean `bazel build //:wheels` and
asserts that Python-independent work ran exactly once and per-Python work
once per version of its wheel set.

"Once" is per kind of configuration: a crate compiled both for the rocm-wheel
tool (k8-opt-exec-ST-...) and for a build script or proc-macro
(k8-fastbuild-exec-ST-...) is two different compiles, on purpose. What must
not multiply work is a Starlark setting (Python version, gfx target) leaking
into a configuration, which only changes the -ST-<hash> suffix.

usage: exec_log_once.py [--needles=A,B] [--mnemonics=M,N] LOG VERSION...
       (e.g. LOG 3.10 3.11 3.12 3.13)

--needles: parts of outputs that Python-independent actions must have
produced (default: //:wheels' shared library, pjrt plugin, HIP bundles and
pjrt wheel), so that a renamed target cannot make the check vacuous;
--mnemonics: mnemonics among them (default: HipDeviceCompile, CppLink).
"""

import collections
import re
import sys

from exec_log import outputs, read_spawns

# Per-Python configurations are recognized by the cpXY wheels they write
# (cp314-cp314t: the free-threaded 3.14t).
PER_PYTHON_WHEEL = re.compile(r"-cp3(\d+)-cp3\d+(t?)-[^/]*\.whl$")


def version_key(v):
    """"3.9" before "3.10", "3.14t" right after "3.14"."""
    return (int(v.rstrip("t").split(".")[1]), v.endswith("t"))


def split(path):
    """bazel-out/<configuration>/bin/x -> (configuration, bin/x)."""
    parts = path.split("/", 2)
    if parts[0] != "bazel-out" or len(parts) < 3:
        return None, path
    return parts[1], parts[2]


def kind(cfg):
    """k8-opt-exec-ST-473b0a60a166 -> k8-opt-exec: the configuration without
    the hash of its Starlark settings."""
    return re.sub(r"-ST-[0-9a-f]+$", "", cfg)


DEFAULT_NEEDLES = ("libxla_rocm7_kernels.so", "xla_rocm_plugin.so", ".hipfb", "example_rocm7_pjrt-")
DEFAULT_MNEMONICS = ("HipDeviceCompile", "CppLink")


def option(args, name, default):
    """Removes --name=a,b from args; its values, else default."""
    for i, a in enumerate(args):
        if a.startswith(f"--{name}="):
            return tuple(v for v in args.pop(i)[len(name) + 3:].split(",") if v)
    return default


def main():
    args = sys.argv[1:]
    needles = option(args, "needles", DEFAULT_NEEDLES)
    mnemonics_wanted = option(args, "mnemonics", DEFAULT_MNEMONICS)
    log, versions = args[0], args[1:]
    actions = []  # (mnemonic, configuration, [config-free outputs])
    for s in read_spawns(log):
        outs = outputs(s)
        configs = {split(o)[0] for o in outs}
        if len(configs) != 1 or None in configs:
            continue
        actions.append((s.get("mnemonic", ""), configs.pop(), sorted(split(o)[1] for o in outs)))
    if not actions:
        sys.exit(f"FAIL: no actions in {log}; was the build clean?")

    # Configurations that built per-Python wheels, and for which version.
    version_of = {}
    for _, cfg, outs in actions:
        for o in outs:
            m = PER_PYTHON_WHEEL.search(o)
            if m:
                version_of.setdefault(cfg, set()).add("3." + m.group(1) + m.group(2))
    for cfg, vs in version_of.items():
        if len(vs) != 1:
            sys.exit(f"FAIL: configuration {cfg} built wheels for several Pythons: {sorted(vs)}")
    version_of = {cfg: next(iter(vs)) for cfg, vs in version_of.items()}
    built = sorted(set(version_of.values()), key=version_key)
    if built != sorted(versions, key=version_key):
        sys.exit(f"FAIL: per-Python wheels built for {built}, expected {versions}")

    per_python = set(version_of)
    independent = collections.defaultdict(list)  # config-free output key -> configurations
    per_version = collections.defaultdict(list)
    for mnemonic, cfg, outs in actions:
        # Per-Python outputs differ only in their version tag (a wheel's cp312,
        # a module's EXT_SUFFIX cpython-312, cpython-314t).
        key = (mnemonic, kind(cfg), tuple(re.sub(r"cp(ython-)?3\d+t?", "cpXY", o) if cfg in per_python else o for o in outs))
        (per_version if cfg in per_python else independent)[key].append(cfg)

    errors = []
    # (Several Python-independent configurations are fine: e.g. one per gfx
    # target for device code. Each action must still run once.)
    for key, cfgs in sorted(independent.items()):
        if len(cfgs) != 1:
            errors.append(f"{key[0]} {key[2][0]} ran {len(cfgs)} times in {key[1]}-*: {sorted(cfgs)}")
        if any(k[0] == key[0] and k[2] == key[2] for k in per_version):
            errors.append(f"{key[0]} {key[2][0]} ran in per-Python configurations too")
    # Wheel sets with settings of their own (examples/jax_rocm_plugin: C++17,
    # JAX's Python versions) have per-Python configurations of their own:
    # configurations that ran a common action form one set, in which every
    # action must run once per version.
    sets = wheel_sets(per_version)
    for key, cfgs, in_set in sets:
        got = sorted(version_of[c] for c in cfgs)
        if sorted(cfgs) != sorted(in_set) or len(set(got)) != len(got):
            want = sorted(version_of[c] for c in in_set)
            errors.append(f"{key[0]} {key[2][0]} ran for Python {got}, its wheel set's versions are {want}")
    # The known Python-independent work must be among them (a renamed target
    # must not make this test vacuous).
    names = [o for (_, _, outs) in independent for o in outs]
    for needle in needles:
        if not any(needle in n for n in names):
            errors.append(f"no Python-independent action produced {needle}")
    mnemonics = {m for (m, _, _) in independent}
    for needle in mnemonics_wanted:
        if needle not in mnemonics:
            errors.append(f"no Python-independent {needle} action")
    if errors:
        sys.exit("FAIL:\n  " + "\n  ".join(errors))
    n_dep = sum(len(c) for c in per_version.values())
    n_sets = len({tuple(sorted(in_set)) for _, _, in_set in sets})
    by_mnemonic = collections.Counter(m for (m, _, _) in independent)
    print(
        f"ok: {len(independent)} Python-independent actions, each once "
        f"({', '.join(f'{n} {m}' for m, n in sorted(by_mnemonic.items()))}); "
        f"{n_dep} per-Python actions, each once per version of its wheel set ({n_sets} sets, "
        f"{len(per_python)} per-Python configurations)"
    )


def wheel_sets(per_version):
    """(key, configurations, configurations of its set) per per-Python action:
    configurations sharing an action are in one set (union-find)."""
    parent = {}

    def root(c):
        while parent.setdefault(c, c) != c:
            c = parent[c]
        return c

    for cfgs in per_version.values():
        for c in cfgs[1:]:
            parent[root(c)] = root(cfgs[0])
    members = collections.defaultdict(list)
    for c in list(parent):
        members[root(c)].append(c)
    return [(key, cfgs, members[root(cfgs[0])]) for key, cfgs in sorted(per_version.items())]


main()
