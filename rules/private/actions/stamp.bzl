"""Stamping from Bazel's workspace status (`--stamp --workspace_status_command=...`).

Stamped values reach outputs only through actions that read
`ctx.info_file` (stable-status.txt), never through source edits. Without
stamping those actions are not created at all and the outputs are fixed
strings, so unstamped builds are byte-for-byte deterministic (and cacheable:
stable-status.txt is an input only when stamping).

Keys used (tools/workspace_status.sh prints them):
  STABLE_GIT_COMMIT          commit of this checkout
  STABLE_COMMIT_<NAME>       commits of other source trees (e.g. XLA)
Templates may name any stable key as `{KEY}`.
"""

load("//rules/private:providers.bzl", "SettingInfo")

STAMP_ATTRS = {
    "stamp": attr.int(
        default = -1,
        values = [-1, 0, 1],
        doc = "1: stamp, 0: never, -1: follow --stamp.",
    ),
    "_stamp_flag": attr.label(
        default = Label("//rules/stamp:stamp"),
        providers = [SettingInfo],
        doc = "Whether --stamp is on (what stamp = -1 follows).",
    ),
}

def is_stamping(ctx):
    """Whether this target stamps (its `stamp` attribute, else --stamp)."""
    if ctx.attr.stamp == 1:
        return True
    if ctx.attr.stamp == 0:
        return False
    return ctx.attr._stamp_flag[SettingInfo].value

# awk over stable-status.txt ("KEY value" lines). Values are JSON/Python
# string-escaped, so a status value cannot break the file it lands in.
_READ_STATUS = r"""
function esc(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return s }
FNR == NR {
  k = $1; v = $0; sub(/^[^ ]* ?/, "", v); status[k] = esc(v); next
}
"""

def stamp_template(ctx, template, output, mnemonic = "RocmStamp"):
    """Writes `template` to `output`, `{KEY}` replaced by stable status values.

    A `{KEY}` missing from the workspace status fails the action, naming the
    key and the flag that provides it.
    """
    tpl = ctx.actions.declare_file(output.basename + ".tpl", sibling = output)
    ctx.actions.write(tpl, template)
    prog = _READ_STATUS + r"""
{
  line = $0; out = ""
  while (match(line, /\{[A-Z][A-Z0-9_]*\}/)) {
    key = substr(line, RSTART + 1, RLENGTH - 2)
    if (!(key in status)) {
      printf "stamping %s: workspace status has no key %s; build with --stamp " \
             "--workspace_status_command=tools/workspace_status.sh (or a script that prints it)\n", \
             out_name, key > "/dev/stderr"
      exit 1
    }
    out = out substr(line, 1, RSTART - 1) status[key]
    line = substr(line, RSTART + RLENGTH)
  }
  print out line
}
"""
    ctx.actions.run_shell(
        inputs = [ctx.info_file, tpl],
        outputs = [output],
        command = 'awk -v out_name="$4" "$1" "$2" "$3" > "$4.tmp" && mv -f "$4.tmp" "$4"',
        arguments = [prog, ctx.info_file.path, tpl.path, output.path],
        mnemonic = mnemonic,
        progress_message = "Stamping %s" % output.short_path,
    )

def write_version_module(ctx, header, out):
    """Writes python_version_module's `out`: the `header` lines, then the commits.

    Unstamped, `stamped = False` and no commits; stamped, STABLE_GIT_COMMIT and
    every STABLE_COMMIT_<NAME> of the workspace status.
    """
    if not is_stamping(ctx):
        ctx.actions.write(out, "\n".join(header + [
            "stamped = False",
            "commit = None",
            "commit_info = {}",
            "",
        ]))
        return
    prog = _READ_STATUS + r"""
END {
  print "stamped = True"
  print "commit = " (("STABLE_GIT_COMMIT" in status) ? "\"" status["STABLE_GIT_COMMIT"] "\"" : "None")
  n = 0
  for (k in status) if (k ~ /^STABLE_COMMIT_/) keys[++n] = k
  # insertion sort: deterministic order whatever awk's hash order is
  for (i = 2; i <= n; i++) { t = keys[i]; for (j = i - 1; j > 0 && keys[j] > t; j--) keys[j + 1] = keys[j]; keys[j + 1] = t }
  printf "commit_info = {"
  if ("STABLE_GIT_COMMIT" in status) printf "\n    \"workspace\": \"%s\",", status["STABLE_GIT_COMMIT"]
  for (i = 1; i <= n; i++) { name = tolower(substr(keys[i], 15)); printf "\n    \"%s\": \"%s\",", name, status[keys[i]] }
  if (n || ("STABLE_GIT_COMMIT" in status)) print "\n}"; else print "}"
}
"""
    head = ctx.actions.declare_file(out.basename + ".head", sibling = out)
    ctx.actions.write(head, "\n".join(header) + "\n")
    ctx.actions.run_shell(
        inputs = [ctx.info_file, head],
        outputs = [out],
        command = '{ cat "$3" && awk "$1" "$2" /dev/null; } > "$4.tmp" && mv -f "$4.tmp" "$4"',
        arguments = [prog, ctx.info_file.path, head.path, out.path],
        mnemonic = "RocmStampVersion",
        progress_message = "Stamping %s" % out.short_path,
    )
