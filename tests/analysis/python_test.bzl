"""Analysis tests of the Python rules: the split transition and the Python flags.

python_analysis_tests() declares the fixtures (tagged manual: only the tests
configure them) and one test per behaviour.
"""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")
load("@rocm_python//:versions.bzl", "DECLARED_IN", "PYTHON_VERSIONS")
load("@rules_cc//cc:defs.bzl", "cc_binary")
load("//rules:defs.bzl", "PythonWheelInfo", "PythonWheelSetInfo", "python_extension", "python_wheels", "rocm_python_toolchain", "rocm_python_wheel", "rocm_wheel", "wheel_shared_library")
load(":failure_test.bzl", "FAILURE_ATTRS", "failure_test_impl")

_VERSIONS_FLAG = str(Label("//:python_versions"))
_VERSION_SETTING = str(Label("@rules_python//python/config_settings:python_version"))

# --- python_wheels fans out to exactly the versions of --//:python_versions

# 3.14t: free-threaded 3.14, its own configuration next to 3.12's and 3.13's.
_SPLIT_VERSIONS = ["3.12", "3.13", "3.14t"]

def _per_python_name(version):
    abi = "cp" + version.replace(".", "")
    return "analysis_per_python-0.1-{}-{}-linux_x86_64.whl".format(abi.rstrip("t"), abi)

_INDEPENDENT_NAME = "analysis_independent-0.1-py3-none-any.whl"

# The actions of python_wheels' per-Python wheels (analysistest sees only the
# target under test's own): version -> that wheel's actions.
_PerPythonActionsInfo = provider(doc = "Test only.", fields = {"by_version": "dict version -> list of Actions"})

def _per_python_actions_impl(target, ctx):
    if PythonWheelInfo in target:
        return [_PerPythonActionsInfo(by_version = {target[PythonWheelInfo].python.version: target.actions})]
    by_version = {}
    for t in getattr(ctx.rule.attr, "per_python", []):
        by_version.update(t[_PerPythonActionsInfo].by_version)
    return [_PerPythonActionsInfo(by_version = by_version)]

_per_python_actions = aspect(implementation = _per_python_actions_impl, attr_aspects = ["per_python"])

def _wheel_inputs(env, actions, version):
    """The inputs of the one RocmWheel action among `actions`."""
    wheel_actions = [a for a in actions if a.mnemonic == "RocmWheel"]
    asserts.equals(env, 1, len(wheel_actions), "RocmWheel actions for Python " + version)
    return wheel_actions[0].inputs.to_list() if wheel_actions else []

def _check_wheel_inputs(env, target, independent_root):
    """Each version's wheel packs its own extension and one shared library.

    The library is configured once, with the Python-independent wheels.
    """
    shared_paths = {}
    for version, actions in target[_PerPythonActionsInfo].by_version.items():
        inputs = _wheel_inputs(env, actions, version)
        ext = [f.basename for f in inputs if f.basename.startswith("_ext.")]
        want = "_ext.cpython-{}-".format(version.replace(".", ""))
        asserts.true(env, len(ext) == 1 and ext[0].startswith(want), "Python {} wheel packs {}, want {}*".format(version, ext, want))
        for f in inputs:
            if f.basename == "python_libshared.so":
                shared_paths[f.path] = version
                asserts.equals(env, independent_root, f.root.path, "the shared library's configuration (Python " + version + ")")
    asserts.equals(env, 1, len(shared_paths), "one shared library for every version, got " + str(shared_paths))

def _split_test_impl(ctx):
    env = analysistest.begin(ctx)
    target = analysistest.target_under_test(env)
    info = target[PythonWheelSetInfo]
    asserts.equals(env, _SPLIT_VERSIONS, sorted(info.by_version.keys()), "by_version keys")
    asserts.equals(env, _SPLIT_VERSIONS, sorted(info.pythons.keys()), "pythons keys")
    for v in _SPLIT_VERSIONS:
        asserts.equals(env, v, info.pythons[v].version if v in info.pythons else None, "the PythonFactsInfo of " + v)
    roots = {}
    for v in _SPLIT_VERSIONS:
        files = info.by_version.get(v, [])
        asserts.equals(env, [_per_python_name(v)], [f.basename for f in files], "wheels for Python " + v)
        for f in files:
            roots[f.root.path] = v
    asserts.equals(env, len(_SPLIT_VERSIONS), len(roots), "one configuration per version, got roots " + str(roots))
    asserts.equals(env, [_INDEPENDENT_NAME], [f.basename for f in info.independent], "Python-independent wheels")
    for f in info.independent:
        asserts.false(env, f.root.path in roots, "the Python-independent wheel is built in a per-version configuration")
        _check_wheel_inputs(env, target, f.root.path)
    asserts.equals(
        env,
        sorted([_INDEPENDENT_NAME] + [_per_python_name(v) for v in _SPLIT_VERSIONS]),
        sorted([f.basename for f in target[DefaultInfo].files.to_list()]),
        "DefaultInfo: every wheel once",
    )
    return analysistest.end(env)

python_wheels_split_test = analysistest.make(
    _split_test_impl,
    config_settings = {_VERSIONS_FLAG: ",".join(_SPLIT_VERSIONS)},
    extra_target_under_test_aspects = [_per_python_actions],
)

# --- validation failures: the error must contain every string of `messages`

def _versions_failure_test(value):
    return analysistest.make(failure_test_impl, expect_failure = True, attrs = FAILURE_ATTRS, config_settings = {_VERSIONS_FLAG: value})

# One rule per flag value: analysistest fixes the configuration per rule.
# Malformed values (the element named in the message in _MALFORMED below).
versions_malformed_3_9x_test = _versions_failure_test("3.9x")
versions_malformed_3_x_test = _versions_failure_test("3.x")
versions_malformed_3_test = _versions_failure_test("3")
versions_malformed_311_test = _versions_failure_test("311")
versions_malformed_3_12_1_test = _versions_failure_test("3.12.1")
versions_malformed_blank_test = _versions_failure_test(" ")
versions_malformed_empty_element_test = _versions_failure_test("3.12,,")
versions_malformed_2_7_test = _versions_failure_test("2.7")
versions_malformed_3_012_test = _versions_failure_test("3.012")
versions_malformed_semicolon_test = _versions_failure_test("3.11;3.12")

# Free-threaded builds begin with 3.13.
versions_malformed_3_12t_test = _versions_failure_test("3.12t")
versions_duplicate_test = _versions_failure_test("3.12,3.12")
versions_not_declared_test = _versions_failure_test("3.11,3.9")

# rule, test name suffix, flag value, the malformed element
_MALFORMED = [
    (versions_malformed_3_9x_test, "3_9x", "3.9x", "3.9x"),
    (versions_malformed_3_x_test, "3_x", "3.x", "3.x"),
    (versions_malformed_3_test, "3", "3", "3"),
    (versions_malformed_311_test, "311", "311", "311"),
    (versions_malformed_3_12_1_test, "3_12_1", "3.12.1", "3.12.1"),
    (versions_malformed_blank_test, "blank", " ", " "),
    (versions_malformed_empty_element_test, "empty_element", "3.12,,", ""),
    (versions_malformed_2_7_test, "2_7", "2.7", "2.7"),
    (versions_malformed_3_012_test, "3_012", "3.012", "3.012"),
    (versions_malformed_semicolon_test, "semicolon", "3.11;3.12", "3.11;3.12"),
    (versions_malformed_3_12t_test, "3_12t", "3.12t", "3.12t"),
]

version_without_toolchain_test = analysistest.make(
    failure_test_impl,
    expect_failure = True,
    attrs = FAILURE_ATTRS,
    config_settings = {_VERSION_SETTING: "3.9"},
)

removed_toolchain_test = analysistest.make(failure_test_impl, expect_failure = True, attrs = FAILURE_ATTRS)

duplicate_wheel_name_test = analysistest.make(failure_test_impl, expect_failure = True, attrs = FAILURE_ATTRS)

def _same_wheel_twice_test_impl(ctx):
    env = analysistest.begin(ctx)
    names = [f.basename for f in analysistest.target_under_test(env)[DefaultInfo].files.to_list()]
    asserts.equals(env, 1, len([n for n in names if n == "analysis_independent-0.1-py3-none-any.whl"]), "the independent wheel once: " + repr(names))
    return analysistest.end(env)

same_wheel_twice_test = analysistest.make(_same_wheel_twice_test_impl)

def _fixtures(name):
    """A per-Python wheel (an extension linking a Python-independent library) and a Python-independent wheel."""
    cc_binary(
        name = name + "_libshared.so",
        srcs = ["python_fixture/shared.c"],
        linkshared = True,
        tags = ["manual"],
    )
    wheel_shared_library(
        name = name + "_shared",
        lib = name + "_libshared.so",
        tags = ["manual"],
    )
    python_extension(
        name = name + "_ext",
        module_name = "_ext",
        srcs = ["python_fixture/ext.c"],
        shared_libs = [name + "_shared"],
        runpath = ["$ORIGIN"],
        tags = ["manual"],
    )
    rocm_python_wheel(
        name = name + "_per_python",
        distribution = "analysis-per-python",
        version = "0.1",
        srcs = ["python_fixture/pkg/__init__.py", name + "_ext"],
        shared_srcs = [name + "_shared"],
        tags = ["manual"],
    )
    rocm_wheel(
        name = name + "_independent",
        distribution = "analysis-independent",
        version = "0.1",
        srcs = ["python_fixture/pkg/__init__.py"],
        tags = ["manual"],
    )
    rocm_python_toolchain(
        name = name + "_removed_toolchain",
        version = "3.12",
        tags = ["manual"],
    )
    python_wheels(
        name = name + "_wheels",
        per_python = [name + "_per_python"],
        python_independent = [name + "_independent"],
        tags = ["manual"],
    )

    # The same wheel twice (directly and through a set) is one wheel; two
    # targets making one file name are an error.
    python_wheels(
        name = name + "_same_wheel_twice",
        python_independent = [name + "_independent"],
        wheel_sets = [name + "_wheels"],
        tags = ["manual"],
    )
    python_wheels(
        name = name + "_two_wheels_one_name",
        python_independent = ["//tests/analysis/python_other_pkg:independent_again"],
        wheel_sets = [name + "_wheels"],
        tags = ["manual"],
    )

def python_analysis_tests(name):
    """The Python analysis tests and their fixtures; `name` is the test_suite.

    Args:
      name: test_suite name, also the fixtures' name prefix.
    """
    _fixtures(name)
    tests = []

    def add(rule, test_name, **kwargs):
        rule(name = test_name, **kwargs)
        tests.append(test_name)

    add(python_wheels_split_test, name + "_split_test", target_under_test = name + "_wheels")
    for rule, suffix, value, element in _MALFORMED:
        add(
            rule,
            "{}_malformed_{}_test".format(name, suffix),
            target_under_test = "//:python_versions",
            messages = ["malformed Python version '{}' in --//:python_versions={}".format(element, value)],
        )
    add(
        versions_duplicate_test,
        name + "_duplicate_test",
        target_under_test = "//:python_versions",
        messages = ["Python 3.12 is listed twice in --//:python_versions=3.12,3.12"],
    )
    add(
        versions_not_declared_test,
        name + "_not_declared_test",
        target_under_test = "//:python_versions",
        messages = [
            ("Python 3.9 (requested by --//:python_versions=3.11,3.9) is not a declared version; " +
             "declared: {} ({}).").format(", ".join(PYTHON_VERSIONS), DECLARED_IN),
            "Declare it there (rules_rocm.python_versions in MODULE.bazel",
        ],
    )
    add(
        version_without_toolchain_test,
        name + "_version_without_toolchain_test",
        target_under_test = name + "_per_python",
        messages = [
            "Python 3.9 is selected but",
            "(docs/python.md)",
        ],
    )
    add(
        removed_toolchain_test,
        name + "_removed_toolchain_test",
        target_under_test = name + "_removed_toolchain",
        messages = ["rocm_python_toolchain is gone: rules_rocm takes Python from rules_python's toolchains", "\"Migrating\""],
    )
    add(
        duplicate_wheel_name_test,
        name + "_duplicate_wheel_name_test",
        target_under_test = name + "_two_wheels_one_name",
        messages = [
            "two wheels named analysis_independent-0.1-py3-none-any.whl",
            "tests/analysis/python_other_pkg/analysis_independent-0.1-py3-none-any.whl",
            "give one of them another distribution name",
        ],
    )
    add(same_wheel_twice_test, name + "_same_wheel_twice_test", target_under_test = name + "_same_wheel_twice")
    native.test_suite(name = name, tests = tests)
