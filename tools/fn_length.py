#!/usr/bin/env python3
"""Lists functions longer than a limit whose doc comment gives no reason.

    tools/fn_length.py [--max N] [--marker TEXT] [--starlark] [PATH ...]

Rust (default): every `fn` with a body under PATH (default `tools/crates`)
spanning more than N lines (default 80, from the `fn` line to its closing
brace) must say "Long because ..." in its `///` doc comment. Starlark
(`--starlark`, default PATH `rules`): every `def` in `*.bzl` files, measured
from `def` to the last line of its indented body, must say it in its
docstring or in the `#` comment above it. Exits 1 and lists offenders as
`file:line: name is N lines` if any lack the marker.

Limits, fine for this codebase and checked nowhere else: Rust bodies are found
by brace matching that skips comments, string, raw-string and char literals but
does not expand macros (a `fn` written inside a `macro_rules!` body is measured
as text); closures and nested functions count towards their enclosing `fn`.
Starlark bodies are found by indentation, skipping triple-quoted strings.
"""

import argparse
import os
import re
import sys

MARKER = "Long because"

RUST_FN = re.compile(
    r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern\s+\"[^\"]*\")\s+)*"
    r"fn\s+([A-Za-z_][A-Za-z0-9_]*)"
)
STARLARK_DEF = re.compile(r"^(\s*)def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def rust_code_mask(text):
    """Returns `text` with comments and literals blanked (newlines kept).

    Braces inside strings, chars and comments then cannot upset matching.
    """
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and nxt == "*":
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(_blank(text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:]) and _raw_string_start(text, i):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(_blank(text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(_blank(text[i:j]))
            i = j
        elif c == "'":
            # A char literal ('x', '\n', '\u{..}', '{'); otherwise a lifetime.
            m = re.match(r"'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            if m:
                out.append(_blank(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _blank(s):
    return re.sub(r"[^\n]", " ", s)


def _raw_string_start(text, i):
    """Whether the `r` at i starts a raw (or raw byte, `br`) string literal."""
    if text[i - 1 : i] == "b":
        i -= 1
    return not _ident_char(text, i - 1)


def _ident_char(text, i):
    return i >= 0 and (text[i].isalnum() or text[i] == "_")


def rust_functions(text):
    """Yields (name, first line, line count, doc comment) per `fn` with a body."""
    lines = text.split("\n")
    code = rust_code_mask(text)
    code_lines = code.split("\n")
    starts = [0]
    for line in code_lines:
        starts.append(starts[-1] + len(line) + 1)
    for idx, line in enumerate(code_lines):
        m = RUST_FN.match(line)
        if not m:
            continue
        body_start = _body_open(code, starts[idx] + m.end())
        if body_start is None:
            continue
        end = _matching_brace(code, body_start)
        last = code.count("\n", 0, end)
        yield m.group(1), idx + 1, last - idx + 1, _rust_doc(lines, idx)


def _body_open(code, pos):
    """Offset of the `{` opening the body, or None for a bodiless declaration."""
    depth = 0  # parentheses, brackets and generics-free angle use (`->`, `<`)
    for j in range(pos, len(code)):
        c = code[j]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth == 0 and c == ";":
            return None
        elif depth == 0 and c == "{":
            return j
    return None


def _matching_brace(code, open_pos):
    depth = 0
    for j in range(open_pos, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def _rust_doc(lines, idx):
    """The `///` lines (attributes in between allowed) right above line idx."""
    doc = []
    j = idx - 1
    while j >= 0:
        s = lines[j].strip()
        if s.startswith("///"):
            doc.append(s[3:].strip())
        elif not (s.startswith("#[") or s.startswith("//")):
            break
        j -= 1
    return " ".join(reversed(doc))


def starlark_functions(text):
    """Yields (name, first line, line count, docstring and comment above)."""
    lines = text.split("\n")
    in_string = _triple_quoted(lines)
    for idx, line in enumerate(lines):
        if in_string[idx]:
            continue
        m = STARLARK_DEF.match(line)
        if not m:
            continue
        indent = len(m.group(1))
        last = idx
        for j in range(idx + 1, len(lines)):
            s = lines[j]
            if in_string[j]:
                last = j
                continue
            if not s.strip() or s.lstrip().startswith("#"):
                continue
            if len(s) - len(s.lstrip()) <= indent and not _continues_signature(lines, idx, j):
                break
            last = j
        above = []
        j = idx - 1
        while j >= 0 and lines[j].strip().startswith("#"):
            above.append(lines[j].strip().lstrip("#").strip())
            j -= 1
        doc = " ".join(reversed(above)) + " " + "\n".join(lines[idx : last + 1])
        yield m.group(2), idx + 1, last - idx + 1, _docstring(doc)


def _continues_signature(lines, idx, j):
    """Whether line j still belongs to the (multi-line) `def` signature."""
    sig = "\n".join(lines[idx:j])
    return sig.count("(") > sig.count(")")


def _docstring(def_text):
    """Comment above plus the first triple-quoted string, whitespace folded."""
    m = re.search(r'"""(.*?)"""', def_text, re.S)
    head = def_text.split("def ", 1)[0]
    return " ".join((head + " " + (m.group(1) if m else "")).split())


def _triple_quoted(lines):
    """Per line: whether it starts inside a triple-quoted string."""
    flags, inside = [], False
    for line in lines:
        flags.append(inside)
        # buildifier writes every docstring with `"""`; a comment holding
        # `"""` would confuse this, and none does.
        inside ^= line.count('"""') % 2 == 1
    return flags


def source_files(root, suffix):
    """`root` itself if it is a file, else its `*suffix` files (no `target/`)."""
    if os.path.isfile(root):
        return [root]
    files = []
    for d, subdirs, names in os.walk(root):
        subdirs[:] = sorted(s for s in subdirs if s != "target")
        files += [os.path.join(d, n) for n in sorted(names) if n.endswith(suffix)]
    return files


def scan(paths, suffix, functions, limit, marker):
    found = []
    for root in paths:
        for path in source_files(root, suffix):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for name, line, length, doc in functions(text):
                if length > limit and marker.lower() not in doc.lower():
                    found.append(f"{path}:{line}: {name} is {length} lines")
    return found


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max", type=int, default=80, help="longest allowed function (lines)")
    parser.add_argument("--marker", default=MARKER, help="reason marker in the doc comment")
    parser.add_argument("--starlark", action="store_true", help="check *.bzl instead of *.rs")
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args(argv)
    if args.starlark:
        paths, suffix, functions = args.paths or ["rules"], ".bzl", starlark_functions
    else:
        paths, suffix, functions = args.paths or ["tools/crates"], ".rs", rust_functions
    found = scan(paths, suffix, functions, args.max, args.marker)
    for line in found:
        print(line)
    if found:
        print(
            f"{len(found)} function(s) over {args.max} lines without '{args.marker}' in "
            "their doc comment: split them into named steps, or say in one or two lines "
            f"of the doc comment why they stay long, starting '{args.marker}'.",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
