"""Analysis tests of --//rocm:sysroot: which compiler and flags C++ and HIP compiles get.

With a sysroot, plain C++ compiles run the sysroot's clang C++ toolchain
with --sysroot, and both halves of a HIP compile get --sysroot and
--gcc-toolchain; with `host` neither does; an undeclared name fails naming
the declared ones.
"""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")
load(":failure_test.bzl", "failure_test")
load(":hip_test.bzl", "HipActionsInfo", "hip_actions_aspect")

_SYSROOT_FLAG = str(Label("//rocm:sysroot"))

def _sysroot_args(action):
    return [a for a in action.argv if a.startswith("--sysroot=") or a.startswith("--gcc-toolchain=")]

def _compiles(target, mnemonics):
    return [a for a in target[HipActionsInfo].actions if a.mnemonic in mnemonics]

def _hip_test_impl(ctx):
    env = analysistest.begin(ctx)
    compiles = _compiles(analysistest.target_under_test(env), ["HipHostCompile", "HipDeviceCompile"])
    asserts.true(env, len(compiles) > 2, "no HIP compiles found")
    for a in compiles:
        got = _sysroot_args(a)
        if ctx.attr.want_sysroot:
            asserts.equals(env, 2, len(got), "{} has --sysroot and --gcc-toolchain, got {}".format(a.mnemonic, got))
            asserts.true(env, got[0].endswith("rocm_sysroot_debian11/sysroot"), "{}: {}".format(a.mnemonic, got))
        else:
            asserts.equals(env, [], got, "{} has no sysroot flags with `host`".format(a.mnemonic))
    return analysistest.end(env)

def _cc_test_impl(ctx):
    env = analysistest.begin(ctx)
    compiles = _compiles(analysistest.target_under_test(env), ["CppCompile"])
    asserts.equals(env, 1, len(compiles), "one C++ compile")
    for a in compiles:
        got = [x for x in a.argv if x.startswith("--sysroot=")]
        if ctx.attr.want_sysroot:
            asserts.true(env, a.argv[0].endswith("/clang"), "compiled by the sysroot toolchain's clang, got " + a.argv[0])
            asserts.true(env, len(got) == 1 and got[0].endswith("rocm_sysroot_debian11/sysroot"), "--sysroot, got {}".format(got))
        else:
            asserts.equals(env, [], got, "no --sysroot with `host`")
    return analysistest.end(env)

_ATTRS = {"want_sysroot": attr.bool()}

def _make(impl, value):
    return analysistest.make(impl, attrs = _ATTRS, config_settings = {_SYSROOT_FLAG: value}, extra_target_under_test_aspects = [hip_actions_aspect])

hip_debian11_test = _make(_hip_test_impl, "debian11")
hip_host_test = _make(_hip_test_impl, "host")
cc_debian11_test = _make(_cc_test_impl, "debian11")
cc_host_test = _make(_cc_test_impl, "host")
sysroot_unknown_test = failure_test({_SYSROOT_FLAG: "centos7"})

def sysroot_analysis_tests(name):
    """The sysroot analysis tests, and a test_suite `name` of them all."""
    hip = "//tests/analysis/hip_basename:same_basename"
    cc = "//tests/analysis/sysroot_fixture:plain"
    hip_debian11_test(name = name + "_hip_debian11", size = "small", target_under_test = hip, want_sysroot = True)
    hip_host_test(name = name + "_hip_host", size = "small", target_under_test = hip, want_sysroot = False)
    cc_debian11_test(name = name + "_cc_debian11", size = "small", target_under_test = cc, want_sysroot = True)
    cc_host_test(name = name + "_cc_host", size = "small", target_under_test = cc, want_sysroot = False)
    sysroot_unknown_test(
        name = name + "_unknown",
        size = "small",
        target_under_test = "//rocm:sysroot",
        messages = ["--@rules_rocm//rocm:sysroot=centos7 names no declared sysroot; declared: host, debian11"],
    )
    native.test_suite(
        name = name,
        tests = [name + s for s in ["_hip_debian11", "_hip_host", "_cc_debian11", "_cc_host", "_unknown"]],
    )
