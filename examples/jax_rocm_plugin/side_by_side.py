"""Side-by-side check: the jax-rocm7-plugin built here against PyPI's wheel of
the same release, for one Python version (the one PyPI's wheel is for).

Runs in a venv where the built plugin and NumPy were pip-installed; argv:
minor version, PyPI's wheel (relative to $INSTALL_TEST_RUNFILES). Checks,
module by module:
- the same eight extension modules;
- each exports PyInit_<module> (nm -D);
- imported (ROCm's libraries come from the system: no GPU is needed), the
  same names in dir() and the same registrations() (the FFI targets JAX
  registers: name -> kind of value);
- for gfx1200 and gfx1201, the same kernels in the module's code objects
  (`<kernel>.kd` descriptors), read by the repository's independent oracles
  (tests/lib/bundle_targets.py, tests/outputs/hip/check_kernels.py), not by the
  rocm-wheel tool under test.
Sizes are printed for the record (docs/porting.md has the table).
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import zipfile

PACKAGE = "jax_rocm7_plugin"
TARGETS = ["gfx1200", "gfx1201"]

_IMPORT = r"""
import importlib, json, sys
if sys.argv[1]:
    sys.path.insert(0, sys.argv[1])
out = {}
for name in sys.argv[2:]:
    m = importlib.import_module("jax_rocm7_plugin." + name)
    regs = m.registrations() if hasattr(m, "registrations") else None
    def kind(v):
        if isinstance(v, (list, tuple)):
            return [kind(x) for x in v]
        if isinstance(v, dict):
            return {str(k): kind(x) for k, x in v.items()}
        return v if isinstance(v, (str, int, bool)) else type(v).__name__
    out[name] = {"file": m.__file__, "dir": sorted(dir(m)), "registrations": kind(regs)}
print(json.dumps(out))
"""


def runfile(rel):
    return os.path.join(os.environ["INSTALL_TEST_RUNFILES"], rel)


sys.path[:0] = [runfile("tests/lib"), runfile("tests/outputs/hip"), runfile("examples/jax_rocm_plugin")]
import bundle_targets  # noqa: E402
import check_kernels  # noqa: E402
from check_plugin import dynamic_exports  # noqa: E402


def modules_in(pkg_dir):
    return {f.split(".")[0]: os.path.join(pkg_dir, f) for f in os.listdir(pkg_dir) if f.endswith(".so")}


def imported(path, names):
    out = subprocess.run(
        [sys.executable, "-I", "-c", _IMPORT, path] + sorted(names), capture_output=True, text=True
    )
    assert out.returncode == 0, f"importing {names} from {path or 'site-packages'} failed:\n{out.stderr}"
    return json.loads(out.stdout)


def kernels(so, tmp):
    """gfx target -> kernel symbols (`<kernel>.kd` descriptors) of the code objects in `so`'s bundles."""
    found = {}
    for bundle in bundle_targets.code_objects_in_section(bundle_targets.hip_fatbin(so, tmp)):
        for target, code_object in bundle.items():
            syms = check_kernels.defined_symbols(code_object)
            found.setdefault(target, set()).update(n[: -len(".kd")] for n in syms if n.endswith(".kd"))
    return found


def demangle(names):
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
        return out.stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return list(names)


def main():
    python, pypi_wheel = sys.argv[1], runfile(sys.argv[2])
    tmp = tempfile.mkdtemp()
    pypi_root = os.path.join(tmp, "pypi")
    with zipfile.ZipFile(pypi_wheel) as z:
        z.extractall(pypi_root)
    our_dir = importlib.util.find_spec(PACKAGE).submodule_search_locations[0]
    our_mods, pypi_mods = modules_in(our_dir), modules_in(os.path.join(pypi_root, PACKAGE))
    assert set(our_mods) == set(pypi_mods), f"modules: ours {sorted(our_mods)}, PyPI's {sorted(pypi_mods)}"
    names = sorted(our_mods)
    for name in names:
        for side, mods in (("ours", our_mods), ("PyPI's", pypi_mods)):
            assert "PyInit_" + name in dynamic_exports(mods[name]), f"{side} {name} does not export PyInit_{name}"

    mine, theirs = imported("", names), imported(pypi_root, names)
    failures = []
    total = dict.fromkeys(TARGETS, 0)  # PyPI's kernels per target: the comparison is not of two empty sets
    for name in names:
        assert mine[name]["file"].startswith(our_dir), mine[name]["file"]
        assert theirs[name]["file"].startswith(pypi_root), theirs[name]["file"]
        for key in ("dir", "registrations"):
            if mine[name][key] != theirs[name][key]:
                failures.append(f"{name} {key}: ours {mine[name][key]}\n  PyPI's {theirs[name][key]}")
        ours_k, pypi_k = kernels(our_mods[name], tmp), kernels(pypi_mods[name], tmp)
        for target in TARGETS:
            a, b = ours_k.get(target, set()), pypi_k.get(target, set())
            if a != b:
                failures.append(
                    f"{name} {target} kernels: only ours {demangle(sorted(a - b))}, only PyPI's {demangle(sorted(b - a))}"
                )
        for target in TARGETS:
            total[target] += len(pypi_k.get(target, ()))
        counts = ", ".join(f"{t} {len(ours_k.get(t, ()))}" for t in TARGETS)
        regs = mine[name]["registrations"]
        print(
            f"{name}: {len(mine[name]['dir'])} names, {len(regs) if regs else 0} registrations, kernels {counts}; "
            f"size ours {os.path.getsize(our_mods[name])} B, PyPI's {os.path.getsize(pypi_mods[name])} B"
        )
    assert all(total.values()), f"PyPI's modules hold no kernels for some of {TARGETS}: {total}"
    assert not failures, "differs from PyPI's wheel:\n" + "\n".join(failures)
    print(f"ok: Python {python}: {len(names)} modules as in PyPI's wheel")


if __name__ == "__main__":
    main()
