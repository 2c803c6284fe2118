#!/usr/bin/env python3
"""Compares two Bazel builds of the same targets: remote-cache hit rate and
output bytes. Used by tests/e2e/clean_builds_test.sh.

Each build is described by the files Bazel wrote for it:
  --execution_log_json_file  every spawn: key material (argv, env, input
                             digests), outputs with digests, cache hit or not
  --build_event_json_file    the top-level output files (the wheels), which
                             `record` hashes in the execution root right
                             after the build

`compare` (the check) fails when
  - the candidate's remote-cache hit rate over its cacheable spawns is below
    --min-hit-rate (each miss is explained by diffing it against the spawn of
    the reference build that lists the same outputs: argv, env, inputs);
  - a spawn output present in both builds has different bytes (a local
    rebuild that differs from the reference is non-hermetic or
    non-deterministic; the mnemonic and path say which action);
  - the top-level outputs differ in name set or sha256;
  - there is nothing to compare (no cacheable spawn ran, no top-level file),
    so a warm local cache cannot make the check pass vacuously;
  - with --require-exec-property, a spawn lacks that platform property (its
    exec platform is not the one under test);
  - with --require-runner, a spawn ran elsewhere (e.g. `remote`: none ran
    locally, none was a mere cache hit); --runner-for MNEMONIC=RUNNER names
    another runner for one mnemonic's spawns, which must then be there.

Standard library only: no dependency beyond the interpreter.
"""

import argparse
import hashlib
import json
import os
import sys
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from exec_log import read_spawns  # noqa: E402


def read_bep_files(path):
    """{root-relative name: (execroot-relative path, digest or None)} of the
    top-level outputs listed in a --build_event_json_file."""
    files = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            event = json.loads(line)
            for entry in event.get("namedSetOfFiles", {}).get("files", []):
                name = entry["name"]
                rel = "/".join(entry.get("pathPrefix", []) + [name])
                digest = None
                uri = entry.get("uri", "")
                if uri.startswith("bytestream://"):
                    # bytestream://host/blobs/<sha256>/<size>: what the cache holds.
                    parts = urllib.parse.urlparse(uri).path.split("/")
                    if "blobs" in parts:
                        digest = parts[parts.index("blobs") + 1]
                files[name] = (rel, digest)
    return files


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def top_level_digests(bep, execroot, label):
    out = {}
    for name, (rel, cache_digest) in read_bep_files(bep).items():
        path = os.path.join(execroot, rel)
        if not os.path.isfile(path):
            raise SystemExit(
                f"cache_check: {label}: top-level output {rel} is not in {execroot}; "
                "build with --remote_download_outputs=all (the default)"
            )
        digest = sha256_file(path)
        if cache_digest and cache_digest != digest:
            raise SystemExit(
                f"cache_check: {label}: {rel} has sha256 {digest} on disk but "
                f"{cache_digest} in the build event log (modified after the build?)"
            )
        out[name] = digest
    return out


def is_cacheable(spawn):
    return (
        spawn.get("remotable", False)
        and spawn.get("cacheable", False)
        and spawn.get("remoteCacheable", True)
    )


def outputs_of(spawn):
    return {o["path"]: o["digest"]["hash"] for o in spawn.get("actualOutputs", []) if "digest" in o}


def key_of(spawn):
    return tuple(sorted(spawn.get("listedOutputs", [])))


def explain_miss(spawn, ref):
    """Why the candidate spawn's action key differs from the reference's."""
    if ref is None:
        return ["no spawn of the reference build lists the same outputs "
                "(output paths differ: configuration-dependent paths?)"]
    why = []
    a, b = ref.get("commandArgs", []), spawn.get("commandArgs", [])
    if a != b:
        for i in range(max(len(a), len(b))):
            x = a[i] if i < len(a) else "<none>"
            y = b[i] if i < len(b) else "<none>"
            if x != y:
                why.append(f"argv[{i}]: {x!r} -> {y!r}")
    env_a = {e["name"]: e["value"] for e in ref.get("environmentVariables", [])}
    env_b = {e["name"]: e["value"] for e in spawn.get("environmentVariables", [])}
    for k in sorted(set(env_a) | set(env_b)):
        if env_a.get(k) != env_b.get(k):
            why.append(f"env {k}: {env_a.get(k)!r} -> {env_b.get(k)!r}")
    in_a = {i["path"]: i.get("digest", {}).get("hash") for i in ref.get("inputs", [])}
    in_b = {i["path"]: i.get("digest", {}).get("hash") for i in spawn.get("inputs", [])}
    for k in sorted(set(in_a) | set(in_b)):
        if in_a.get(k) != in_b.get(k):
            if k not in in_a:
                why.append(f"input {k}: only in this build")
            elif k not in in_b:
                why.append(f"input {k}: only in the reference build")
            else:
                why.append(f"input {k}: content differs")
    if ref.get("platform") != spawn.get("platform"):
        why.append(f"platform: {ref.get('platform')} -> {spawn.get('platform')}")
    if not why:
        why.append("argv, env, inputs and platform are equal: the reference result "
                   "was not uploaded (failed, or uploads disabled)")
    return why


def record(a):
    """Hashes a build's top-level outputs right after it, before a later
    build in the same output base replaces them."""
    digests = top_level_digests(a.bep, a.execroot, a.bep)
    tmp = a.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(digests, f, indent=1, sort_keys=True)
    os.replace(tmp, a.out)
    return 0


def mnemonic_runner(text):
    """--runner-for's MNEMONIC=RUNNER, as a pair."""
    mnemonic, sep, runner = text.partition("=")
    if not (sep and mnemonic and runner):
        raise argparse.ArgumentTypeError(f"{text!r}: expected MNEMONIC=RUNNER, e.g. Rustc=processwrapper-sandbox")
    return mnemonic, runner


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("record", help="sha256 of the top-level outputs of a build, as JSON")
    r.add_argument("--bep", required=True, help="the build's --build_event_json_file")
    r.add_argument("--execroot", required=True, help="`bazel info execution_root` of the build")
    r.add_argument("--out", required=True)
    c = sub.add_parser("compare", help="the check: a build under test against a reference build")
    c.add_argument("--name", default="check", help="label for messages")
    c.add_argument("--ref-log", required=True, help="execution log of the reference build")
    c.add_argument("--ref-top", required=True, help="`record` output of the reference build")
    c.add_argument("--log", required=True, help="execution log of the build under test")
    c.add_argument("--top", required=True, help="`record` output of the build under test")
    c.add_argument("--min-hit-rate", type=float, help="e.g. 0.99: required remote-cache hit rate")
    c.add_argument("--max-hit-rate", type=float,
                   help="e.g. 0: the build must execute its spawns itself (a local rebuild)")
    c.add_argument("--require-exec-property", metavar="NAME",
                   help="every spawn must carry this exec property: its exec platform "
                        "resolved to the one that sets it (e.g. the RBE platform)")
    c.add_argument("--require-runner", metavar="RUNNER",
                   help="every spawn must have run with this runner, as the execution log "
                        "names it (e.g. remote: not locally, not a remote cache hit)")
    c.add_argument("--runner-for", metavar="MNEMONIC=RUNNER", action="append", default=[],
                   type=mnemonic_runner,
                   help="with --require-runner: this mnemonic's spawns must have run with RUNNER "
                        "instead (e.g. Rustc=processwrapper-sandbox), and there must be some")
    c.add_argument("--max-report", type=int, default=20, help="misses/diffs printed in full")
    c.add_argument("--subset", action="store_true",
                   help="the build under test built some of the reference's targets: its top-level "
                        "outputs must be among the reference's, not all of them")
    a = p.parse_args(argv)
    if a.command == "record":
        return record(a)
    return compare(a)


def check_runners(a, spawns):
    """--require-runner and --runner-for: the failures, each runner's count printed."""
    wanted = dict(a.runner_for)
    failures = []
    others = [s for s in spawns if s.get("runner") != wanted.get(s.get("mnemonic"), a.require_runner)]
    runners = {}
    for s in spawns:
        runners[s.get("runner", "?")] = runners.get(s.get("runner", "?"), 0) + 1
    print(f"[{a.name}] runners: " + ", ".join(f"{n} {r}" for r, n in sorted(runners.items())))
    for s in others[: a.max_report]:
        want = wanted.get(s.get("mnemonic"), a.require_runner)
        print(f"[{a.name}] NOT-{want.upper()} ({s.get('runner', '?')}) "
              f"{s.get('mnemonic', '?')} -> {', '.join(s.get('listedOutputs', [])[:3])}")
    if others:
        failures.append(f"{len(others)} of {len(spawns)} spawns did not run with the runner "
                        f"required of them ({a.require_runner!r}, {wanted or 'no exception'})")
    # An exception that matches nothing would let a renamed mnemonic pass unseen.
    for mnemonic in wanted:
        if not any(s.get("mnemonic") == mnemonic for s in spawns):
            failures.append(f"no {mnemonic} spawn in this build (--runner-for {mnemonic}=...)")
    return failures


def compare(a):
    ref_spawns = read_spawns(a.ref_log)
    spawns = read_spawns(a.log)
    failures = []

    # Hit rate over the spawns the remote cache could serve.
    cacheable = [s for s in spawns if is_cacheable(s)]
    hits = [s for s in cacheable if s.get("cacheHit")]
    rate = len(hits) / len(cacheable) if cacheable else 0.0
    print(f"[{a.name}] {len(spawns)} spawns, {len(cacheable)} cacheable, "
          f"{len(hits)} remote cache hits: hit rate {rate:.1%}")
    if not cacheable:
        failures.append("no cacheable spawn ran: nothing was measured (was the local action "
                        "cache warm? run `bazel clean` before the build)")
    ref_by_key = {key_of(s): s for s in ref_spawns}
    if a.min_hit_rate is not None and cacheable and rate < a.min_hit_rate:
        misses = [s for s in cacheable if not s.get("cacheHit")]
        failures.append(f"remote cache hit rate {rate:.1%} < {a.min_hit_rate:.1%} "
                        f"({len(misses)} misses)")
        for s in misses[: a.max_report]:
            outs = ", ".join(s.get("listedOutputs", [])[:3])
            print(f"[{a.name}] MISS {s.get('mnemonic', '?')} -> {outs}")
            for line in explain_miss(s, ref_by_key.get(key_of(s)))[:10]:
                print(f"[{a.name}]      {line}")
    if a.max_hit_rate is not None and cacheable and rate > a.max_hit_rate:
        failures.append(f"remote cache hit rate {rate:.1%} > {a.max_hit_rate:.1%}: "
                        "this build was meant to execute its actions itself")

    if a.require_exec_property:
        lacking = [s for s in spawns
                   if a.require_exec_property not in
                   {p.get("name") for p in s.get("platform", {}).get("properties", [])}]
        print(f"[{a.name}] {len(spawns) - len(lacking)} of {len(spawns)} spawns carry "
              f"exec property {a.require_exec_property}")
        for s in lacking[: a.max_report]:
            print(f"[{a.name}] NO-PLATFORM {s.get('mnemonic', '?')} -> "
                  f"{', '.join(s.get('listedOutputs', [])[:3])}")
        if lacking:
            failures.append(f"{len(lacking)} spawns did not resolve to the exec platform that sets "
                            f"{a.require_exec_property} (a toolchain incompatible with it?)")

    if a.require_runner:
        failures += check_runners(a, spawns)

    # Every output both builds produced must have the same bytes.
    ref_outputs = {}
    ref_mnemonic = {}
    for s in ref_spawns:
        for path, digest in outputs_of(s).items():
            ref_outputs[path] = digest
            ref_mnemonic[path] = s.get("mnemonic", "?")
    compared = 0
    diffs = []
    for s in spawns:
        for path, digest in outputs_of(s).items():
            if path in ref_outputs:
                compared += 1
                if ref_outputs[path] != digest:
                    diffs.append((s.get("mnemonic", "?"), path))
    print(f"[{a.name}] {compared} action outputs compared with the reference, {len(diffs)} differ")
    for mnemonic, path in diffs[: a.max_report]:
        print(f"[{a.name}] DIFF {mnemonic} -> {path}")
    if diffs:
        failures.append(f"{len(diffs)} action outputs differ from the reference build")

    # The top-level outputs (wheels) byte for byte.
    with open(a.ref_top, encoding="utf-8") as f:
        ref_top = json.load(f)
    with open(a.top, encoding="utf-8") as f:
        top = json.load(f)
    if not top:
        failures.append("the build reported no top-level output files")
    for name in sorted(set(ref_top) | set(top)):
        if name not in top:
            if not a.subset:
                failures.append(f"top-level output {name} is missing from this build")
        elif name not in ref_top:
            failures.append(f"top-level output {name} is not in the reference build")
        elif ref_top[name] != top[name]:
            failures.append(f"top-level output {name} differs: sha256 {ref_top[name]} -> {top[name]}")
        else:
            print(f"[{a.name}] same   {top[name]}  {name}")

    if failures:
        for f in failures:
            print(f"[{a.name}] FAIL: {f}")
        return 1
    print(f"[{a.name}] OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
