"""Analysis tests that expect the target under test to fail, with given message parts."""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")

FAILURE_ATTRS = {"messages": attr.string_list(mandatory = True, doc = "Parts of the expected error.")}

def failure_test_impl(ctx):
    env = analysistest.begin(ctx)
    for message in ctx.attr.messages:
        asserts.expect_failure(env, message)
    return analysistest.end(env)

def failure_test(config_settings):
    """An analysistest rule expecting failure under `config_settings` (one rule per configuration)."""
    return analysistest.make(failure_test_impl, expect_failure = True, attrs = FAILURE_ATTRS, config_settings = config_settings)
