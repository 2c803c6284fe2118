"""Deliberately non-hermetic actions: the negative controls of
tests/e2e/clean_builds_test.sh. Test-only; never
part of //:wheels.

Each leaks host state the way real rules do by accident:
  - "output": the command resolves a source symlink (`readlink -f`, as
    compilers do for __FILE__ or debug info) and writes the result. The
    action key does not change between checkouts, so a remote cache hands
    the first checkout's bytes to the second one: only a local rebuild in
    the second checkout shows the difference.
  - "env": the command reads the client environment through
    `use_default_shell_env` (what `--action_env` passes, e.g. a PATH or
    HOME), so the action key itself differs: a remote cache miss.
  - "time" (not a path): the output
    holds the time it was written, so two clean builds differ.
  - "host_path" (remote execution): reads a file of the checkout by
    its absolute host path, found through its declared input. The local
    sandbox lets it through; a remote worker, which has only the input
    root, must not.
  - "undeclared": reads a file beside its declared input that is not an
    input itself; fails locally in a sandbox and remotely alike.
"""

# $1: the declared input, $2: the output.
_COMMANDS = {
    "env": 'printf "%s\\n" "${RULES_ROCM_E2E_CHECKOUT:?--action_env=RULES_ROCM_E2E_CHECKOUT not set}" > "$2"',
    "host_path": 'cat "$(dirname "$(readlink -f "$1")")/BUILD.bazel" > "$2"',
    "output": 'readlink -f "$1" > "$2"',
    "time": 'date +%s.%N > "$2"',
    "undeclared": 'cat "$(dirname "$1")/BUILD.bazel" > "$2"',
}

def _nonhermetic_action_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    src = ctx.file.src
    command = _COMMANDS[ctx.attr.leak]
    use_env = ctx.attr.leak == "env"
    ctx.actions.run_shell(
        command = command,
        arguments = [src.path, out.path],
        inputs = [src],
        outputs = [out],
        use_default_shell_env = use_env,
        mnemonic = "NonHermetic",
        progress_message = "Writing deliberately non-hermetic %s" % out.short_path,
    )
    return [DefaultInfo(files = depset([out]))]

nonhermetic_action = rule(
    implementation = _nonhermetic_action_impl,
    attrs = {
        "leak": attr.string(mandatory = True, values = sorted(_COMMANDS.keys())),
        "src": attr.label(allow_single_file = True, mandatory = True),
    },
    doc = "Writes the checkout path (or the time) into its output: a test-only negative control.",
)
