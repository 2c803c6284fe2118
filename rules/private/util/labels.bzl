"""Label spellings shared by rules and repository rules."""

def label_as_typed(label, name = None):
    """`label` as users write it: //pkg:name here, @rules_rocm//pkg:name downstream.

    Bzlmod's canonical repository names (rules_rocm~ on Bazel 7, rules_rocm+
    on Bazel 8) are not what users write. `name` replaces the target name.
    """
    repo = label.workspace_name.split("~")[0].split("+")[0]
    return "{}//{}:{}".format("@" + repo if repo else "", label.package, name or label.name)

def abs_label(label):
    """`label` resolvable from a generated external repository's BUILD file.

    A label of the main repository prints without "@"; inside another
    repository that would name the other repository itself.
    """
    s = str(label)
    return s if s.startswith("@") else "@" + s

def repo_relative_path(f):
    """Path of a source or generated File relative to its repository root (`../repo/` dropped)."""
    p = f.short_path
    if p.startswith("../"):
        p = p[3:]
        p = p[p.index("/") + 1:]
    return p
