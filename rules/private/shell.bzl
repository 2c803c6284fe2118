"""Helpers for rules that generate bash scripts."""

def shell_quote(s):
    """`s` as one single-quoted bash word."""
    return "'" + s.replace("'", "'\\''") + "'"

def venv_install_check_lines(version, interpreter):
    """Bash lines that install wheels into a fresh venv and run a check there.

    The venv is made by `interpreter`; pip installs "${dists[@]}" from
    "$links" with no index; "$check" (absolute) runs with the minor version
    as argv[1], then the test's own arguments ("$@": the `args` attribute).
    Expects $tmp, $links, $check and dists to be set.
    """
    return [
        'echo "== Python {v} ({i})"'.format(v = version, i = interpreter),
        'venv="$tmp/venv-{v}"'.format(v = version),
        '{i} -m venv --clear "$venv"'.format(i = shell_quote(interpreter)),
        '"$venv/bin/python" -m pip install -q --no-index --find-links "$links" "${dists[@]}"',
        '(cd "$tmp" && "$venv/bin/python" -I "$check" {v} "$@")'.format(v = version),
    ]
