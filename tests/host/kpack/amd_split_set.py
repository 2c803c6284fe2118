"""An AMD-shaped torch split set, as rocm-kpack's wheel_splitter writes one.

    amd_split_set.py OUT --rocm-wheel RW --sdk 7.13.0a20261201 [--python 3.12] [--drop-group rccl_lib]

Writes into OUT, following the splitter's conventions (ROCm/rocm-systems
shared/kpack/python/rocm_kpack/wheel_splitter.py) and naming through
rocm-bootstrap's own device_dist_name / packaging_chain:

- the host `torch` 2.9.0+rocm<sdk> (cp312 or --python's, manylinux_2_28): two binaries in
  torch/lib whose HIPK wrappers point at markers searching
  `../.kpack/<group>_@GFXARCH@.kpack` (groups torch and rccl_lib), and
  METADATA with one `device-<target>` extra per target pulling the target's
  emitted packaging chain, and `device-all`;
- device wheels `amd-torch-device-<bundle>` at the host's version and tags,
  each pinning the host and (target bundles) `rocm-sdk-device-<target>`,
  and a target wheel its emitted parents: gfx1201 (target, whose chain's
  family wheel is emitted too), gfx12 (family: gfx1200's archives), gfx942
  (target: its xnack+ and xnack- archives, in the bare target's wheel);
- stand-ins for what the set requires from AMD's index: TheRock's `rocm`
  selector as an sdist (a PEP 517 backend of its own, no build
  dependency: its extras `libraries`, `devel`, `device-<target>`),
  rocm-sdk-core, rocm-sdk-libraries, rocm-sdk-device-<target> and
  rocm-bootstrap, empty wheels at the SDK's version.

--drop-group leaves one group's archives out of every device wheel, as
TheRock#5446 shipped rccl_lib's: the host then refers to code no wheel has.
Prints one line per file written.
"""

import argparse
import io
import pathlib
import subprocess
import sys
import tarfile
import tempfile

import rocm_bootstrap

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "lib"))
from wheel_zip import write_wheel  # noqa: E402 (tests/lib, beside this tree)

HOST = "torch"
HOST_VERSION = "2.9.0"
PREFIX = "amd-torch-device"
PLATFORM = "manylinux_2_28_x86_64"
# The host's binaries: (path, group). Each has one wrapper, code object #0.
BINARIES = [("torch/lib/libtorch_hip.so", "torch"), ("torch/lib/librccl.so", "rccl_lib")]
# Emitted bundle -> the architectures its archives are for.
DEVICE_WHEELS = {
    "gfx1201": ["gfx1201"],
    "gfx12": ["gfx1200"],
    "gfx942": ["gfx942:xnack+", "gfx942:xnack-"],
}


def wheel(out, dist, version, tag, requires, files, extras=()):
    """A wheel as the splitter writes one; prints its file name."""
    path = write_wheel(out, dist, version, tag, requires, files, extras, generator="rocm-kpack-split-python-wheels")
    print(path.name)
    return path


def host_binary(rw, scratch, path, group):
    """A shared object whose one HIPK wrapper points at a marker for `group`'s archives."""
    marker, wrapper = scratch / "marker.bin", scratch / "wrapper.bin"
    subprocess.run([rw, "kpack", "marker", "--kernel-name", path, "--search-path",
                    "../.kpack/%s_@GFXARCH@.kpack" % group, "--output", str(marker),
                    "--wrapper-output", str(wrapper)], check=True, stdout=subprocess.DEVNULL)
    (scratch / "k.s").write_text(
        '.section .rocm_kpack_ref,"a",@progbits\nkpack_marker:\n.incbin "%s"\n'
        '.section .hipFatBinSegment,"aw",@progbits\n.p2align 3\n'
        ".long 0x4B504948\n.long 1\n.quad kpack_marker\n.long 0\n.long 0\n" % marker)
    so = scratch / "k.so"
    subprocess.run(["gcc", "-shared", "-nostdlib", "-o", str(so), str(scratch / "k.s")], check=True)
    return so.read_bytes()


def archive(rw, scratch, group, arch):
    """`<group>_<arch>.kpack`: one code object per binary of the group."""
    co = scratch / "k.co"
    co.write_bytes(("%s code object for %s\n" % (group, arch)).encode())
    out = scratch / ("%s_%s.kpack" % (group, arch))
    kernels = []
    for path, g in BINARIES:
        if g == group:
            kernels += ["--kernel", "%s#0@%s=%s" % (path, arch, co)]
    subprocess.run([rw, "kpack", "archive", "--group", group, "--family", arch.split(":")[0],
                    "--target", arch, "--compression", "zstd", "--output", str(out)] + kernels,
                   check=True, stdout=subprocess.DEVNULL)
    return out.read_bytes()


def host_requires(version, sdk):
    """The splitter's _rewrite_host_metadata: an extra per target, its emitted chain."""
    emitted = set(DEVICE_WHEELS)
    targets = sorted({a.split(":")[0] for archs in DEVICE_WHEELS.values() for a in archs})
    requires = ["rocm[libraries]==%s" % sdk, "rocm-bootstrap"]
    extras = []
    for target in targets:
        extra = "device-" + target
        extras.append(extra)
        for bundle in rocm_bootstrap.packaging_chain(target):
            if bundle.key in emitted:
                dist = rocm_bootstrap.device_dist_name(PREFIX, bundle)
                requires.append('%s == %s; extra == "%s"' % (dist, version, extra))
    extras.append("device-all")
    for key in sorted(emitted):
        dist = rocm_bootstrap.device_dist_name(PREFIX, rocm_bootstrap.lookup_bundle(key))
        requires.append('%s == %s; extra == "device-all"' % (dist, version))
    return requires, extras


def device_requires(key, version, sdk):
    """A device wheel pins its host; a target wheel its SDK device package and emitted parents."""
    bundle = rocm_bootstrap.lookup_bundle(key)
    requires = ["%s == %s" % (HOST, version)]
    if bundle.level.name.lower() == "target":
        requires.append("rocm-sdk-device-%s == %s" % (key, sdk))
        for parent in rocm_bootstrap.packaging_chain(key)[1:]:
            if parent.key in DEVICE_WHEELS:
                requires.append("%s == %s" % (rocm_bootstrap.device_dist_name(PREFIX, parent), version))
    return requires


BACKEND = '''"""The stand-in selector's PEP 517 backend: no build dependency."""
import base64, hashlib, os, zipfile

NAME, VERSION = "rocm", %(version)r
REQUIRES = %(requires)r
EXTRAS = %(extras)r
STEM = "%%s-%%s" %% (NAME, VERSION)


def _metadata():
    text = "Metadata-Version: 2.1\\nName: %%s\\nVersion: %%s\\n" %% (NAME, VERSION)
    text += "".join("Provides-Extra: %%s\\n" %% e for e in EXTRAS)
    return text + "".join("Requires-Dist: %%s\\n" %% r for r in REQUIRES)


def _write(directory):
    d = os.path.join(directory, STEM + ".dist-info")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w") as f:
        f.write(_metadata())
    with open(os.path.join(d, "WHEEL"), "w") as f:
        f.write("Wheel-Version: 1.0\\nGenerator: stand-in\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
    return STEM + ".dist-info"


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _write(metadata_directory)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = STEM + "-py3-none-any.whl"
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as z:
        for member, data in (("rocm_sdk/__init__.py", ""), (STEM + ".dist-info/METADATA", _metadata()),
                             (STEM + ".dist-info/WHEEL", "Wheel-Version: 1.0\\nGenerator: stand-in\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")):
            data = data.encode()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            records.append("%%s,sha256=%%s,%%d" %% (member, digest, len(data)))
            z.writestr(member, data)
        z.writestr(STEM + ".dist-info/RECORD", "\\n".join(records + [STEM + ".dist-info/RECORD,,"]) + "\\n")
    return name
'''


def selector_sdist(out, sdk, targets):
    """TheRock's `rocm` selector: an sdist, so that its extras are evaluated at install."""
    requires = ["rocm-sdk-core==%s" % sdk, 'rocm-sdk-libraries==%s; extra == "libraries"' % sdk,
                'rocm-sdk-devel==%s; extra == "devel"' % sdk]
    extras = ["libraries", "devel"]
    for t in targets:
        extras.append("device-" + t)
        requires.append('rocm-sdk-device-%s==%s; extra == "device-%s"' % (t, sdk, t))
    files = {
        "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n\n'
                          '[project]\nname = "rocm"\nversion = "%s"\n'
                          '# As TheRock\'s: resolved when installed, by the backend.\n'
                          'dynamic = ["dependencies", "optional-dependencies"]\n' % sdk,
        "backend.py": BACKEND % {"version": sdk, "requires": requires, "extras": extras},
        "PKG-INFO": "Metadata-Version: 2.1\nName: rocm\nVersion: %s\n" % sdk,
    }
    path = out / ("rocm-%s.tar.gz" % sdk)
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo("rocm-%s/%s" % (sdk, name))
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    print(path.name)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=pathlib.Path)
    p.add_argument("--rocm-wheel", required=True)
    p.add_argument("--sdk", required=True)
    p.add_argument("--drop-group", default="")
    p.add_argument("--python", default="3.12", help="the CPython version of the host's and device wheels' tags")
    a = p.parse_args()
    cp = "cp" + a.python.replace(".", "")
    tag = "%s-%s-%s" % (cp, cp, PLATFORM)
    a.out.mkdir(parents=True, exist_ok=True)
    version = "%s+rocm%s" % (HOST_VERSION, a.sdk)
    with tempfile.TemporaryDirectory() as tmp:
        scratch = pathlib.Path(tmp)
        files = {"torch/__init__.py": b""}
        for path, group in BINARIES:
            files[path] = host_binary(a.rocm_wheel, scratch, path, group)
        requires, extras = host_requires(version, a.sdk)
        wheel(a.out, HOST, version, tag, requires, files, extras)
        groups = sorted({g for _, g in BINARIES} - {a.drop_group})
        for key, archs in DEVICE_WHEELS.items():
            archives = {"torch/.kpack/%s_%s.kpack" % (g, arch): archive(a.rocm_wheel, scratch, g, arch)
                        for arch in archs for g in groups}
            dist = rocm_bootstrap.device_dist_name(PREFIX, rocm_bootstrap.lookup_bundle(key))
            wheel(a.out, dist, version, tag, device_requires(key, version, a.sdk), archives)
    targets = sorted({arch.split(":")[0] for archs in DEVICE_WHEELS.values() for arch in archs})
    selector_sdist(a.out, a.sdk, targets)
    for dist in ["rocm-sdk-core", "rocm-sdk-libraries", "rocm-sdk-devel"]:
        wheel(a.out, dist, a.sdk, "py3-none-linux_x86_64", [], {})
    for t in targets:
        # TheRock's device packages overlay the libraries package.
        wheel(a.out, "rocm-sdk-device-" + t, a.sdk, "py3-none-linux_x86_64", ["rocm-sdk-libraries==" + a.sdk], {})
    wheel(a.out, "rocm-bootstrap", "0.3.0", "py3-none-any", [], {})


if __name__ == "__main__":
    sys.exit(main())
