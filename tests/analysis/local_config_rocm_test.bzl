"""Analysis tests of @local_config_rocm, XLA's names over rules_rocm.

rocm_library is a hip_library (one device compile per --//:gfx target, the
ROCm library deps checked as rocm_libs), plain C++ users of the HIP runtime
get the platform macro and libamdhip64.so (linked by path), rocm_version_number() is the
toolkit's release, and --@local_config_rocm//rocm:rocm_path_type=link_only
fails naming the rules_rocm way.
"""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")
load("@local_config_rocm//rocm:build_defs.bzl", "rocm_version_number")

# buildifier: disable=bzl-visibility
load("//rules/private/settings:flags.bzl", "GFX_FLAG")
load(":failure_test.bzl", "failure_test")

_CcInfo = CcInfo  # buildifier: disable=native-cc-info

_PATH_TYPE = str(Label("@local_config_rocm//rocm:rocm_path_type"))

_ActionsInfo = provider(doc = "Test-only: a hip_library's actions and its device half's.", fields = {"actions": "list of Action"})

def _actions_aspect_impl(target, ctx):
    actions = list(target.actions)
    for dep in getattr(ctx.rule.attr, "device", None) or []:
        actions += dep[_ActionsInfo].actions
    return [_ActionsInfo(actions = actions)]

_actions_aspect = aspect(implementation = _actions_aspect_impl, attr_aspects = ["device"])

def _link_flags(target):
    flags = []
    for i in target[_CcInfo].linking_context.linker_inputs.to_list():
        flags.extend(i.user_link_flags)
    return flags

def _links(target, name):
    # By path: a -L of the ROCm's directory would put /usr/lib/<triple>'s
    # libc ahead of a sysroot's.
    return [f for f in _link_flags(target) if f.endswith("/" + name)] != []

def _rocm_library_test_impl(ctx):
    env = analysistest.begin(ctx)
    target = analysistest.target_under_test(env)
    compiles = [a for a in target[_ActionsInfo].actions if a.mnemonic == "HipDeviceCompile"]
    arches = sorted([arg for a in compiles for arg in a.argv if arg.startswith("--offload-arch=")])
    asserts.equals(env, ["--offload-arch=gfx1200", "--offload-arch=gfx1201"], arches, "one device compile per --//:gfx target")
    for a in compiles:
        asserts.true(env, "-D__HIP_PLATFORM_AMD__" in a.argv, "rocm_headers' platform macro in " + str(a.argv))
    asserts.true(env, _links(target, "libhipblas.so"), "@local_config_rocm//rocm:hipblas links hipBLAS, got " + str(_link_flags(target)))
    return analysistest.end(env)

_rocm_library_test = analysistest.make(
    _rocm_library_test_impl,
    config_settings = {GFX_FLAG: "gfx1200,gfx1201"},
    extra_target_under_test_aspects = [_actions_aspect],
)

def _runtime_user_test_impl(ctx):
    env = analysistest.begin(ctx)
    target = analysistest.target_under_test(env)
    defines = target[_CcInfo].compilation_context.defines.to_list()
    asserts.true(env, "__HIP_PLATFORM_AMD__" in defines, "plain C++ users get the HIP platform macro, got " + str(defines))
    asserts.true(env, _links(target, "libamdhip64.so"), "hip_runtime links libamdhip64, got " + str(_link_flags(target)))
    return analysistest.end(env)

_runtime_user_test = analysistest.make(_runtime_user_test_impl)

def _version_number_test_impl(ctx):
    env = analysistest.begin(ctx)
    variables = analysistest.target_under_test(env)[platform_common.TemplateVariableInfo].variables
    major, minor, patch = [int(p) for p in variables["ROCM_RELEASE"].split(".")]  # "7.2.4"
    asserts.equals(env, major * 10000 + minor * 100 + patch, ctx.attr.number, "rocm_version_number() against $(ROCM_RELEASE) " + variables["ROCM_RELEASE"])
    asserts.equals(env, "{}.{}".format(major, minor), variables["ROCM_VERSION"], "$(ROCM_VERSION) is the release's major.minor")
    asserts.equals(env, str(major), variables["ROCM_MAJOR"], "$(ROCM_MAJOR) is the release's major")
    return analysistest.end(env)

_version_number_test = analysistest.make(_version_number_test_impl, attrs = {"number": attr.int()})

_link_only_test = failure_test({_PATH_TYPE: "link_only"})

def local_config_rocm_analysis_tests(name):
    """The tests; `name` is the test_suite. Fixtures: //tests/analysis/local_config_rocm."""
    fixtures = "//tests/analysis/local_config_rocm:"
    _rocm_library_test(name = name + "_rocm_library_test", target_under_test = fixtures + "kernels")
    _runtime_user_test(name = name + "_runtime_user_test", target_under_test = fixtures + "runtime_user")
    _version_number_test(name = name + "_version_number_test", target_under_test = "//rocm:version", number = rocm_version_number())
    _link_only_test(
        name = name + "_link_only_test",
        target_under_test = fixtures + "selects_link_only",
        messages = [
            "--@local_config_rocm//rocm:rocm_path_type=link_only has no meaning with rules_rocm",
            "python_extension(runpath = [\"$ORIGIN/...\"])",
            "Drop the flag.",
        ],
    )
    native.test_suite(name = name, tests = [
        name + "_rocm_library_test",
        name + "_runtime_user_test",
        name + "_version_number_test",
        name + "_link_only_test",
    ])
