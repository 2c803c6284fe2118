"""Analysis tests of hip_library: which device compiles run, what they name, where outputs go.

They read the actions of a hip_library and of its device half (in every gfx
device configuration) at analysis time; nothing is compiled.
"""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")

# buildifier: disable=bzl-visibility
load("//rules/private:providers.bzl", "HipInfo")

# buildifier: disable=bzl-visibility
load("//rules/private/data:gfx_families.bzl", "GFX_TARGETS")

# buildifier: disable=bzl-visibility
load("//rules/private/settings:flags.bzl", "GFX_FLAG", "GFX_GENERIC_FLAG", "HIP_COMPRESSION_FLAG", "HIP_COPTS_FLAG", "HIP_DEVICE_COPTS_FLAG")
load(":failure_test.bzl", "failure_test")

# Public: the sysroot tests read the same actions.
HipActionsInfo = provider(
    doc = "Test-only: the actions of a hip_library and of its device half in every device configuration.",
    fields = {"actions": "list of Action"},
)

def _hip_actions_aspect_impl(target, ctx):
    actions = list(target.actions)
    for dep in getattr(ctx.rule.attr, "device", None) or []:
        actions += dep[HipActionsInfo].actions
    return [HipActionsInfo(actions = actions)]

hip_actions_aspect = aspect(
    implementation = _hip_actions_aspect_impl,
    attr_aspects = ["device"],
)

def _actions(target, mnemonic):
    return [a for a in target[HipActionsInfo].actions if a.mnemonic == mnemonic]

def _gfx_names(arg):
    """The gfx target names in one argument ('gfx' followed by letters, digits and '-', as in gfx9-4-generic)."""
    names = []
    for i in range(len(arg) - 3):
        if arg[i:i + 3] != "gfx" or (i > 0 and arg[i - 1].isalnum()):
            continue
        end = i + 3
        for j in range(i + 3, len(arg) + 1):
            end = j
            if j == len(arg) or not (arg[j].isalnum() or arg[j] == "-"):
                break
        names.append(arg[i:end])
    return names

def _compiled_source(action):
    return action.argv[action.argv.index("-c") + 1]

def _check_device_compiles(env, target, want_targets):
    """One HipDeviceCompile per (target, source), each naming only its own target."""
    srcs = sorted([f.path for f in target[HipInfo].bundles])  # one bundle per source
    got = []
    for a in _actions(target, "HipDeviceCompile"):
        arches = [arg[len("--offload-arch="):] for arg in a.argv if arg.startswith("--offload-arch=")]
        if len(arches) != 1:
            asserts.true(env, False, "a device compile names {} --offload-arch flags: {}".format(len(arches), " ".join(a.argv)))
            continue
        named = {n: True for arg in a.argv for n in _gfx_names(arg)}
        others = [n for n in named if n != arches[0]]
        asserts.equals(env, [], others, "the {} device compile also names {}: {}".format(arches[0], others, " ".join(a.argv)))
        asserts.true(env, arches[0] in GFX_TARGETS, "unknown target {}".format(arches[0]))
        got.append("{} {}".format(arches[0], _compiled_source(a)))
    want = sorted(["{} {}".format(t, s.path) for t in want_targets for s in target[HipInfo].bundles])
    asserts.equals(env, len(srcs) * len(want_targets), len(got), "device compiles: {}".format(got))
    asserts.equals(env, sorted(want_targets), sorted({g.split(" ")[0]: True for g in got}.keys()))
    asserts.equals(env, len(want), len({g: True for g in got}), "each (target, source) compiled once: {}".format(sorted(got)))
    asserts.equals(env, want_targets, target[HipInfo].targets, "HipInfo.targets (in gfx order)")

def _device_compiles_test_impl(ctx):
    env = analysistest.begin(ctx)
    _check_device_compiles(env, analysistest.target_under_test(env), ctx.attr.want_targets)
    return analysistest.end(env)

def _device_compiles_test(config_settings):
    return analysistest.make(
        _device_compiles_test_impl,
        attrs = {"want_targets": attr.string_list(doc = "The targets --//:gfx expands to, in gfx order.")},
        config_settings = config_settings,
        extra_target_under_test_aspects = [hip_actions_aspect],
    )

device_compiles_gfx120x_test = _device_compiles_test({GFX_FLAG: "gfx120X-all"})
device_compiles_two_families_test = _device_compiles_test({GFX_FLAG: "gfx94X-dcgpu,gfx120X-all"})

# --//:gfx_generic: one device compile per generic target, gfx908 (no generic
# target covers it) on its own.
device_compiles_generic_test = _device_compiles_test({
    GFX_FLAG: "gfx908,gfx94X-dcgpu,gfx950-dcgpu,gfx120X-all",
    GFX_GENERIC_FLAG: True,
})

def _config_free(path):
    """`path` without its configuration directory (bazel-out/<config>/bin/... -> bazel-out/bin/...)."""
    if not path.startswith("bazel-out/"):
        return path
    return "bazel-out/" + path.split("/", 2)[2]

def _host_compile(target, src):
    for a in _actions(target, "HipHostCompile"):
        if _compiled_source(a) == src:
            return a
    return None

def _narrowed_test_impl(ctx):
    env = analysistest.begin(ctx)
    narrow = analysistest.target_under_test(env)  # --//:gfx=gfx1201
    wide = ctx.attr.wide  # --//:gfx=gfx1200,gfx1201 (a list: the transition is a split of one)
    wide = wide[0] if type(wide) == "list" else wide
    asserts.equals(env, ["gfx1201"], narrow[HipInfo].targets)
    asserts.equals(env, ["gfx1200", "gfx1201"], wide[HipInfo].targets)

    # The library's own configuration differs here (a test transition sets
    # --//:gfx; a top-level flag would not, tests/e2e/gfx_targets_test.sh),
    # so paths are compared without it.
    narrow_paths = [_config_free(f.path) for f in narrow[HipInfo].device_objects["gfx1201"]]
    wide_paths = [_config_free(f.path) for f in wide[HipInfo].device_objects["gfx1201"]]
    asserts.equals(
        env,
        wide_paths,
        narrow_paths,
        "gfx1201 device objects moved when the set narrowed (a recompile): under gfx1200,gfx1201 {}, under gfx1201 {}".format(wide_paths, narrow_paths),
    )
    for a in _actions(narrow, "HipDeviceCompile"):
        src = _compiled_source(a)
        others = [o for o in _actions(wide, "HipDeviceCompile") if _compiled_source(o) == src and "--offload-arch=gfx1201" in o.argv]
        asserts.equals(env, 1, len(others), "gfx1201 device compiles of {} under gfx1200,gfx1201".format(src))
        if others:
            asserts.equals(env, [_config_free(x) for x in others[0].argv], [_config_free(x) for x in a.argv], "the gfx1201 device compile of {} depends on the gfx set".format(src))

    # Host compiles may not read anything built for the gfx set.
    bundles = {f.path: True for t in (narrow, wide) for f in t[HipInfo].bundles}
    for a in _actions(narrow, "HipHostCompile"):
        src = _compiled_source(a)
        other = _host_compile(wide, src)
        asserts.true(env, other != None, "no host compile of {} under gfx1200,gfx1201".format(src))
        if other == None:
            continue
        argv = [_config_free(x) for x in a.argv]
        other_argv = [_config_free(x) for x in other.argv]
        asserts.equals(env, other_argv, argv, "the host compile of {} depends on the gfx set".format(src))
        inputs = sorted([_config_free(f.path) for f in a.inputs.to_list()])
        other_inputs = sorted([_config_free(f.path) for f in other.inputs.to_list()])
        asserts.equals(env, other_inputs, inputs, "the host compile inputs of {} depend on the gfx set".format(src))
        for f in a.inputs.to_list():
            asserts.false(env, f.path in bundles or f.path.endswith(".co"), "the host compile of {} reads device code {}".format(src, f.path))
    return analysistest.end(env)

narrowed_set_test = analysistest.make(
    _narrowed_test_impl,
    attrs = {
        "wide": attr.label(
            cfg = analysis_test_transition(settings = {GFX_FLAG: "gfx1200,gfx1201"}),
            aspects = [hip_actions_aspect],
            mandatory = True,
        ),
    },
    config_settings = {GFX_FLAG: "gfx1201"},
    extra_target_under_test_aspects = [hip_actions_aspect],
)

def _same_basename_test_impl(ctx):
    env = analysistest.begin(ctx)
    target = analysistest.target_under_test(env)
    info = target[HipInfo]
    asserts.equals(env, 2, len({f.path: True for f in info.bundles}), "bundles: {}".format(info.bundles))
    for t, objects in info.device_objects.items():
        asserts.equals(env, 2, len({f.path: True for f in objects}), "{} device objects: {}".format(t, objects))
    host = target[DefaultInfo].files.to_list()
    asserts.equals(env, 2, len({f.path: True for f in host}), "host objects: {}".format(host))
    outputs = [f.path for a in target[HipActionsInfo].actions for f in a.outputs.to_list()]
    asserts.equals(env, len(outputs), len({o: True for o in outputs}), "outputs declared twice: {}".format(sorted(outputs)))
    asserts.equals(env, ctx.attr.want_bundles, [f.short_path for f in info.bundles], "bundle names")
    return analysistest.end(env)

same_basename_test = analysistest.make(
    _same_basename_test_impl,
    attrs = {"want_bundles": attr.string_list(doc = "Short paths of the bundles, one per source.")},
    extra_target_under_test_aspects = [hip_actions_aspect],
)

def _view(action):
    """The include paths and defines of a compile, in order."""
    argv = action.argv
    view = []
    for i, a in enumerate(argv):
        if a in ("-I", "-iquote", "-isystem") and i + 1 < len(argv):
            view.append(a + " " + argv[i + 1])
        elif a.startswith("-D") or (a.startswith("-I") and len(a) > 2):
            view.append(a)
    return view

def _same_view_test_impl(ctx):
    """Host and device compiles see the same include paths, defines and headers, and those wanted."""
    env = analysistest.begin(ctx)
    target = analysistest.target_under_test(env)
    host = _actions(target, "HipHostCompile")
    device = _actions(target, "HipDeviceCompile")
    asserts.true(env, len(host) > 0 and len(device) > 0, "no compiles")
    for a in host + device:
        view = _view(a)
        for want in ctx.attr.want_flags:
            asserts.true(env, [v for v in view if want in v] != [], "{} lacks {}: {}".format(a.mnemonic, want, view))
        inputs = [f.path for f in a.inputs.to_list()]
        for want in ctx.attr.want_inputs:
            asserts.true(env, [p for p in inputs if p.endswith(want)] != [], "{} does not read {}".format(a.mnemonic, want))
        for unwanted in ctx.attr.unwanted_inputs:
            asserts.equals(env, [], [p for p in inputs if p.endswith(unwanted)], "{} reads {}".format(a.mnemonic, unwanted))
    for d in device:
        asserts.equals(env, _view(host[0]), _view(d), "device and host compiles see different include paths or defines")
        asserts.equals(
            env,
            sorted([f.path for f in host[0].inputs.to_list() if not f.path.endswith(".hipfb") and f.path != _compiled_source(host[0])]),
            sorted([f.path for f in d.inputs.to_list() if f.path != _compiled_source(d)]),
            "device and host compiles read different headers",
        )
    return analysistest.end(env)

same_view_test = analysistest.make(
    _same_view_test_impl,
    attrs = {
        "want_flags": attr.string_list(doc = "Substrings of include/define flags every compile must have."),
        "unwanted_inputs": attr.string_list(doc = "Path suffixes no compile may read."),
        "want_inputs": attr.string_list(doc = "Path suffixes every compile must read."),
    },
    extra_target_under_test_aspects = [hip_actions_aspect],
)

def _global_flags_test_impl(ctx):
    env = analysistest.begin(ctx)
    target = analysistest.target_under_test(env)
    for mnemonic, want, unwanted in (
        ("HipHostCompile", ctx.attr.host, ctx.attr.not_host),
        ("HipDeviceCompile", ctx.attr.device, ctx.attr.not_device),
    ):
        actions = _actions(target, mnemonic)
        asserts.true(env, len(actions) > 0, "no " + mnemonic)
        for a in actions:
            for f in want:
                asserts.true(env, f in a.argv, "{} lacks {}: {}".format(mnemonic, f, " ".join(a.argv)))
            for f in unwanted:
                asserts.false(env, f in a.argv, "{} has {}: {}".format(mnemonic, f, " ".join(a.argv)))
    return analysistest.end(env)

def _global_flags_test(config_settings):
    return analysistest.make(
        _global_flags_test_impl,
        attrs = {
            "device": attr.string_list(),
            "host": attr.string_list(),
            "not_device": attr.string_list(),
            "not_host": attr.string_list(),
        },
        config_settings = config_settings,
        extra_target_under_test_aspects = [hip_actions_aspect],
    )

dbg_flags_test = _global_flags_test({
    "//command_line_option:compilation_mode": "dbg",
    "//command_line_option:copt": ["-DFROM_COPT"],
    "//command_line_option:cxxopt": ["-DFROM_CXXOPT"],
    HIP_COPTS_FLAG: ["-DFROM_HIP_COPTS", "-DFROM_HIP_COPTS_2"],
    HIP_DEVICE_COPTS_FLAG: ["-DFROM_HIP_DEVICE_COPTS"],
})
opt_flags_test = _global_flags_test({"//command_line_option:compilation_mode": "opt"})

def _public_context_test_impl(ctx):
    env = analysistest.begin(ctx)
    cc = analysistest.target_under_test(env)[CcInfo].compilation_context  # buildifier: disable=native-cc-info
    for field in ("includes", "system_includes", "defines"):
        got = getattr(cc, field).to_list()
        for want in getattr(ctx.attr, field):
            asserts.true(env, [g for g in got if g.endswith(want)] != [], "CcInfo {} lacks {}: {}".format(field, want, got))
    headers = [f.path for f in cc.headers.to_list()]
    for want in ctx.attr.headers:
        asserts.true(env, [h for h in headers if h.endswith(want)] != [], "CcInfo headers lack {}: {}".format(want, headers))
    return analysistest.end(env)

public_context_test = analysistest.make(
    _public_context_test_impl,
    attrs = {
        "defines": attr.string_list(),
        "headers": attr.string_list(),
        "includes": attr.string_list(),
        "system_includes": attr.string_list(),
    },
)

gfx_unknown_family_test = failure_test({GFX_FLAG: "gfx120x-al"})
hip_copts_offload_arch_test = failure_test({HIP_COPTS_FLAG: ["--offload-arch=gfx90a"]})
bundle_compression_bogus_test = failure_test({HIP_COMPRESSION_FLAG: "bogus"})

def hip_analysis_tests(name):
    """The hip_library analysis tests, and a test_suite `name` of them all."""
    lib = "//tests/analysis/hip_basename:same_basename"
    device_compiles_gfx120x_test(
        name = name + "_device_compiles_gfx120x",
        size = "small",
        target_under_test = lib,
        want_targets = ["gfx1200", "gfx1201"],
    )
    device_compiles_two_families_test(
        name = name + "_device_compiles_two_families",
        size = "small",
        target_under_test = lib,
        want_targets = ["gfx942", "gfx1200", "gfx1201"],
    )
    device_compiles_generic_test(
        name = name + "_device_compiles_generic",
        size = "small",
        target_under_test = lib,
        want_targets = ["gfx908", "gfx9-4-generic", "gfx12-generic"],
    )
    narrowed_set_test(
        name = name + "_narrowed_set",
        size = "small",
        target_under_test = lib,
        wide = lib,
    )
    same_basename_test(
        name = name + "_same_basename",
        size = "small",
        target_under_test = lib,
        want_bundles = [
            "tests/analysis/hip_basename/_hip/same_basename/a/k.hip.hipfb",
            "tests/analysis/hip_basename/_hip/same_basename/b/k.hip.hipfb",
        ],
    )
    same_basename_test(
        name = name + "_other_package",
        size = "small",
        target_under_test = "//tests/analysis/hip_basename:mixed",
        want_bundles = [
            "tests/analysis/hip_basename/_hip/mixed/a/k.hip.hipfb",
            "tests/analysis/hip_basename/_hip_other/mixed/tests/analysis/hip_other_pkg/a/k.hip.hipfb",
        ],
    )
    same_view_test(
        name = name + "_deps_reach_device",
        size = "small",
        target_under_test = "//tests/outputs/hip:status_kernels",
        want_flags = [
            "-DEIGENISH_SCALE=3",
            "-isystem tests/outputs/hip/third_party/eigenish",
            "/tests/outputs/hip/_virtual_includes/abslish",
            "/tests/outputs/hip/_virtual_includes/scale_ops",
        ],
        want_inputs = [
            "_virtual_includes/abslish/absl/status/status.h",
            "_virtual_includes/scale_ops/hipkern/scale_ops.h",
            "third_party/eigenish/Eigen/Core",
        ],
        # scale_ops's implementation_deps stay its own.
        unwanted_inputs = ["tests/outputs/hip/gen/block_size.h"],
    )
    same_view_test(
        name = name + "_implementation_deps_reach_device",
        size = "small",
        target_under_test = "//tests/outputs/hip:scale_ops",
        want_flags = ["-DEIGENISH_SCALE=3"],
        want_inputs = ["tests/outputs/hip/gen/block_size.h", "_virtual_includes/scale_ops/hipkern/scale_ops.h"],
    )
    same_view_test(
        name = name + "_local_defines_reach_device",
        size = "small",
        target_under_test = "//tests/outputs/hip:fill_f32",
        want_flags = ["-DCUB_TYPE_F32"],
    )
    dbg_flags_test(
        name = name + "_dbg_flags",
        size = "small",
        target_under_test = "//tests/outputs/hip:fill_f32",
        host = ["-O0", "-g", "-DFROM_COPT", "-DFROM_CXXOPT", "-DFROM_HIP_COPTS", "-DFROM_HIP_COPTS_2"],
        not_host = ["-DFROM_HIP_DEVICE_COPTS", "-O3", "-DNDEBUG"],
        device = ["-O0", "-g", "-DFROM_HIP_COPTS", "-DFROM_HIP_COPTS_2", "-DFROM_HIP_DEVICE_COPTS"],
        not_device = ["-DFROM_COPT", "-DFROM_CXXOPT", "-O3", "-DNDEBUG"],
    )
    opt_flags_test(
        name = name + "_opt_flags",
        size = "small",
        target_under_test = "//tests/outputs/hip:fill_f32",
        host = ["-O2", "-DNDEBUG"],
        not_host = ["-g"],
        device = ["-O3", "-DNDEBUG"],
        not_device = ["-g"],
    )
    public_context_test(
        name = name + "_public_context",
        size = "small",
        target_under_test = "//tests/outputs/hip:scale_ops",
        includes = ["tests/outputs/hip/_virtual_includes/scale_ops"],
        system_includes = ["tests/outputs/hip/third_party/eigenish"],
        defines = ["EIGENISH_SCALE=3"],
        headers = ["_virtual_includes/scale_ops/hipkern/scale_ops.h", "third_party/eigenish/Eigen/Core"],
    )
    hip_copts_offload_arch_test(
        name = name + "_hip_copts_offload_arch",
        size = "small",
        target_under_test = "//:hip_copts",
        messages = ["hip_copts=--offload-arch=gfx90a: GPU targets come from --//:gfx"],
    )
    gfx_unknown_family_test(
        name = name + "_gfx_unknown_family",
        size = "small",
        target_under_test = "//:gfx",
        messages = [
            "unknown amdgpu family or gfx target 'gfx120x-al'",
            "Did you mean 'gfx120X-all'?",
            "Valid families:",
        ],
    )
    bundle_compression_bogus_test(
        name = name + "_bundle_compression_bogus",
        size = "small",
        target_under_test = "//:hip_bundle_compression",
        messages = ["hip_bundle_compression=bogus: must be one of auto, none, zstd, zlib"],
    )
    native.test_suite(
        name = name,
        tests = [
            name + "_device_compiles_gfx120x",
            name + "_device_compiles_two_families",
            name + "_device_compiles_generic",
            name + "_narrowed_set",
            name + "_same_basename",
            name + "_other_package",
            name + "_gfx_unknown_family",
            name + "_bundle_compression_bogus",
            name + "_deps_reach_device",
            name + "_local_defines_reach_device",
            name + "_implementation_deps_reach_device",
            name + "_dbg_flags",
            name + "_opt_flags",
            name + "_public_context",
            name + "_hip_copts_offload_arch",
        ],
    )
