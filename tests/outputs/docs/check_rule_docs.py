#!/usr/bin/env python3
"""Checks the hand-written rule reference (docs/rules/) against the sources.

Stardoc is not available offline, so the pages are written by hand; this
keeps them true. The .bzl files are Starlark, which Python parses: each is
executed once with stand-ins for Bazel's built-ins (`rule`, `attr.*`,
`provider`, `load`, ...), so attribute dicts are whatever the sources
assemble (dict(), `|`, comprehensions, dicts loaded from other files) with no
pattern matching on source text. Macros are called with marker values to see
which of the rule's attributes the caller sets.

Checked, with a message naming the page and the fix:
- every rule and macro exported by rules/defs.bzl has a section (a heading
  that is just `name`) whose attribute table lists exactly its public
  attributes, each with the right type and default;
- every provider exported by rules/defs.bzl has a section on a page whose
  field table lists exactly its fields;
- the flags table lists exactly the command-line build settings declared in
  the given BUILD files, with their defaults;
- every rule section quotes an example (`<!-- example: PATH -->` before a
  fenced block) that appears verbatim in PATH;
- every `--//...` flag and every `...Info` provider a page names exists;
- README.md links every page.

Usage: check_rule_docs.py ROOT BUILD_FILE... (BUILD files relative to ROOT)
       check_rule_docs.py --self-test ROOT BUILD_FILE...
--self-test also proves the check can fail: for every documented rule it
drops an attribute row, adds one that does not exist, changes a default and
a type and edits the quoted example; for every provider it drops a field;
for the flags it changes a default and drops a row. Each such page must be
reported.

An example from a generated BUILD file, which has no source to compare with,
is marked `<!-- example: @repo//:BUILD.bazel (generated) -->`.
"""

import ast
import inspect
import os
import re
import sys
import types

# ---------------------------------------------------------------------------
# Starlark stand-ins


class Opaque:
    """Anything the docs do not look at (toolchain utils, CcInfo, select, ...)."""

    def __init__(self, what="opaque"):
        self.what = what

    def __call__(self, *args, **kwargs):
        return Opaque(self.what + "()")

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Opaque(self.what + "." + name)

    def __iter__(self):
        return iter(())

    def __add__(self, other):
        return self

    __radd__ = __or__ = __ror__ = __add__

    def __repr__(self):
        return "<" + self.what + ">"


# Starlark attribute kinds as the pages spell them.
ATTR_TYPES = {
    "bool": "bool",
    "int": "int",
    "int_list": "int list",
    "label": "label",
    "label_keyed_string_dict": "dict label → string",
    "label_list": "label list",
    "output": "output",
    "output_list": "output list",
    "string": "string",
    "string_dict": "dict string → string",
    "string_list": "string list",
    "string_list_dict": "dict string → string list",
}

# Defaults of attr.<kind>() without `default`.
ATTR_DEFAULTS = {
    "bool": False,
    "int": 0,
    "string": "",
    "label": None,
    "output": None,
}


class LabelValue(str):
    """Label("//x"): behaves as its string; anything else about it is opaque."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Opaque("Label.%s" % name)


class Attr:
    def __init__(self, kind, kwargs):
        self.kind = kind
        self.kwargs = kwargs

    @property
    def type(self):
        return ATTR_TYPES.get(self.kind, self.kind.replace("_", " "))

    @property
    def mandatory(self):
        return bool(self.kwargs.get("mandatory"))

    @property
    def default(self):
        if "default" in self.kwargs:
            return self.kwargs["default"]
        if self.kind in ATTR_DEFAULTS:
            return ATTR_DEFAULTS[self.kind]
        return {} if self.kind.endswith("dict") else []


class AttrModule:
    def __getattr__(self, kind):
        if kind.startswith("__"):
            raise AttributeError(kind)
        return lambda **kwargs: Attr(kind, kwargs)


class BuildSetting:
    def __init__(self, kind, flag=False, **_):
        self.kind = kind
        self.flag = flag


class ConfigModule:
    def __getattr__(self, kind):
        if kind.startswith("__"):
            raise AttributeError(kind)
        return lambda **kwargs: BuildSetting(kind, **kwargs)


# Rule instantiations, recorded while a macro runs.
RECORDED = []


class Rule:
    def __init__(self, implementation=None, attrs=None, build_setting=None, **kwargs):
        self.attrs = dict(attrs or {})
        self.build_setting = build_setting
        self.kwargs = kwargs

    def __call__(self, **kwargs):
        RECORDED.append((self, kwargs))


class Provider:
    def __init__(self, doc="", fields=None, init=None):
        self.doc = doc
        self.fields = list(fields or [])


def provider(doc="", fields=None, init=None, **_):
    p = Provider(doc, fields, init)
    return (p, Opaque("raw constructor")) if init else p


def fail(*args, **_):
    raise RuntimeError("fail(): " + " ".join(str(a) for a in args))


def struct(**kwargs):
    return types.SimpleNamespace(**kwargs)


def starlark_builtins():
    opaque_names = [
        "CcInfo", "DefaultInfo", "OutputGroupInfo", "PyInfo", "cc_common", "platform_common",
        "config_common", "native", "json", "depset", "select", "transition", "aspect",
        "repository_rule", "module_extension", "tag_class", "subrule", "exec_group",
        "apple_common", "coverage_common", "java_common", "testing", "proto_common", "glob",
        "visibility", "analysis_test_transition", "materializer_rule", "macro",
    ]
    env = {n: Opaque(n) for n in opaque_names}
    env.update(
        rule=Rule, provider=provider, attr=AttrModule(), config=ConfigModule(),
        Label=LabelValue, fail=fail, struct=struct,
        print=lambda *a, **k: None,
    )
    return env


# ---------------------------------------------------------------------------
# Loading .bzl files


class Loader:
    def __init__(self, root):
        self.root = root
        self.modules = {}

    def path_of(self, label, current):
        """Workspace path of a .bzl label, or None for other repositories."""
        if label.startswith("@"):
            repo, _, rest = label[1:].partition("//")
            if repo.lstrip("@") not in ("", "rules_rocm"):
                return None
            label = "//" + rest
        if label.startswith("//"):
            pkg, _, name = label[2:].partition(":")
            return os.path.join(pkg, name)
        if label.startswith(":"):
            # Relative to the package, which may be a parent of the loading
            # file's directory (a .bzl file in a subdirectory without a
            # BUILD file belongs to the package above it).
            d = os.path.dirname(current)
            while d and not os.path.exists(os.path.join(self.root, d, label[1:])):
                d = os.path.dirname(d)
            return os.path.join(d, label[1:])
        raise ValueError("%s: cannot resolve load(%r)" % (current, label))

    def load_into(self, env, current):
        def load(label, *names, **aliases):
            path = self.path_of(label, current)
            module = self.module(path) if path else None
            for local, exported in [(n, n) for n in names] + list(aliases.items()):
                if module is None:
                    env[local] = Opaque(label + "%" + exported)
                elif exported not in module:
                    raise NameError("%s: %s does not export %s" % (current, label, exported))
                else:
                    env[local] = module[exported]

        return load

    def module(self, path):
        if path not in self.modules:
            env = starlark_builtins()
            env["load"] = self.load_into(env, path)
            with open(os.path.join(self.root, path), encoding="utf-8") as f:
                source = f.read()
            try:
                exec(compile(source, path, "exec"), env)  # noqa: S102 - Starlark is the input
            except NameError as e:
                raise SystemExit(
                    "%s: %s. A Starlark built-in this checker has no stand-in for: add it to "
                    "starlark_builtins() in tests/outputs/docs/check_rule_docs.py" % (path, e)
                )
            self.modules[path] = env
        return self.modules[path]


def build_file_flags(loader, build_file):
    """Command-line build settings declared in a BUILD file: {label: (type, default)}."""
    with open(os.path.join(loader.root, build_file), encoding="utf-8") as f:
        tree = ast.parse(f.read(), build_file)
    env = starlark_builtins()
    env["load"] = loader.load_into(env, build_file)
    pkg = os.path.dirname(build_file)
    flags = {}
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            continue
        call = stmt.value
        if not isinstance(call.func, ast.Name):
            continue
        if call.func.id == "load":
            eval(compile(ast.Expression(call), build_file, "eval"), env)  # noqa: S307
            continue
        rule = env.get(call.func.id)
        if not (isinstance(rule, Rule) and rule.build_setting and rule.build_setting.flag):
            continue
        kw = {
            k.arg: eval(compile(ast.Expression(k.value), build_file, "eval"), env)  # noqa: S307
            for k in call.keywords
            if k.arg in ("name", "build_setting_default")
        }
        flags["//%s:%s" % (pkg, kw["name"])] = (rule.build_setting.kind, kw.get("build_setting_default"))
    return flags


# ---------------------------------------------------------------------------
# What the sources say


class Marker(Opaque):
    """A value a macro's caller passed: shows which rule attributes the caller sets.

    `copts + ["-x"]` and the like stay Markers, so a macro that extends a
    parameter before passing it on still forwards the caller's attribute.
    """

    def __init__(self, param):
        Opaque.__init__(self, "parameter " + param)
        self.param = param

    def __add__(self, other):
        return self

    __radd__ = __or__ = __ror__ = __add__


def macro_attrs(name, func):
    """{attribute: (type, default or REQUIRED)} a macro's caller can set."""
    sig = inspect.signature(func)
    params = {
        p.name: p
        for p in sig.parameters.values()
        if p.name != "name" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }
    del RECORDED[:]
    try:
        func(name="doc_check_target", **{p: Marker(p) for p in params})
    except Exception as e:  # noqa: BLE001 - any failure means: cannot read this macro
        raise SystemExit("%s: calling the macro with stand-in values failed (%s: %s); "
                         "tests/outputs/docs/check_rule_docs.py needs to learn what it does"
                         % (name, type(e).__name__, e))
    main = [(r, kw) for r, kw in RECORDED if kw.get("name") == "doc_check_target"]
    if len(main) != 1:
        raise SystemExit("%s: the macro must create exactly one rule named after it (found %d)" % (name, len(main)))
    rule, kwargs = main[0]
    attrs = {}
    for attr_name, a in rule.attrs.items():
        if attr_name.startswith("_"):
            continue
        if attr_name in kwargs and not isinstance(kwargs[attr_name], Marker):
            continue  # set by the macro itself (hip_library's `device`)
        if attr_name in params:
            default = params[attr_name].default
            attrs[attr_name] = (a.type, REQUIRED if default is inspect.Parameter.empty else default)
        else:
            attrs[attr_name] = (a.type, REQUIRED if a.mandatory else a.default)
    for p in params:
        if p not in rule.attrs and p not in COMMON_ATTRS:
            raise SystemExit("%s: parameter %s is not an attribute of the rule it creates; document it by "
                             "hand and teach tests/outputs/docs/check_rule_docs.py about it" % (name, p))
    return attrs


# Bazel's attributes of every rule: the pages name them once, not per rule.
COMMON_ATTRS = {
    "compatible_with", "deprecation", "exec_compatible_with", "exec_properties", "features",
    "restricted_to", "tags", "target_compatible_with", "testonly", "toolchains", "visibility",
}


REQUIRED = object()


def rule_attrs(rule):
    return {
        n: (a.type, REQUIRED if a.mandatory else a.default)
        for n, a in rule.attrs.items()
        if not n.startswith("_")
    }


def public_api(loader):
    defs = loader.module("rules/defs.bzl")
    builtins = starlark_builtins()
    rules, providers, functions = {}, {}, set()
    for name, value in defs.items():
        if name.startswith("_") or name in builtins or name in ("load", "__builtins__"):
            continue
        if isinstance(value, Rule):
            rules[name] = rule_attrs(value)
        elif isinstance(value, Provider):
            providers[name] = value.fields
        elif inspect.isfunction(value):
            if "name" in inspect.signature(value).parameters:
                rules[name] = macro_attrs(name, value)
            else:
                functions.add(name)
    return rules, providers, functions


def all_providers(loader):
    names = {}
    for module in loader.modules.values():
        for name, value in module.items():
            if isinstance(value, Provider) and not name.startswith("_"):
                names[name] = value.fields
    return names


def starlark_repr(v):
    if v is REQUIRED:
        return "required"
    if isinstance(v, LabelValue):
        return 'Label("%s")' % v
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, str):
        return '"%s"' % v
    if isinstance(v, list):
        return "[" + ", ".join(starlark_repr(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join("%s: %s" % (starlark_repr(k), starlark_repr(x)) for k, x in v.items()) + "}"
    if isinstance(v, Opaque) and "%" in v.what:
        # A value from a generated repository (@rocm_toolkits's
        # DEFAULT_TOOLKIT): the page names the constant.
        return v.what.rpartition("%")[2]
    return repr(v)


# ---------------------------------------------------------------------------
# What the pages say

HEADING = re.compile(r"^(#{1,6}) +(.*?)\s*$")
SECTION = re.compile(r"^`(\w+)`$")
EXAMPLE = re.compile(r"^<!-- example: (\S+?)( \(generated\))? -->$")
INHERIT = re.compile(r"[Ee]very attribute of \[?`(\w+)`\]?(?:\([^)]*\))?(?: except ([^:.;]*))?")


def split_row(line):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    return cells


def tables(lines):
    """[(header cells, [(line number, row cells)])] of the markdown tables in `lines`."""
    out = []
    i = 0
    while i < len(lines):
        n, line = lines[i]
        if line.startswith("|") and i + 1 < len(lines) and re.match(r"^\|[\s:|-]+\|$", lines[i + 1][1]):
            header = [c.lower() for c in split_row(line)]
            rows = []
            i += 2
            while i < len(lines) and lines[i][1].startswith("|"):
                rows.append((lines[i][0], split_row(lines[i][1])))
                i += 1
            out.append((header, rows))
        else:
            i += 1
    return out


def unticked(cell):
    m = re.fullmatch(r"`([^`]*)`", cell)
    return m.group(1) if m else None


class Page:
    def __init__(self, path, text):
        self.path = path
        self.lines = text.splitlines()
        self.sections = {}  # name -> [(line number, text)]
        current = None
        level = 0
        for n, line in enumerate(self.lines, 1):
            h = HEADING.match(line)
            if h:
                m = SECTION.match(h.group(2))
                if m:
                    current, level = m.group(1), len(h.group(1))
                    self.sections[current] = []
                    continue
                if current and len(h.group(1)) <= level:
                    current = None
            if current:
                self.sections[current].append((n, line))


def section_examples(root, page, name, body, errors):
    found = 0
    for i, (n, line) in enumerate(body):
        m = EXAMPLE.match(line.strip())
        if not m:
            continue
        if i + 1 >= len(body) or not body[i + 1][1].startswith("```"):
            errors.append("%s:%d: an example marker must be followed by a fenced code block" % (page.path, n))
            continue
        block = []
        for _, text in body[i + 2:]:
            if text.startswith("```"):
                break
            block.append(text.rstrip())
        found += 1
        if m.group(2):
            continue  # generated BUILD content: no file to compare with
        src = os.path.join(root, m.group(1))
        if not os.path.isfile(src):
            errors.append("%s:%d: example source %s does not exist" % (page.path, n, m.group(1)))
            continue
        with open(src, encoding="utf-8") as f:
            text = "\n".join(line.rstrip() for line in f.read().splitlines())
        if "\n".join(block) not in text:
            errors.append("%s:%d: the example for %s is not (any more) in %s; copy it from there again"
                          % (page.path, n, name, m.group(1)))
    if not found:
        errors.append("%s: section `%s` quotes no example (<!-- example: examples/.../BUILD.bazel --> "
                      "followed by a fenced block copied from that file)" % (page.path, name))


def documented_attrs(page, body, errors, name):
    """{attribute: (type, default cell, line)} and the inherited rule, if any."""
    attrs = {}
    inherit = None
    text = " ".join(t for _, t in body)
    m = INHERIT.search(text)
    if m:
        inherit = (m.group(1), re.findall(r"`(\w+)`", m.group(2) or ""))
    for header, rows in tables(body):
        if not header or header[0] != "attribute":
            continue
        if header[:3] != ["attribute", "type", "default"]:
            errors.append("%s: the attribute table of %s must start with | attribute | type | default |"
                          % (page.path, name))
            continue
        for n, cells in rows:
            attr = unticked(cells[0])
            if attr is None or len(cells) < 4:
                errors.append("%s:%d: malformed attribute row "
                              "(| `name` | type | `default` or required | what it does |)" % (page.path, n))
                continue
            if attr in attrs:
                errors.append("%s:%d: attribute %s listed twice" % (page.path, n, attr))
            attrs[attr] = (cells[1], cells[2], n)
    return attrs, inherit


def check_rule(rules, page, name, body, errors):
    actual = rules[name]
    documented, inherit = documented_attrs(page, body, errors, name)
    expected = dict(actual)
    if inherit:
        base, excepted = inherit
        if base not in rules:
            errors.append("%s: %s inherits from `%s`, which is not a public rule" % (page.path, name, base))
        else:
            for a, spec in rules[base].items():
                if a in excepted or a in documented:
                    continue
                if a not in actual:
                    errors.append("%s: %s has no attribute %s of %s: add it to the `except` list"
                                  % (page.path, name, a, base))
                elif actual[a] != spec:
                    errors.append("%s: %s's %s differs from %s's (%s, %s): list it in its table"
                                  % (page.path, name, a, base, actual[a][0], starlark_repr(actual[a][1])))
                expected.pop(a, None)
            for a in excepted:
                if a not in rules[base]:
                    errors.append("%s: %s excepts %s, which %s does not have" % (page.path, name, a, base))
    for a in sorted(set(expected) - set(documented)):
        errors.append("%s: attribute %s of %s is not documented; add a row to its table (type %s, default %s)"
                      % (page.path, a, name, expected[a][0], starlark_repr(expected[a][1])))
    for a in sorted(set(documented) - set(actual)):
        errors.append("%s:%d: %s has no attribute %s (any more); remove its row"
                      % (page.path, documented[a][2], name, a))
    for a in sorted(set(documented) & set(expected)):
        typ, default, n = documented[a]
        if typ != expected[a][0]:
            errors.append("%s:%d: %s.%s has type %s, not %s" % (page.path, n, name, a, expected[a][0], typ))
        want = starlark_repr(expected[a][1])
        got = default if default == "required" else unticked(default)
        if got != want:
            errors.append("%s:%d: %s.%s defaults to %s, the page says %s" % (page.path, n, name, a, want, default))


def check_provider(fields, page, name, body, errors):
    documented = {}
    for header, rows in tables(body):
        if header and header[0] == "field":
            for n, cells in rows:
                documented[unticked(cells[0])] = n
    for f in fields:
        if f not in documented:
            errors.append("%s: field %s of %s is not documented" % (page.path, f, name))
    for f, n in documented.items():
        if f not in fields:
            errors.append("%s:%d: %s has no field %s (any more)" % (page.path, n, name, f))


def check_flags(flags, pages, errors):
    documented = {}
    for page in pages:
        for header, rows in tables(list(enumerate(page.lines, 1))):
            if header[:3] != ["flag", "type", "default"]:
                continue
            for n, cells in rows:
                flag = unticked(cells[0])
                if flag is None or not flag.startswith("--//"):
                    errors.append("%s:%d: a flag row names its flag as `--//pkg:name`" % (page.path, n))
                    continue
                documented[flag[2:]] = (page, cells[1], cells[2], n)
    for label, (kind, default) in sorted(flags.items()):
        if label not in documented:
            errors.append("flag --%s is documented on no page (a | flag | type | default | table row)" % label)
            continue
        page, typ, got, n = documented[label]
        if typ != kind:
            errors.append("%s:%d: --%s is a %s flag, not %s" % (page.path, n, label, kind, typ))
        if unticked(got) != starlark_repr(default):
            errors.append("%s:%d: --%s defaults to %s, the page says %s"
                          % (page.path, n, label, starlark_repr(default), got))
    for label, (page, _, _, n) in documented.items():
        if label not in flags:
            errors.append("%s:%d: there is no flag --%s (any more)" % (page.path, n, label))


def check_references(page, flags, providers, errors):
    known = set(providers) | {"CcInfo", "DefaultInfo", "OutputGroupInfo", "ToolchainInfo", "TemplateVariableInfo"}
    for n, line in enumerate(page.lines, 1):
        for flag in re.findall(r"--(?:@rules_rocm)?(//[\w/]*:\w+)", line):
            if flag not in flags:
                errors.append("%s:%d: names --%s, which is not a flag" % (page.path, n, flag))
        for p in re.findall(r"`(\w+Info)\b", line):
            if p not in known:
                errors.append("%s:%d: names provider %s, which rules_rocm does not define" % (page.path, n, p))


def check(root, build_files, pages, readme):
    loader = Loader(root)
    rules, providers, functions = public_api(loader)
    flags = {}
    for b in build_files:
        flags.update(build_file_flags(loader, b))
    every_provider = all_providers(loader)
    errors = []
    where = {}
    for page in pages:
        for name, body in page.sections.items():
            if name in where:
                errors.append("%s: `%s` is documented twice (also in %s)" % (page.path, name, where[name]))
            where[name] = page.path
            if name in rules:
                check_rule(rules, page, name, body, errors)
                section_examples(root, page, name, body, errors)
            elif name in every_provider:
                check_provider(every_provider[name], page, name, body, errors)
            elif name in functions:
                pass  # a public helper function: prose only
            else:
                errors.append("%s: section `%s` is neither a public rule nor a provider; public rules are "
                              "what rules/defs.bzl exports" % (page.path, name))
        check_references(page, flags, every_provider, errors)
        link = os.path.relpath(page.path, os.path.dirname(readme[0]))
        if "(" + link + ")" not in readme[1] and "(" + link + "#" not in readme[1]:
            errors.append("README.md does not link %s (its Rules reference section)" % link)
    for name in sorted(set(rules) - set(where)):
        errors.append("public rule %s (rules/defs.bzl) has no section on any page under docs/rules/; add `## `%s``"
                      % (name, name))
    for name in sorted(functions - set(where)):
        errors.append("public function %s (rules/defs.bzl) has no section under docs/rules/" % name)
    for name in sorted(set(providers) - set(where)):
        errors.append("public provider %s (rules/defs.bzl) has no section under docs/rules/" % name)
    check_flags(flags, pages, errors)
    return errors, rules


# ---------------------------------------------------------------------------


def read_pages(root):
    d = os.path.join(root, "docs", "rules")
    pages = []
    for f in sorted(os.listdir(d)):
        if f.endswith(".md"):
            with open(os.path.join(d, f), encoding="utf-8") as fh:
                pages.append(Page(os.path.join("docs", "rules", f), fh.read()))
    return pages


def mutations(page, name):
    """Broken copies of section `name` of `page`, each of which the check must reject."""
    body = page.sections[name]

    def edit(n, new_line, why):
        lines = list(page.lines)
        if new_line is None:
            del lines[n - 1]
        else:
            lines[n - 1] = new_line
        return why, Page(page.path, "\n".join(lines) + "\n")

    rows = [(n, split_row(line)) for n, line in body if line.startswith("| `")]
    if rows:
        yield edit(rows[0][0], None, "row of %s dropped" % rows[0][1][0])
    if rows and len(rows[0][1]) >= 4:  # an attribute row
        n, cells = rows[0]
        yield edit(n, page.lines[n - 1] + "\n| `no_such_attribute` | string | `\"\"` | Invented. |",
                   "invented attribute")
        other_default = "`[\"x\"]`" if cells[2] != "`[\"x\"]`" else "`[]`"
        yield edit(n, "| %s |" % " | ".join([cells[0], cells[1], other_default] + cells[3:]), "wrong default")
        other_type = "int" if cells[1] != "int" else "string"
        yield edit(n, "| %s |" % " | ".join([cells[0], other_type] + cells[2:]), "wrong type")
    for i, (n, line) in enumerate(body):
        if EXAMPLE.match(line.strip()) and "(generated)" not in line:
            yield edit(body[i + 2][0], body[i + 2][1] + "  # edited", "example edited")
            break


def flag_mutations(page):
    for n, line in enumerate(page.lines, 1):
        if line.startswith("| `--//"):
            cells = split_row(line)
            lines = list(page.lines)
            lines[n - 1] = "| %s |" % " | ".join([cells[0], cells[1], "`\"changed\"`"] + cells[3:])
            yield "flag default changed", Page(page.path, "\n".join(lines) + "\n")
            del lines[n - 1]
            yield "flag row dropped", Page(page.path, "\n".join(lines) + "\n")
            return


def self_test(root, build_files, pages, readme):
    failures = 0
    tried = 0
    for i, page in enumerate(pages):
        broken_pages = [(name, m) for name in page.sections for m in mutations(page, name)]
        broken_pages += [("flags", m) for m in flag_mutations(page)]
        for name, (why, broken) in broken_pages:
            tried += 1
            errors, _ = check(root, build_files, pages[:i] + [broken] + pages[i + 1:], readme)
            if not errors:
                failures += 1
                print("SELF-TEST FAILED: %s, %s (%s) was not reported" % (page.path, name, why))
    if tried == 0:
        print("SELF-TEST FAILED: no attribute table to break")
        return 1
    print("self-test: %d broken pages, %d not reported" % (tried, failures))
    return 1 if failures else 0


def main(argv):
    test = argv[:1] == ["--self-test"]
    if test:
        argv = argv[1:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    root, build_files = argv[0], argv[1:]
    pages = read_pages(root)
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = ("README.md", f.read())
    errors, rules = check(root, build_files, pages, readme)
    for e in errors:
        print("ERROR: " + e)
    if errors:
        print("%d error(s); the rule reference is docs/rules/*.md" % len(errors))
        return 1
    print("docs/rules: %d pages agree with %d public rules" % (len(pages), len(rules)))
    return self_test(root, build_files, pages, readme) if test else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
