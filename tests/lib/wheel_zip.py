"""A wheel written with zipfile alone, as other tools write theirs (AMD's
splitter, TheRock's packaging): the stand-ins of tests/lib/pip_sdk.py and
tests/host/kpack/amd_split_set.py, so that our own writer is not what our
tools are checked against."""

import base64
import hashlib
import zipfile


def write_wheel(out, dist, version, tag, requires, files, extras=(), generator="test", metadata_version="2.4"):
    """Writes `<dist>-<version>-<tag>.whl` into `out` (a pathlib.Path): `files`
    ({member: bytes}), METADATA with `extras` and `requires`, WHEEL, RECORD.
    Returns its path."""
    stem = "%s-%s" % (dist.replace("-", "_"), version)
    metadata = "Metadata-Version: %s\nName: %s\nVersion: %s\n" % (metadata_version, dist, version)
    metadata += "".join("Provides-Extra: %s\n" % e for e in extras)
    metadata += "".join("Requires-Dist: %s\n" % r for r in requires)
    members = dict(files)
    members["%s.dist-info/METADATA" % stem] = metadata.encode()
    members["%s.dist-info/WHEEL" % stem] = (
        "Wheel-Version: 1.0\nGenerator: %s\nRoot-Is-Purelib: false\nTag: %s\n" % (generator, tag)
    ).encode()
    record = []
    for name, data in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (name, digest, len(data)))
    record.append("%s.dist-info/RECORD,," % stem)
    members["%s.dist-info/RECORD" % stem] = ("\n".join(record) + "\n").encode()
    path = out / ("%s-%s.whl" % (stem, tag))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path
