//! PEP 508 dependency specifiers (for Requires-Dist), validated with a small
//! recursive-descent parser: name, extras, version specifiers or a URL, and
//! an environment-marker expression. The variant markers of the PEP 825
//! draft (`"amd :: gfx_arch :: gfx1201" in variant_properties`) are
//! accepted by [`parse_variant_requirement`] only, for variant wheels: pip,
//! uv and `packaging` refuse them in any other wheel today.
//! Hand-written rather than `pep508_rs` (0.9.2): that crate cannot parse the
//! variant markers of PEP 825 (`variant_properties`, ...) that variant
//! wheels need, and it would add 44 crates (url with ICU, regex, itertools)
//! to a cold build for validation alone; the differential tests
//! (`packaging.rs`, `tests/packaging_metadata.rs`) hold its verdicts to
//! `packaging`'s.

use crate::names::validate_name;
use crate::variant::{parse_variant_path, validate_variant_key, validate_variant_label};
use crate::version::normalize_version;
use anyhow::{anyhow, bail, Result};

/// What a valid requirement refers to; used to cross-check extras.
#[derive(Debug, Default)]
pub struct Requirement {
    pub name: String,
    pub extras: Vec<String>,
    /// Values compared with the `extra` marker variable.
    pub marker_extras: Vec<String>,
}

const MARKER_VARS: &[&str] = &[
    "python_version",
    "python_full_version",
    "os_name",
    "sys_platform",
    "platform_release",
    "platform_system",
    "platform_version",
    "platform_machine",
    "platform_python_implementation",
    "implementation_name",
    "implementation_version",
    "extra",
    "extras",
    "dependency_groups",
];

/// The PEP 825 draft's markers: three sets (matched with `in` / `not in`
/// only) and the label, a string.
const VARIANT_SETS: &[&str] = &[
    "variant_namespaces",
    "variant_features",
    "variant_properties",
];
const VARIANT_LABEL: &str = "variant_label";

const OPS: &[&str] = &["===", "~=", "==", "!=", "<=", ">=", "<", ">"];

pub fn parse_requirement(s: &str) -> Result<Requirement> {
    parse(s, false)
}

/// An exact pin, `name==version` (extras and spacing allowed), split into
/// the name, the version and the marker (after `;`, trimmed; "" when
/// none); `None` for any other requirement (a range, `===`, several
/// specifiers, a URL). Callers compare names PEP 503-normalised and
/// versions as PEP 440 equality does.
pub fn exact_pin(requirement: &str) -> Option<(String, String, String)> {
    let (spec, marker) = match requirement.split_once(';') {
        Some((s, m)) => (s, m.trim()),
        None => (requirement, ""),
    };
    let spec: String = spec.chars().filter(|c| !c.is_whitespace()).collect();
    let (name, version) = spec.split_once("==")?;
    let name = name.split('[').next().unwrap_or(name);
    let bad = |c: char| "=<>!~,@".contains(c);
    if name.is_empty() || version.is_empty() || version.contains(bad) || name.contains(bad) {
        return None;
    }
    Some((name.to_string(), version.to_string(), marker.to_string()))
}

/// A requirement of a variant wheel's METADATA: PEP 508 plus the variant
/// markers (`variant_namespaces`, `variant_features`, `variant_properties`,
/// `variant_label`), whose literals must follow the draft's character rules.
pub fn parse_variant_requirement(s: &str) -> Result<Requirement> {
    parse(s, true)
}

fn parse(s: &str, variant: bool) -> Result<Requirement> {
    let mut p = P { s, i: 0, variant };
    p.parse().map_err(|e| anyhow!("invalid requirement {s:?}: {e} (PEP 508, e.g. \"numpy>=1.26; python_version >= '3.12'\")"))
}

/// Validates a version specifier set such as Requires-Python's ">=3.10,<4".
pub fn validate_specifiers(s: &str) -> Result<()> {
    let mut p = P {
        s,
        i: 0,
        variant: false,
    };
    p.specifiers()
        .and_then(|_| {
            if p.at_end() {
                Ok(())
            } else {
                bail!("unexpected text {:?} at offset {}", p.rest(), p.i)
            }
        })
        .map_err(|e| {
            anyhow!("invalid version specifiers {s:?}: {e} (e.g. \">=3.10\" or \">=3.10,<3.14\")")
        })
}

struct P<'a> {
    s: &'a str,
    i: usize,
    /// Whether the variant markers are allowed (a variant wheel's).
    variant: bool,
}

impl P<'_> {
    fn rest(&self) -> &str {
        &self.s[self.i..]
    }
    fn ws(&mut self) {
        while self.rest().starts_with([' ', '\t']) {
            self.i += 1;
        }
    }
    fn eat(&mut self, w: &str) -> bool {
        self.ws();
        if self.rest().starts_with(w) {
            self.i += w.len();
            true
        } else {
            false
        }
    }
    fn ident(&mut self) -> String {
        self.ws();
        let n = self
            .rest()
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
            .unwrap_or(self.rest().len());
        let out = self.rest()[..n].to_string();
        self.i += n;
        out
    }
    fn at_end(&mut self) -> bool {
        self.ws();
        self.i == self.s.len()
    }

    fn parse(&mut self) -> Result<Requirement> {
        let mut r = Requirement {
            name: self.ident(),
            ..Default::default()
        };
        if r.name.is_empty() {
            bail!("expected a distribution name at the start");
        }
        validate_name(&r.name)?;
        if self.eat("[") && !self.eat("]") {
            loop {
                let e = self.ident();
                if e.is_empty() {
                    bail!("expected an extra name inside [...] at offset {}", self.i);
                }
                validate_name(&e).map_err(|_| anyhow!("invalid extra name {e:?}"))?;
                r.extras.push(e);
                if self.eat("]") {
                    break;
                }
                if !self.eat(",") {
                    bail!(
                        "expected ',' or ']' in the extras list at offset {}",
                        self.i
                    );
                }
            }
        }
        self.ws();
        if self.eat("@") {
            self.ws();
            let n = self
                .rest()
                .find([' ', '\t', ';'])
                .unwrap_or(self.rest().len());
            let url = &self.rest()[..n];
            if !url.contains("://") && !url.starts_with("file:") {
                bail!("expected a URL after '@', got {url:?}");
            }
            self.i += n;
            // A URL must be followed by whitespace before the marker's ';'.
            if self.rest().starts_with(';') {
                bail!("put a space between the URL and ';'");
            }
        } else if self.eat("(") {
            self.specifiers()?;
            if !self.eat(")") {
                bail!(
                    "expected ')' after the version specifiers at offset {}",
                    self.i
                );
            }
        } else {
            self.ws();
            if self.rest().starts_with(|c: char| "=!<>~".contains(c)) {
                self.specifiers()?;
            }
        }
        if self.eat(";") {
            self.marker_or(&mut r)?;
        }
        if !self.at_end() {
            bail!("unexpected text {:?} at offset {}", self.rest(), self.i);
        }
        Ok(r)
    }

    fn specifiers(&mut self) -> Result<()> {
        loop {
            self.ws();
            let op = OPS
                .iter()
                .find(|op| self.rest().starts_with(**op))
                .ok_or_else(|| {
                    anyhow!(
                        "expected a version operator (one of {}) at offset {}",
                        OPS.join(" "),
                        self.i
                    )
                })?;
            self.i += op.len();
            self.ws();
            let n = self
                .rest()
                .find(|c: char| !(c.is_ascii_alphanumeric() || "._-*+!".contains(c)))
                .unwrap_or(self.rest().len());
            let v = self.rest()[..n].to_string();
            let v = v.as_str();
            self.i += n;
            if v.is_empty() {
                bail!("missing version after {op:?}");
            }
            match *op {
                "===" => {}
                "==" | "!=" if v.ends_with(".*") => {
                    let base = &v[..v.len() - 2];
                    if base.contains('+') {
                        bail!("a prefix match ({op}{v}) cannot have a local version");
                    }
                    normalize_version(base)?;
                }
                _ => {
                    if v.contains('*') {
                        bail!("'*' is only allowed as a trailing '.*' with == or != ({op}{v})");
                    }
                    normalize_version(v)?;
                    if *op == "~=" && !v.contains('.') {
                        bail!("~= needs at least two release segments ({op}{v})");
                    }
                }
            }
            if !self.eat(",") {
                return Ok(());
            }
        }
    }

    fn marker_or(&mut self, r: &mut Requirement) -> Result<()> {
        self.marker_and(r)?;
        while self.keyword("or") {
            self.marker_and(r)?;
        }
        Ok(())
    }

    fn marker_and(&mut self, r: &mut Requirement) -> Result<()> {
        self.marker_expr(r)?;
        while self.keyword("and") {
            self.marker_expr(r)?;
        }
        Ok(())
    }

    fn keyword(&mut self, k: &str) -> bool {
        let save = self.i;
        self.ws();
        let had_space = self.i > save || self.s[..self.i].ends_with([')', '"', '\'']);
        if had_space && self.rest().starts_with(k) {
            let after = self.rest()[k.len()..].chars().next();
            if matches!(after, Some(' ' | '\t' | '(' | '"' | '\'')) {
                self.i += k.len();
                return true;
            }
        }
        self.i = save;
        false
    }

    fn marker_expr(&mut self, r: &mut Requirement) -> Result<()> {
        if self.eat("(") {
            self.marker_or(r)?;
            if !self.eat(")") {
                bail!("expected ')' in the marker at offset {}", self.i);
            }
            return Ok(());
        }
        let lhs = self.marker_var()?;
        self.ws();
        let op = if let Some(op) = OPS.iter().find(|op| self.rest().starts_with(**op)) {
            self.i += op.len();
            op.to_string()
        } else if self.keyword_plain("in") {
            "in".into()
        } else if self.keyword_plain("not") {
            if !self.keyword("in") {
                bail!("expected 'in' after 'not' at offset {}", self.i);
            }
            "not in".into()
        } else {
            bail!("expected a marker operator (==, !=, <, <=, >, >=, ~=, ===, in, not in) at offset {}", self.i);
        };
        let rhs = self.marker_var()?;
        for (a, b) in [(&lhs, &rhs), (&rhs, &lhs)] {
            if let (Var::Name(v), Var::Str(s)) = (a, b) {
                if v == "extra" {
                    r.marker_extras.push(s.clone());
                }
            }
        }
        if matches!((&lhs, &rhs), (Var::Str(_), Var::Str(_))) {
            bail!("a marker compares two string literals; one side must be a variable such as python_version");
        }
        check_variant_marker(&lhs, &op, &rhs)
    }

    fn keyword_plain(&mut self, k: &str) -> bool {
        self.ws();
        if self.rest().starts_with(k) {
            let after = self.rest()[k.len()..].chars().next();
            if matches!(after, Some(' ' | '\t' | '"' | '\'')) {
                self.i += k.len();
                return true;
            }
        }
        false
    }

    fn marker_var(&mut self) -> Result<Var> {
        self.ws();
        if let Some(q) = self
            .rest()
            .chars()
            .next()
            .filter(|c| *c == '"' || *c == '\'')
        {
            let body = &self.rest()[1..];
            let end = body
                .find(q)
                .ok_or_else(|| anyhow!("unterminated string in the marker"))?;
            let v = body[..end].to_string();
            self.i += end + 2;
            return Ok(Var::Str(v));
        }
        let n = self
            .rest()
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(self.rest().len());
        let name = self.rest()[..n].to_string();
        let is_variant = VARIANT_SETS.contains(&name.as_str()) || name == VARIANT_LABEL;
        if is_variant && !self.variant {
            bail!(
                "{name} at offset {} is a wheel-variant marker (PEP 825 draft): only a variant \
                 wheel's METADATA may use it; pip, uv and packaging reject it in any other",
                self.i
            );
        }
        if !MARKER_VARS.contains(&name.as_str()) && !is_variant {
            bail!(
                "unknown marker variable {name:?} at offset {} (known: {})",
                self.i,
                MARKER_VARS.join(", ")
            );
        }
        self.i += n;
        Ok(Var::Name(name))
    }
}

enum Var {
    Name(String),
    Str(String),
}

/// The draft's rules for one comparison with a variant marker: a set is
/// matched with `"literal" in set` (or `not in`) only, and its literal is a
/// namespace, a `namespace :: feature` or a property by the character
/// rules; the label is compared as a string.
fn check_variant_marker(lhs: &Var, op: &str, rhs: &Var) -> Result<()> {
    let (name, literal, var_on_right) = match (lhs, rhs) {
        (Var::Str(s), Var::Name(n)) => (n, s, true),
        (Var::Name(n), Var::Str(s)) => (n, s, false),
        _ => return Ok(()),
    };
    if name == VARIANT_LABEL {
        if !literal.is_empty() {
            validate_variant_label(literal)?;
        }
        return Ok(());
    }
    if !VARIANT_SETS.contains(&name.as_str()) {
        return Ok(());
    }
    if !var_on_right || !matches!(op, "in" | "not in") {
        bail!("{name} is a set: match it as \"...\" in {name} (or not in)");
    }
    match name.as_str() {
        "variant_namespaces" => validate_variant_key("namespace", literal),
        "variant_features" => parse_variant_path(literal, 2).map(|_| ()),
        _ => parse_variant_path(literal, 3).map(|_| ()),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    #[test]
    fn exact_pins() {
        let pin = |r: &str| super::exact_pin(r);
        let some = |n: &str, v: &str, m: &str| Some((n.to_string(), v.to_string(), m.to_string()));
        assert_eq!(pin("torch==2.9.0"), some("torch", "2.9.0", ""));
        assert_eq!(
            pin("amd-torch-device-gfx1201 == 2.9.0+rocm7.13.0a20261201; extra == \"device-gfx1201\""),
            some("amd-torch-device-gfx1201", "2.9.0+rocm7.13.0a20261201", "extra == \"device-gfx1201\"")
        );
        assert_eq!(pin("x[a,b]==1"), some("x", "1", ""));
        for r in [
            "x>=1",
            "x===1",
            "x==1,<2",
            "x",
            "==1",
            "x==",
            "x @ https://h/x.whl",
            "x~=1.0",
        ] {
            assert_eq!(pin(r), None, "{r}");
        }
    }

    use super::*;

    /// Valid requirements, also checked against `packaging` (src/packaging.rs).
    pub(crate) const VALID: &[&str] = &[
        "jax-rocm7-pjrt==0.7.1",
        "numpy>=1.26; python_version >= \"3.12\"",
        "foo[bar,baz]>=1",
        "foo [ bar , baz ] ( >=1 , <2 )",
        "foo[]",
        "foo",
        "foo==1.*",
        "foo~=1.2",
        "foo===weird",
        "foo>=1,!=1.5.*,<3; (os_name == 'posix' or sys_platform=='win32') and extra == \"test\"",
        "foo; 'linux' in sys_platform",
        "foo; platform_machine not in 'x86_64 aarch64'",
        "pip @ https://example.org/pip.whl ; python_version>'3'",
    ];

    #[test]
    fn valid() {
        for ok in VALID {
            parse_requirement(ok).unwrap_or_else(|e| panic!("{ok:?}: {e:#}"));
        }
        let r = parse_requirement("pytest; extra == 'test' or extra == \"dev\"").unwrap();
        assert_eq!(r.marker_extras, ["test", "dev"]);
    }

    /// Variant markers: accepted in a variant wheel's requirements, refused
    /// in any other (`packaging` refuses them too: src/packaging.rs).
    pub(crate) const VARIANT: &[&str] = &[
        "x-device-gfx1201==1.0; \"amd :: gfx_arch :: gfx1201\" in variant_properties",
        "x; 'amd' in variant_namespaces and 'amd::gfx_arch' not in variant_features",
        "x; variant_label == 'rocm' or variant_label != \"\"",
        "x; python_version >= '3.12' and (\"amd :: gfx_arch :: gfx90a\" in variant_properties)",
    ];

    #[test]
    fn variant_markers_only_in_variant_wheels() {
        for r in VARIANT {
            parse_variant_requirement(r).unwrap_or_else(|e| panic!("{r:?}: {e:#}"));
            let e = format!("{:#}", parse_requirement(r).unwrap_err());
            assert!(e.contains("is a wheel-variant marker"), "{r:?}: {e}");
        }
        // Plain requirements stay valid in a variant wheel.
        for ok in VALID {
            parse_variant_requirement(ok).unwrap_or_else(|e| panic!("{ok:?}: {e:#}"));
        }
        for (bad, why) in [
            (
                "x; variant_properties == 'amd :: gfx_arch :: gfx1201'",
                "is a set",
            ),
            (
                "x; variant_properties in 'amd :: gfx_arch :: gfx1201'",
                "is a set",
            ),
            (
                "x; 'amd :: gfx_arch :: gfx12-generic' in variant_properties",
                "no '-'",
            ),
            (
                "x; 'amd :: gfx_arch' in variant_properties",
                "is not a variant",
            ),
            (
                "x; 'AMD' in variant_namespaces",
                "invalid variant namespace",
            ),
            ("x; variant_label == 'ROCm'", "invalid variant label"),
            ("x; 'a' in variant_propertiess", "unknown marker variable"),
        ] {
            let e = format!("{:#}", parse_variant_requirement(bad).unwrap_err());
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }

    #[test]
    fn invalid() {
        for (bad, why) in [
            ("", "expected a distribution name"),
            ("-foo", "invalid distribution name"),
            ("foo>=", "missing version"),
            ("foo>=1.0.x", "not a PEP 440"),
            ("foo=1", "expected a version operator"),
            ("foo[bar", "expected ',' or ']'"),
            ("foo; python_versionn > '3'", "unknown marker variable"),
            ("foo; python_version", "expected a marker operator"),
            ("foo; python_version > '3", "unterminated"),
            ("foo; 'a' == 'b'", "two string literals"),
            ("foo >=1 bar", "unexpected text"),
            ("foo~=1", "two release segments"),
            ("foo>=1.*", "trailing '.*'"),
            ("foo @ notaurl", "expected a URL"),
            ("foo (>=1", "expected ')'"),
        ] {
            let e = format!("{:#}", parse_requirement(bad).unwrap_err());
            assert!(e.contains(why), "{bad:?}: {e}");
            assert!(e.contains("invalid requirement"), "{e}");
        }
    }
}
