"""The checked-in crate BUILD files (tools/3rdparty/crates) match the Cargo workspace.

crate_universe rendered them from tools/Cargo.lock and the members'
Cargo.toml files (`bazel run //tools/3rdparty:crates_vendor`); nothing
re-renders them at build time, so an edit to either input that is not
followed by a new render would build the tool from stale dependencies.
Checked here, from the files alone:
  1. the crates fetched (crates.bzl's http_archives: name, version, sha256)
     are exactly Cargo.lock's crates.io packages (name, version, checksum);
  2. each member's third-party dependencies, per kind (normal, dev, build,
     proc-macro), are the ones its Cargo.toml declares, at the version
     Cargo.lock resolves for it, for every platform or only under a
     platform condition as the manifest's [target.'cfg(...)'] tables say;
  3. each crate's rendered crate_features hold every feature a manifest asks
     of it;
  4. the declarations (features, default features, optional, platform) are
     the ones the files were rendered from: cargo_bazel.sh records them in
     tools/3rdparty/declared.json after each render, so a feature dropped or default
     features turned off, which (3) cannot see (another crate may ask for
     the same), is reported.
A negative control runs the same comparison on altered inputs (a bumped
version, a dependency added, a feature added and one dropped, default
features turned off, a dependency made platform-specific) and must find
each difference.

    python3 vendored_crates_test.py TOOLS_DIR VENDOR_DIR
    python3 vendored_crates_test.py --record TOOLS_DIR VENDOR_DIR   # after a render
"""

import json
import re
import sys
import tomllib
from pathlib import Path

FIX = "re-render them: bazel run //tools/3rdparty:crates_vendor"
CRATES_IO = "registry+https://github.com/rust-lang/crates.io-index"


def lock_packages(lock):
    """{(name, version): checksum} of the crates.io packages, and every package by name."""
    registry, by_name = {}, {}
    for p in lock["package"]:
        by_name.setdefault(p["name"], []).append(p)
        if p.get("source") == CRATES_IO:
            registry[(p["name"], p["version"])] = p["checksum"]
    return registry, by_name


def block(text, name):
    """The dict literal assigned to `name` in a generated .bzl file."""
    start = text.index(name + " = {") + len(name) + 3
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start : i + 1]
    raise ValueError("unbalanced " + name)


def vendored_archives(defs_bzl):
    """{(name, version): sha256} of the http_archives crate_repositories() declares."""
    found = {}
    for m in re.finditer(r'sha256 = "([0-9a-f]{64})",.*?urls = \["[^"]*/crates/([^/"]+)/([^/"]+)/download"\]', defs_bzl, re.S):
        found[(m.group(2), m.group(3))] = m.group(1)
    return found


def vendored_deps(defs_bzl):
    """{kind: {member: {crate: version}}} from defs.bzl's dependency tables."""
    tables = {
        "normal": "_NORMAL_DEPENDENCIES",
        "dev": "_NORMAL_DEV_DEPENDENCIES",
        "proc_macro": "_PROC_MACRO_DEPENDENCIES",
        "proc_macro_dev": "_PROC_MACRO_DEV_DEPENDENCIES",
        "build": "_BUILD_DEPENDENCIES",
        "build_proc_macro": "_BUILD_PROC_MACRO_DEPENDENCIES",
    }
    out = {}
    for kind, table in tables.items():
        literal = block(defs_bzl, table)
        # Starlark dict literals of strings and Label("@repo//:crate-version").
        data = eval(literal, {"Label": str, "_COMMON_CONDITION": ""})  # noqa: S307 (checked-in file)
        out[kind] = {
            member: {
                # @rocm_wheel_crates__<crate>-<version>//:<target>; the
                # platform condition "" is every platform's.
                crate: (label.split("//")[0].split("__", 1)[1][len(crate) + 1 :], condition != "")
                for condition, by_condition in conditions.items()
                for crate, label in by_condition.items()
            }
            for member, conditions in data.items()
        }
    return out


def vendored_features(vendor):
    """{(crate, version): set of crate_features} from the rendered BUILD files."""
    out = {}
    for build in vendor.glob("BUILD.*.bazel"):
        text = build.read_text()
        version = re.search(r'^    version = "([^"]+)",', text, re.M)
        if not version:
            continue
        crate = build.name[len("BUILD.") : -len("-" + version.group(1) + ".bazel")]
        features = set()
        # Each target's crate_features value, up to the next attribute; the
        # quoted strings that are not labels (a select's keys) are features.
        for m in re.finditer(r"^    crate_features = (.*?)(?=^    [a-z_]+ = |^\))", text, re.M | re.S):
            features |= {f for f in re.findall(r'"([^"]+)"', m.group(1)) if "//" not in f and ":" not in f}
        out[(crate, version.group(1))] = features
    return out


def declared_deps(tools, member_dirs, lock_by_name):
    """{member: {section: {crate: Dep}}} of third-party deps in the manifests.

    A Dep is a dict: version (Cargo.lock's), optional, features (sorted),
    default (default features kept), platform (the cfg of a [target] table,
    or None).
    """
    workspace = tomllib.loads((tools / "Cargo.toml").read_text())["workspace"]["dependencies"]
    out = {}
    for rel in member_dirs:
        manifest = tomllib.loads((tools / rel / "Cargo.toml").read_text())
        name = manifest["package"]["name"]
        locked = {p["name"]: p for p in lock_by_name[name]}[name]
        # Cargo.lock names each dependency "name" or, when ambiguous, "name version".
        resolved = {}
        for d in locked.get("dependencies", []):
            dep, _, version = d.partition(" ")
            resolved[dep] = version or lock_by_name[dep][0]["version"]
        tables = [(None, manifest)] + sorted(manifest.get("target", {}).items())
        sections = {}
        for section in ("dependencies", "dev-dependencies", "build-dependencies"):
            deps = {}
            for platform, table in tables:
                for key, spec in table.get(section, {}).items():
                    spec = spec if isinstance(spec, dict) else {"version": spec}
                    if spec.get("workspace"):
                        base = workspace[key] if isinstance(workspace[key], dict) else {}
                        # A member's `features` add to the workspace's.
                        spec = {**base, **spec, "features": base.get("features", []) + spec.get("features", [])}
                    if "path" in spec:
                        continue
                    deps[spec.get("package", key)] = {
                        "version": resolved.get(spec.get("package", key)),
                        "optional": spec.get("optional", False),
                        "features": sorted(set(spec.get("features", []))),
                        "default": spec.get("default-features", True),
                        "platform": platform,
                    }
            sections[section] = deps
        out["tools/" + rel] = sections
    return out


def compare(tools, vendor, lock_text=None, manifests=None):
    """Every difference between the workspace and the vendored files, as messages."""
    recorded = json.loads((vendor.parent / "declared.json").read_text()) if (vendor.parent / "declared.json").is_file() else None
    lock = tomllib.loads(lock_text if lock_text is not None else (tools / "Cargo.lock").read_text())
    registry, by_name = lock_packages(lock)
    problems = []
    archives = vendored_archives((vendor / "defs.bzl").read_text())
    for key in sorted(registry.keys() - archives.keys()):
        problems.append("Cargo.lock has {} {}, the vendored files do not".format(*key))
    for key in sorted(archives.keys() - registry.keys()):
        problems.append("the vendored files fetch {} {}, Cargo.lock does not have it".format(*key))
    for key in sorted(registry.keys() & archives.keys()):
        if registry[key] != archives[key]:
            problems.append("{} {}: sha256 {} in the vendored files, checksum {} in Cargo.lock".format(*key, archives[key], registry[key]))

    members = tomllib.loads((tools / "Cargo.toml").read_text())["workspace"]["members"]
    declared = manifests if manifests is not None else declared_deps(tools, members, by_name)
    vendored = vendored_deps((vendor / "defs.bzl").read_text())
    kinds = {
        "dependencies": ("normal", "proc_macro"),
        "dev-dependencies": ("dev", "proc_macro_dev"),
        "build-dependencies": ("build", "build_proc_macro"),
    }
    for member, sections in sorted(declared.items()):
        seen = set()
        for section, deps in sections.items():
            # crate_universe lists a crate once per member, under the first
            # kind that has it (a dev-dependency that is also a dependency
            # is only a dependency).
            deps = {c: v for c, v in deps.items() if c not in seen}
            seen |= deps.keys()
            have = {}
            for kind in kinds[section]:
                have |= vendored[kind].get(member, {})
            for crate, dep in sorted(deps.items()):
                # Optional dependencies are in the tables when a feature the
                # workspace enables turns them on; required ones always.
                if crate not in have:
                    if not dep["optional"]:
                        problems.append("{}: [{}] {} is not in the vendored files".format(member, section, crate))
                    continue
                version, conditional = have[crate]
                if dep["version"] and version != dep["version"]:
                    problems.append("{}: {} {} in the vendored files, Cargo.lock resolves {}".format(member, crate, version, dep["version"]))
                if conditional != (dep["platform"] is not None):
                    problems.append("{}: {} is {} in the vendored files, {} in its Cargo.toml".format(
                        member, crate, *(("platform-specific", "for every platform") if conditional else ("for every platform", "platform-specific"))))
            for crate in sorted(have.keys() - deps.keys()):
                problems.append("{}: the vendored files give it {} ({}), its Cargo.toml does not".format(member, crate, section))
    problems += compare_features(declared, vendored_features(vendor), recorded)
    return problems, declared, lock


def compare_features(declared, rendered, recorded):
    """Features asked of each crate against its rendered crate_features, and
    the declarations against those recorded at the last render."""
    problems = []
    asked = {}
    for member, sections in declared.items():
        for deps in sections.values():
            for crate, dep in deps.items():
                if dep["version"]:
                    asked.setdefault((crate, dep["version"]), set()).update(dep["features"])
    for (crate, version), features in sorted(asked.items()):
        have = rendered.get((crate, version))
        if have is None:
            problems.append("{} {}: no rendered BUILD.{}-{}.bazel".format(crate, version, crate, version))
            continue
        for f in sorted(features - have):
            problems.append("{} {}: a manifest asks for feature {}, the rendered crate_features lack it".format(crate, version, f))
    if recorded is not None and recorded != declared:
        for member in sorted(set(recorded) | set(declared)):
            for section in ("dependencies", "dev-dependencies", "build-dependencies"):
                was = recorded.get(member, {}).get(section, {})
                now = declared.get(member, {}).get(section, {})
                for crate in sorted(set(was) | set(now)):
                    if was.get(crate) != now.get(crate):
                        problems.append("{}: [{}] {} is declared {}, the files were rendered from {}".format(
                            member, section, crate, json.dumps(now.get(crate), sort_keys=True), json.dumps(was.get(crate), sort_keys=True)))
    return problems


def main():
    if sys.argv[1] == "--record":
        tools, vendor = Path(sys.argv[2]), Path(sys.argv[3])
        lock = tomllib.loads((tools / "Cargo.lock").read_text())
        members = tomllib.loads((tools / "Cargo.toml").read_text())["workspace"]["members"]
        declared = declared_deps(tools, members, lock_packages(lock)[1])
        (vendor.parent / "declared.json").write_text(json.dumps(declared, indent=1, sort_keys=True) + "\n")
        return 0
    tools, vendor = Path(sys.argv[1]), Path(sys.argv[2])
    if not (vendor.parent / "declared.json").is_file():
        print("{}/declared.json is missing: {}".format(vendor.parent, FIX), file=sys.stderr)
        return 1
    problems, declared, lock = compare(tools, vendor)
    if problems:
        print("tools/3rdparty/crates is stale:\n  " + "\n  ".join(problems) + "\n" + FIX, file=sys.stderr)
        return 1
    n = sum(1 for p in lock["package"] if p.get("source") == CRATES_IO)
    print("ok: {} crates and the dependencies of {} members match Cargo.lock and the manifests".format(n, len(declared)))

    # Negative controls: the same comparison must see an edit to each input.
    text = (tools / "Cargo.lock").read_text()
    first = next(p for p in lock["package"] if p.get("source") == CRATES_IO)
    bumped = text.replace('name = "{}"\nversion = "{}"'.format(first["name"], first["version"]),
                          'name = "{}"\nversion = "{}.1"'.format(first["name"], first["version"]), 1)
    assert bumped != text, "control: could not bump {} in Cargo.lock".format(first["name"])
    found, _, _ = compare(tools, vendor, lock_text=bumped)
    assert any(first["name"] in p for p in found), "control: a bumped {} in Cargo.lock went unnoticed".format(first["name"])
    member = sorted(declared)[0]
    added = {m: {s: dict(d) for s, d in sections.items()} for m, sections in declared.items()}
    added[member]["dependencies"]["not-a-vendored-crate"] = {"version": "1.0.0", "optional": False, "features": [], "default": True, "platform": None}
    found, _, _ = compare(tools, vendor, manifests=added)
    assert any("not-a-vendored-crate" in p for p in found), "control: a new dependency in {} went unnoticed".format(member)
    edits = {
        "a feature added": lambda d: d["features"].append("not-a-feature"),
        "a feature dropped": lambda d: d["features"].pop(),
        "default features turned off": lambda d: d.update(default=False),
        "a dependency made platform-specific": lambda d: d.update(platform="cfg(unix)"),
    }
    for what, edit in edits.items():
        # The first normal dependency that asks for a feature and keeps defaults.
        altered = json.loads(json.dumps(declared))
        member, crate = next((m, c) for m, s in sorted(altered.items()) for c, d in sorted(s["dependencies"].items())
                             if d["features"] and d["default"])
        edit(altered[member]["dependencies"][crate])
        found, _, _ = compare(tools, vendor, manifests=altered)
        assert any(crate in p for p in found), "control: {} ({} of {}) went unnoticed".format(what, crate, member)
    print("ok: controls: a bumped {} in Cargo.lock, a new dependency, {} are each reported".format(first["name"], ", ".join(edits)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
