"""Analysis tests of --//:hip_device_code=kpack: what hip_library does instead of bundling.

Per source: no offload bundle; one `rocm-wheel kpack marker` naming the
source's archive key; the host object's .hip_fatbin renamed .rocm_kpack_ref
around the marker and its wrapper replaced; HipInfo.kpack_kernels naming
each device compile's output once per target under that key. Per wheel set:
python_wheels gives each kpack host wheel the extras of the device wheels
of the level asked for, and lists the host wheel only with them; with
--//:wheel_variants also its variant wheel, made from the host with its
extras and pulling the same device wheels; the flag is refused without kpack.
"""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")

# buildifier: disable=bzl-visibility
load("//rules/private:providers.bzl", "HipInfo")

# buildifier: disable=bzl-visibility
load("//rules/private/settings:flags.bzl", "DEVICE_WHEEL_LEVEL_FLAG", "GFX_FLAG", "HIP_COMPRESSION_FLAG", "HIP_DEVICE_CODE_FLAG", "PYTHON_VERSIONS_FLAG", "ROCM_LOCAL_VERSION_FLAG", "WHEEL_VARIANTS_FLAG")
load(":failure_test.bzl", "failure_test")
load(":hip_test.bzl", "HipActionsInfo", "hip_actions_aspect")

def _arg_after(argv, flag):
    return [argv[i + 1] for i in range(len(argv) - 1) if argv[i] == flag]

def _kpack_library_test_impl(ctx):
    env = analysistest.begin(ctx)
    target = analysistest.target_under_test(env)
    actions = target[HipActionsInfo].actions
    by = {}
    for a in actions:
        by.setdefault(a.mnemonic, []).append(a)
    asserts.equals(env, [], by.get("HipBundle", []), "no offload bundle in a kpack build")
    asserts.equals(env, [], target[HipInfo].bundles)
    markers = by.get("HipKpackMarker", [])
    names = sorted([n for a in markers for n in _arg_after(a.argv, "--kernel-name")])
    asserts.equals(env, sorted(ctx.attr.want_names), names, "marker kernel names")
    for a in markers:
        paths = _arg_after(a.argv, "--search-path")
        asserts.equals(env, [".kpack/@GFXARCH@.kpack", "../.kpack/@GFXARCH@.kpack", "../../.kpack/@GFXARCH@.kpack", "../../../.kpack/@GFXARCH@.kpack"], paths)
    embeds = by.get("HipEmbed", [])
    asserts.equals(env, len(ctx.attr.want_names), len(embeds), "one embed per source")
    for a in embeds:
        asserts.equals(env, [".hip_fatbin=.rocm_kpack_ref"], _arg_after(a.argv, "--rename-section"), " ".join(a.argv))
        updates = _arg_after(a.argv, "--update-section")
        asserts.true(env, [u for u in updates if u.startswith(".hip_fatbin=") and u.endswith(".kpackref")] != [], " ".join(a.argv))
        asserts.true(env, [u for u in updates if u.startswith(".hipFatBinSegment=") and u.endswith(".hipk")] != [], " ".join(a.argv))

    # Every device compile's output under its source's key, once per target.
    compiled = sorted([o.path for a in by.get("HipDeviceCompile", []) for o in a.outputs.to_list()])
    kernels = target[HipInfo].kpack_kernels
    asserts.equals(env, compiled, sorted([k.object.path for k in kernels]))
    asserts.equals(
        env,
        sorted(["{}#0 {}".format(n, t) for n in ctx.attr.want_names for t in ctx.attr.want_targets]),
        sorted(["{} {}".format(k.key, k.target) for k in kernels]),
    )
    return analysistest.end(env)

kpack_library_test = analysistest.make(
    _kpack_library_test_impl,
    attrs = {
        "want_names": attr.string_list(doc = "The archive keys (without #0), one per source."),
        "want_targets": attr.string_list(doc = "The gfx targets of the device compiles."),
    },
    config_settings = {GFX_FLAG: "gfx120X-all", HIP_DEVICE_CODE_FLAG: "kpack"},
    extra_target_under_test_aspects = [hip_actions_aspect],
)

def _name(f):
    return f.basename.split("-")[0]

def _kpack_extras_test_impl(ctx):
    env = analysistest.begin(ctx)
    target = analysistest.target_under_test(env)
    extras = [a for a in analysistest.target_actions(env) if a.mnemonic == "RocmWheelDeviceExtras"]
    got = {}
    for a in extras:
        (out,) = a.outputs.to_list()
        devices = sorted([p.rpartition("/")[2].split("-")[0] for p in _arg_after(a.argv, "--device-wheel")])
        got[_name(out)] = devices
        host = [f for f in a.inputs.to_list() if f.basename == out.basename]
        asserts.equals(env, 1, len(host), "the extras action reads the host wheel as built: " + " ".join(a.argv))
    asserts.equals(env, ctx.attr.want, got, "host wheel -> the device wheels its extras name")

    # The set lists each host wheel once, with its extras, never as built.
    outputs = {o.path: True for a in extras for o in a.outputs.to_list()}
    for f in target[DefaultInfo].files.to_list():
        if _name(f) in ctx.attr.want:
            asserts.true(env, f.path in outputs, "{} is listed without its extras".format(f.short_path))
    return analysistest.end(env)

def _extras_test(level):
    return analysistest.make(
        _kpack_extras_test_impl,
        attrs = {"want": attr.string_list_dict(doc = "Host wheel name (file-name form) -> its device wheels' names.")},
        config_settings = {
            GFX_FLAG: "gfx120X-all",
            HIP_DEVICE_CODE_FLAG: "kpack",
            DEVICE_WHEEL_LEVEL_FLAG: level,
            PYTHON_VERSIONS_FLAG: "3.12",
        },
    )

kpack_extras_target_test = _extras_test("target")
kpack_extras_sub_family_test = _extras_test("sub_family")
kpack_extras_family_test = _extras_test("family")

def _kpack_variants_test_impl(ctx):
    env = analysistest.begin(ctx)
    target = analysistest.target_under_test(env)
    actions = analysistest.target_actions(env)
    extras = {o.path: o for a in actions if a.mnemonic == "RocmWheelDeviceExtras" for o in a.outputs.to_list()}
    got = {}
    for a in [a for a in actions if a.mnemonic == "RocmWheelVariant"]:
        (out,) = a.outputs.to_list()
        asserts.equals(env, "rocm", _arg_after(a.argv, "--label")[0])
        (host,) = [f for f in a.inputs.to_list() if f.path in extras]
        asserts.equals(env, host.basename[:-len(".whl")] + "-rocm.whl", out.basename, "the host's name with the label")
        got[_name(out)] = sorted([p.rpartition("/")[2].split("-")[0] for p in _arg_after(a.argv, "--device-wheel")])
    asserts.equals(env, ctx.attr.want, got, "variant wheel -> the device wheels it pulls")
    listed = [f.basename for f in target[DefaultInfo].files.to_list() if f.basename.endswith("-rocm.whl")]
    asserts.equals(env, len(ctx.attr.want), len(listed), "the set lists each variant wheel: {}".format(listed))
    return analysistest.end(env)

kpack_variants_test = analysistest.make(
    _kpack_variants_test_impl,
    attrs = {"want": attr.string_list_dict(doc = "Variant wheel name (file-name form) -> its device wheels' names.")},
    config_settings = {
        GFX_FLAG: "gfx120X-all",
        HIP_DEVICE_CODE_FLAG: "kpack",
        PYTHON_VERSIONS_FLAG: "3.12",
        WHEEL_VARIANTS_FLAG: True,
    },
)

def _kpack_local_version_test_impl(ctx):
    env = analysistest.begin(ctx)
    target = analysistest.target_under_test(env)
    wheels = [f.basename for f in target[DefaultInfo].files.to_list() if f.basename.endswith(".whl")]
    versions = {w.split("-")[1]: True for w in wheels}
    asserts.equals(env, 1, len(versions), "one version for the host and its device wheels: {}".format(wheels))
    version = versions.keys()[0]
    asserts.true(env, version.startswith(ctx.attr.version + "+rocm"), "{} is not {}+rocm<release>".format(version, ctx.attr.version))
    asserts.true(env, len([w for w in wheels if "_device_" in w]) == 2, "two device wheels among {}".format(wheels))

    # The device wheels pin the host at that version (their manifests).
    manifests = [a for a in analysistest.target_actions(env) if a.mnemonic == "FileWrite" and a.outputs.to_list()[0].path.endswith(".wheel.json") and "/_kpack/" in a.outputs.to_list()[0].path]
    asserts.equals(env, 2, len(manifests))
    for m in manifests:
        asserts.true(env, "==" + version in m.content, "a device wheel's manifest pins the host at " + version)
    return analysistest.end(env)

kpack_local_version_test = analysistest.make(
    _kpack_local_version_test_impl,
    attrs = {"version": attr.string()},
    config_settings = {GFX_FLAG: "gfx120X-all", HIP_DEVICE_CODE_FLAG: "kpack", ROCM_LOCAL_VERSION_FLAG: True},
)

kpack_variants_fat_test = failure_test({WHEEL_VARIANTS_FLAG: True})
kpack_zlib_test = failure_test({HIP_DEVICE_CODE_FLAG: "kpack", HIP_COMPRESSION_FLAG: "zlib"})
kpack_bogus_test = failure_test({HIP_DEVICE_CODE_FLAG: "thin"})
kpack_family_wheels_test = failure_test({HIP_DEVICE_CODE_FLAG: "kpack"})
kpack_level_bogus_test = failure_test({DEVICE_WHEEL_LEVEL_FLAG: "gfx12"})

# The default --//:gfx's device wheels per example host wheel, at target level:
# what the extras and the variant wheels both pull.
_TARGET_LEVEL_DEVICE_WHEELS = {
    "example_rocm7_pjrt": ["example_rocm7_pjrt_device_gfx1200", "example_rocm7_pjrt_device_gfx1201"],
    "example_rocm_plugin": ["amd_example_rocm_plugin_device_gfx1200", "amd_example_rocm_plugin_device_gfx1201"],
}

def kpack_analysis_tests(name):
    """The kpack analysis tests, and a test_suite `name` of them all."""
    kpack_library_test(
        name = name + "_library",
        size = "small",
        target_under_test = "//tests/analysis/hip_basename:mixed",
        want_names = [
            "//tests/analysis/hip_basename:mixed/a/k.hip",
            "//tests/analysis/hip_basename:mixed///tests/analysis/hip_other_pkg/a/k.hip",
        ],
        want_targets = ["gfx1200", "gfx1201"],
    )
    kpack_zlib_test(
        name = name + "_zlib",
        size = "small",
        target_under_test = "//tests/analysis/hip_basename:mixed",
        messages = ["hip_bundle_compression=zlib with --//:hip_device_code=kpack", "zstd frames"],
    )
    kpack_bogus_test(
        name = name + "_bogus",
        size = "small",
        target_under_test = "//:hip_device_code",
        messages = ["hip_device_code=thin: must be one of fat, kpack"],
    )
    kpack_family_wheels_test(
        name = name + "_family_wheels",
        size = "small",
        target_under_test = "//examples/pjrt:family_wheels",
        messages = ["is a kpack build", "its device wheels already come one per GPU target"],
    )
    kpack_level_bogus_test(
        name = name + "_level_bogus",
        size = "small",
        target_under_test = "//:device_wheel_level",
        messages = ["device_wheel_level=gfx12: must be one of target, sub_family, family"],
    )
    kpack_extras_target_test(
        name = name + "_extras_target",
        size = "small",
        target_under_test = "//:example_rocm_wheels",
        want = _TARGET_LEVEL_DEVICE_WHEELS,
    )
    kpack_extras_sub_family_test(
        name = name + "_extras_sub_family",
        size = "small",
        target_under_test = "//:example_rocm_wheels",
        want = {
            "example_rocm7_pjrt": ["example_rocm7_pjrt_device_gfx12_0"],
            "example_rocm_plugin": ["amd_example_rocm_plugin_device_gfx12_0"],
        },
    )
    kpack_extras_family_test(
        name = name + "_extras_family",
        size = "small",
        target_under_test = "//:example_rocm_wheels",
        want = {
            "example_rocm7_pjrt": ["example_rocm7_pjrt_device_gfx12"],
            "example_rocm_plugin": ["amd_example_rocm_plugin_device_gfx12"],
        },
    )
    kpack_variants_test(
        name = name + "_variants",
        size = "small",
        target_under_test = "//:example_rocm_wheels",
        want = _TARGET_LEVEL_DEVICE_WHEELS,
    )
    kpack_local_version_test(
        name = name + "_local_version",
        size = "small",
        target_under_test = "//examples/pjrt:wheel",
        version = "0.7.1",
    )
    kpack_variants_fat_test(
        name = name + "_variants_fat",
        size = "small",
        target_under_test = "//:wheel_variants",
        messages = ["wheel_variants: variant wheels pull per-target device wheels", "add --config=kpack"],
    )
    native.test_suite(name = name, tests = [
        name + "_library",
        name + "_zlib",
        name + "_bogus",
        name + "_family_wheels",
        name + "_level_bogus",
        name + "_extras_target",
        name + "_extras_sub_family",
        name + "_extras_family",
        name + "_variants",
        name + "_variants_fat",
        name + "_local_version",
    ])
