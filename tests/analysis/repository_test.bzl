"""Unit tests of what the repository rules decide before they write anything.

The repository rules themselves run at fetch time; these test the pure parts
they are built from (settings, version headers, library refusals, template
expansion). tests/e2e/python_interpreters_test.sh and hip_fixture_test.sh
run the rules on real and fixture installations.
"""

load("@bazel_skylib//lib:unittest.bzl", "asserts", "unittest")

# buildifier: disable=bzl-visibility
load("//rules/private/data:rocm_library_table.bzl", "ROCM_LIBRARIES", "library_version", "parse_version_header", "refused_targets")

# buildifier: disable=bzl-visibility
load("//rules/private/repositories:repository_utils.bzl", "attr_or_env", "expand", "sdk_version_problem", "therock_tarball_release")

def _fake_rctx(environ):
    return struct(os = struct(environ = environ))

def _attr_or_env_test_impl(ctx):
    env = unittest.begin(ctx)
    rctx = _fake_rctx({"ROCM_PATH": "/env/rocm", "EMPTY": ""})
    got = attr_or_env(rctx, "/attr/rocm", "rocm_path attribute", "ROCM_PATH")
    asserts.equals(env, struct(value = "/attr/rocm", source = "rocm_path attribute"), got, "the attribute wins")
    got = attr_or_env(rctx, "", "rocm_path attribute", "ROCM_PATH")
    asserts.equals(env, struct(value = "/env/rocm", source = "$ROCM_PATH"), got, "else the environment")
    for name in ("EMPTY", "UNSET"):
        got = attr_or_env(rctx, "", "rocm_path attribute", name)
        asserts.equals(env, struct(value = "", source = ""), got, "$%s: neither set" % name)
    return unittest.end(env)

_attr_or_env_test = unittest.make(_attr_or_env_test_impl)

def _expand_test_impl(ctx):
    env = unittest.begin(ctx)
    asserts.equals(
        env,
        'name = "python_3_12", version = "3.12", flag = {"@//v": "3.12"}',
        expand('name = "python_{U}", version = "{V}", flag = {"{SETTING}": "{V}"}', {
            "{U}": "3_12",
            "{V}": "3.12",
            "{SETTING}": "@//v",
        }),
        "every occurrence of every key, literal braces kept",
    )

    # In order, as rctx.template does: a value may hold a later key.
    asserts.equals(env, "b b", expand("{A} {B}", {"{A}": "{B}", "{B}": "b"}))
    asserts.equals(env, "{B} a", expand("{A} {B}", {"{B}": "a", "{A}": "{B}"}))
    return unittest.end(env)

_expand_test = unittest.make(_expand_test_impl)

_ROCPRIM_VERSION_HPP = """\
#ifndef ROCPRIM_VERSION_HPP_
#define ROCPRIM_VERSION_HPP_
#define ROCPRIM_VERSION_MAJOR 3
#define ROCPRIM_VERSION_MINOR\t4
#define ROCPRIM_VERSION_PATCH 1
#define ROCPRIM_VERSION (ROCPRIM_VERSION_MAJOR * 100000 + ROCPRIM_VERSION_MINOR * 100)
#endif
"""

def _version_header_test_impl(ctx):
    env = unittest.begin(ctx)
    asserts.equals(env, "3.4.1", parse_version_header(_ROCPRIM_VERSION_HPP, "ROCPRIM_VERSION"))
    asserts.equals(
        env,
        "6.4.0",
        parse_version_header("#define HIP_VERSION_MAJOR 6\n#define HIP_VERSION_MINOR 4\n", "HIP_VERSION"),
        "no PATCH line: patch 0",
    )
    asserts.equals(env, "", parse_version_header("#define HIP_VERSION_MAJOR 6\n", "HIP_VERSION"), "no MINOR line")
    asserts.equals(env, "", parse_version_header(_ROCPRIM_VERSION_HPP, "HIPCUB_VERSION"), "another library's macro")
    return unittest.end(env)

_version_header_test = unittest.make(_version_header_test_impl)

def _refused_targets_test_impl(ctx):
    env = unittest.begin(ctx)
    refused = refused_targets("rocprim", "3.4.1")
    asserts.equals(env, ["gfx950"], refused.keys(), "rocPRIM 3.4 refuses gfx950")
    asserts.true(env, "128-bit atomics" in refused["gfx950"], "the reason: " + refused["gfx950"])
    asserts.true(env, refused["gfx950"].endswith("fixed in rocPRIM 4.0, ROCm 7.0"), "the fix: " + refused["gfx950"])
    asserts.equals(env, {}, refused_targets("rocprim", "4.0.0"), "rocPRIM 4.0 refuses nothing")
    asserts.equals(env, {}, refused_targets("rocprim", "4"), "a short version is padded")
    asserts.equals(env, {}, refused_targets("rocprim", ""), "unknown version: nothing refused")
    asserts.equals(env, {}, refused_targets("hipcub", "3.4.0"), "hipCUB's own refusals (rocPRIM's come through deps)")
    return unittest.end(env)

_refused_targets_test = unittest.make(_refused_targets_test_impl)

def _library_version_test_impl(ctx):
    env = unittest.begin(ctx)

    # The headers of ROCm 7.2.4's Debian packages (excerpts).
    headers = {
        "hipblas": ("#define hipblasVersionMajor 3\n#define hipblaseVersionMinor 2 // typo preserved\n" +
                    "#define hipblasVersionMinor 2\n#define hipblasVersionPatch 0\n#define hipblasVersionTweak\n", "3.2.0"),
        "hipblaslt": ("#define HIPBLASLT_VERSION_MAJOR     1\n#define HIPBLASLT_VERSION_MINOR     2\n#define HIPBLASLT_VERSION_PATCH     2\n", "1.2.2"),
        "hiprand": ("#define HIPRAND_VERSION 300100\n", "3.1.0"),
        "miopen": ("#define MIOPEN_VERSION_MAJOR 3\n#define MIOPEN_VERSION_MINOR 5\n#define MIOPEN_VERSION_PATCH 1\n", "3.5.1"),
        "rccl": ("#define NCCL_MAJOR 2\n#define NCCL_MINOR 27\n#define NCCL_PATCH 7\n#define NCCL_SUFFIX \"\"\n", "2.27.7"),
        "rocrand": ("#define ROCRAND_VERSION 400200\n", "4.2.0"),
        "rocsolver": ("#define ROCSOLVER_VERSION_MAJOR 3\n#define ROCSOLVER_VERSION_MINOR 32\n#define ROCSOLVER_VERSION_PATCH 0\n", "3.32.0"),
        "hipsparse": ("#define hipsparseVersionMajor    4\n#define hipsparseVersionMinor    2\n#define hipsparseVersionPatch    0\n", "4.2.0"),
    }
    for name, (text, want) in headers.items():
        asserts.equals(env, want, library_version(name, text), name)
    asserts.equals(env, "", library_version("hipblas", "#define hipblasVersionMajor 3\n"), "no minor: unknown")
    asserts.equals(env, "", library_version("rocrand", "#define ROCRAND_VERSION x\n"), "packed, not a number")
    for name, lib in ROCM_LIBRARIES.items():
        asserts.true(env, lib.package.startswith("lib"), "{}: the Debian package comes first: {}".format(name, lib.package))
        for used in lib.uses:
            asserts.true(env, used in ROCM_LIBRARIES, "{} uses unknown {}".format(name, used))
    return unittest.end(env)

_library_version_test = unittest.make(_library_version_test_impl)

def _sdk_version_test_impl(ctx):
    env = unittest.begin(ctx)
    for good in ("7.13.0", "7.13.0a20261201", "7.10.0rc2", "7.13.0.dev20261201", "10.1.0b1", "7.10.0.dev0+1a2b3c", "10.1.0a20260811+bkc.20260814"):
        asserts.equals(env, "", sdk_version_problem(good), good)
    for bad, needle in {
        "": "empty",
        "7.13": "not major.minor.patch",
        "7.13.0a": "'a' must be followed by digits",
        "7.13.0-1": "not major.minor.patch",
        "v7.13.0": "not major.minor.patch",
        "7.13.0+ro-cm": "not a local version label",
    }.items():
        asserts.true(env, needle in sdk_version_problem(bad), "{}: {}".format(bad, sdk_version_problem(bad)))

    # The tarball's exact release, pre-release part kept.
    for urls, want in [
        (["https://repo.amd.com/rocm/tarball/therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz"], "7.10.0a20251120"),
        (["http://127.0.0.1:8000/therock-dist-linux-gfx120X-all-6.4.3.tar.gz"], "6.4.3"),
        (["https://m/therock-dist-linux-gfx1151-7.13.0rc1.tar.xz?download=1"], "7.13.0rc1"),
        (["https://m/rocm.tar.gz", "https://n/therock-dist-linux-gfx110X-all-7.12.0.tar.zst"], "7.12.0"),
        (["https://m/rocm-7.2.4.tar.gz"], ""),
        (["https://m/therock-dist-linux-gfx110X-all-latest.tar.gz"], ""),
    ]:
        asserts.equals(env, want, therock_tarball_release(urls), urls[-1])
    return unittest.end(env)

_sdk_version_test = unittest.make(_sdk_version_test_impl)

def repository_unit_tests(name):
    """The repository rules' unit tests, as one test_suite `name`."""
    unittest.suite(
        name,
        _attr_or_env_test,
        _expand_test,
        _version_header_test,
        _refused_targets_test,
        _library_version_test,
        _sdk_version_test,
    )
