//! `variant.json` and the index's `{name}-{version}-variants.json`: the
//! variant metadata of the PEP 825 / PEP 850 drafts in schema v0.2.0, as
//! variantlib 0.2.2 reads, merges and writes it (the kpack variant test
//! holds both sides to it); beside [`crate::variant`]'s labels, properties
//! and markers. Read strictly: an unknown schema version is
//! unsupported (the draft says so), and keys variantlib refuses are
//! refused here too.

use std::collections::{BTreeMap, BTreeSet};

use crate::{
    validate_variant_key, validate_variant_label, validate_variant_value, NULL_VARIANT_LABEL,
    VARIANT_SCHEMA_URL,
};
use anyhow::{bail, Context, Result};
use serde_json::{Map, Value};

/// One variant's properties: namespace -> feature -> values (sorted).
pub type Properties = BTreeMap<String, BTreeMap<String, Vec<String>>>;

/// The keys a provider entry of `variant.json` may have (variantlib
/// 0.2.2; `build-requires` belongs to pyproject.toml only).
const PROVIDER_KEYS: &[&str] = &[
    "requires",
    "optional",
    "plugin-api",
    "static-properties",
    "feature-order",
    "builtin",
];

/// The variant metadata of one wheel (one variant) or of a package
/// version's variant wheels merged (the index's file).
#[derive(Debug, Clone, PartialEq)]
pub struct VariantInfo {
    /// `default-priorities.namespace`: every namespace, most important first.
    pub namespaces: Vec<String>,
    /// Namespace -> its provider entry, as written.
    pub providers: BTreeMap<String, Value>,
    /// Label -> properties.
    pub variants: BTreeMap<String, Properties>,
}

impl VariantInfo {
    /// One namespace's metadata: its provider (installed from `requires`,
    /// `plugin_api` its class) and `variants` (label -> properties).
    pub fn with_provider(
        namespace: &str,
        requires: &[&str],
        plugin_api: &str,
        variants: BTreeMap<String, Properties>,
    ) -> VariantInfo {
        let provider = serde_json::json!({ "requires": requires, "plugin-api": plugin_api });
        VariantInfo {
            namespaces: vec![namespace.into()],
            providers: [(namespace.to_string(), provider)].into(),
            variants,
        }
    }

    /// Reads and validates `text` (`what` names it in errors).
    pub fn parse(text: &str, what: &str) -> Result<VariantInfo> {
        let v: Value = serde_json::from_str(text).with_context(|| format!("{what} is not JSON"))?;
        Self::from_value(&v).with_context(|| format!("{what} is not valid variant metadata"))
    }

    fn from_value(v: &Value) -> Result<VariantInfo> {
        let top = object(v, "the top level")?;
        let schema = top.get("$schema").and_then(Value::as_str).unwrap_or("");
        if schema != VARIANT_SCHEMA_URL {
            bail!(
                "$schema is {schema:?}: this tool reads schema {VARIANT_SCHEMA_URL} only \
                 (variantlib 0.2.2); a draft's other versions are unsupported"
            );
        }
        only_keys(
            top,
            &["$schema", "default-priorities", "providers", "variants"],
            "",
        )?;
        let prio = object(
            top.get("default-priorities").unwrap_or(&Value::Null),
            "default-priorities",
        )?;
        only_keys(prio, &["namespace"], "default-priorities")?;
        let namespaces = strings(prio.get("namespace"), "default-priorities.namespace")?;
        if namespaces.is_empty() {
            bail!("default-priorities.namespace lists no namespace");
        }
        for n in &namespaces {
            validate_variant_key("namespace", n)?;
        }
        let mut providers = BTreeMap::new();
        for (ns, p) in object(top.get("providers").unwrap_or(&Value::Null), "providers")? {
            validate_variant_key("namespace", ns)?;
            let entry = object(p, &format!("providers.{ns}"))?;
            only_keys(entry, PROVIDER_KEYS, &format!("providers.{ns}"))?;
            let kinds = ["requires", "static-properties", "builtin"];
            if kinds.iter().filter(|k| entry.contains_key(**k)).count() != 1 {
                bail!("providers.{ns}: give exactly one of {}", kinds.join(", "));
            }
            providers.insert(ns.clone(), p.clone());
        }
        let listed: BTreeSet<&String> = namespaces.iter().collect();
        if listed != providers.keys().collect() || listed.len() != namespaces.len() {
            bail!(
                "default-priorities.namespace ({}) must name each namespace of providers ({}) once",
                namespaces.join(", "),
                providers.keys().cloned().collect::<Vec<_>>().join(", ")
            );
        }
        let mut variants = BTreeMap::new();
        for (label, props) in object(top.get("variants").unwrap_or(&Value::Null), "variants")? {
            validate_variant_label(label)?;
            let props = properties(props, label)?;
            if (label == NULL_VARIANT_LABEL) != props.is_empty() {
                bail!("variants.{label}: the label {NULL_VARIANT_LABEL} is the variant with no properties, and only it");
            }
            if let Some(ns) = props.keys().find(|ns| !providers.contains_key(*ns)) {
                bail!("variants.{label} uses namespace {ns}, which providers does not list");
            }
            variants.insert(label.clone(), props);
        }
        Ok(VariantInfo {
            namespaces,
            providers,
            variants,
        })
    }

    /// The JSON text, as variantlib writes it (`json.dumps(indent=4,
    /// sort_keys=True)`, no final newline), so both give the same bytes.
    pub fn render(&self) -> String {
        let variants: Map<String, Value> = (self.variants.iter())
            .map(|(l, p)| (l.clone(), serde_json::to_value(p).expect("strings only")))
            .collect();
        let v = serde_json::json!({
            "$schema": VARIANT_SCHEMA_URL,
            "default-priorities": { "namespace": self.namespaces },
            "providers": self.providers,
            "variants": variants,
        });
        let two = serde_json::to_string_pretty(&v).expect("a JSON value always serialises");
        // Four spaces per level, as Python's indent=4: a JSON string holds
        // no raw newline, so leading spaces are indentation only.
        let lines: Vec<String> = (two.lines())
            .map(|l| {
                let body = l.trim_start_matches(' ');
                format!("{}{body}", " ".repeat(2 * (l.len() - body.len())))
            })
            .collect();
        lines.join("\n")
    }

    /// Merges another wheel's metadata in, as the draft and variantlib do:
    /// labels disjoint or with the same properties, one namespace list a
    /// prefix of the other (the longer is kept), one provider entry per
    /// namespace. A conflict names both sides.
    pub fn merge(&mut self, other: &VariantInfo) -> Result<()> {
        for (label, props) in &other.variants {
            match self.variants.get(label) {
                Some(mine) if mine != props => bail!(
                    "the variant label {label} stands for two property sets, {} and {}: \
                     a label names one set per package version; give the wheels other labels",
                    describe(mine),
                    describe(props)
                ),
                _ => {
                    self.variants.insert(label.clone(), props.clone());
                }
            }
        }
        let (short, long) = if self.namespaces.len() <= other.namespaces.len() {
            (&self.namespaces, &other.namespaces)
        } else {
            (&other.namespaces, &self.namespaces)
        };
        if long[..short.len()] != short[..] {
            bail!(
                "default-priorities.namespace disagree: [{}] and [{}] (one must start with the other)",
                self.namespaces.join(", "),
                other.namespaces.join(", ")
            );
        }
        self.namespaces = long.clone();
        for (ns, p) in &other.providers {
            match self.providers.get(ns) {
                Some(mine) if mine != p => bail!("providers.{ns} disagree: {mine} and {p}"),
                _ => {
                    self.providers.insert(ns.clone(), p.clone());
                }
            }
        }
        Ok(())
    }
}

/// `amd :: gfx_arch :: gfx1200, gfx1201`-style text of a property set.
pub fn describe(p: &Properties) -> String {
    let mut parts = Vec::new();
    for (ns, features) in p {
        for (f, values) in features {
            parts.push(format!("{ns} :: {f} :: {}", values.join(", ")));
        }
    }
    if parts.is_empty() {
        "{} (the null variant)".into()
    } else {
        format!("{{{}}}", parts.join("; "))
    }
}

fn object<'a>(v: &'a Value, what: &str) -> Result<&'a Map<String, Value>> {
    v.as_object()
        .with_context(|| format!("{what} must be a JSON object"))
}

fn only_keys(o: &Map<String, Value>, allowed: &[&str], at: &str) -> Result<()> {
    if let Some(k) = o.keys().find(|k| !allowed.contains(&k.as_str())) {
        let at = if at.is_empty() { "the top level" } else { at };
        bail!(
            "{at} has the key {k:?}; variant.json v0.2.0 allows {} there",
            allowed.join(", ")
        );
    }
    Ok(())
}

fn strings(v: Option<&Value>, what: &str) -> Result<Vec<String>> {
    let list = v
        .and_then(Value::as_array)
        .with_context(|| format!("{what} must be a list of strings"))?;
    (list.iter())
        .map(|s| {
            s.as_str()
                .map(str::to_string)
                .with_context(|| format!("{what} must be a list of strings"))
        })
        .collect()
}

fn properties(v: &Value, label: &str) -> Result<Properties> {
    let mut out = Properties::new();
    for (ns, features) in object(v, &format!("variants.{label}"))? {
        validate_variant_key("namespace", ns)?;
        let mut fs = BTreeMap::new();
        for (f, values) in object(features, &format!("variants.{label}.{ns}"))? {
            validate_variant_key("feature name", f)?;
            let at = format!("variants.{label}.{ns}.{f}");
            let mut values = strings(Some(values), &at)?;
            for x in &values {
                validate_variant_value(x)?;
            }
            values.sort();
            let n = values.len();
            values.dedup();
            if values.is_empty() || values.len() != n {
                bail!("{at} must list one or more values, each once");
            }
            fs.insert(f.clone(), values);
        }
        out.insert(ns.clone(), fs);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(label: &str, values: &[&str]) -> VariantInfo {
        let mut props = Properties::new();
        if !values.is_empty() {
            props.entry("amd".into()).or_default().insert(
                "gfx_arch".into(),
                values.iter().map(|s| s.to_string()).collect(),
            );
        }
        VariantInfo {
            namespaces: vec!["amd".into()],
            providers: [(
                "amd".to_string(),
                serde_json::json!({"requires": ["rocm-bootstrap>=0.3.0"], "plugin-api": "m:C"}),
            )]
            .into(),
            variants: [(label.to_string(), props)].into(),
        }
    }

    #[test]
    fn renders_as_variantlib_and_reads_back() {
        let v = sample("rocm", &["gfx1200", "gfx1201"]);
        let text = v.render();
        assert!(
            text.starts_with(&format!(
                "{{\n    \"$schema\": \"{VARIANT_SCHEMA_URL}\",\n    \"default-priorities\": {{\n        \"namespace\": [\n            \"amd\"\n        ]\n    }},\n"
            )),
            "{text}"
        );
        assert!(!text.ends_with('\n'));
        assert_eq!(VariantInfo::parse(&text, "t").unwrap(), v);
        let null = sample("null", &[]);
        assert!(null.render().contains("\"null\": {}"), "{}", null.render());
        assert_eq!(VariantInfo::parse(&null.render(), "t").unwrap(), null);
    }

    #[test]
    fn refusals() {
        let good = sample("rocm", &["gfx1201"]).render();
        for (from, to, why) in [
            ("v0.2.0.json", "v0.3.0.json", "reads schema"),
            ("\"namespace\"", "\"feature\"", "has the key \"feature\""),
            (
                "\"plugin-api\"",
                "\"build-requires\"",
                "has the key \"build-requires\"",
            ),
            ("\"gfx1201\"", "\"gfx12-generic\"", "no '-'"),
            (
                "\"rocm\"",
                "\"null\"",
                "the label null is the variant with no properties",
            ),
            ("\"rocm\"", "\"ROCm\"", "invalid variant label"),
            (
                "\"gfx_arch\": [",
                "\"gfx_arch\": [\"gfx1201\",",
                "each once",
            ),
        ] {
            let bad = good.replacen(from, to, 1);
            assert_ne!(bad, good, "{from}");
            let e = format!("{:#}", VariantInfo::parse(&bad, "v.json").unwrap_err());
            assert!(e.contains(why), "{from} -> {to}: {e}");
        }
    }

    #[test]
    fn merging() {
        let mut a = sample("rocm", &["gfx1200", "gfx1201"]);
        a.merge(&sample("null", &[])).unwrap();
        a.merge(&sample("rocm", &["gfx1200", "gfx1201"])).unwrap();
        assert_eq!(a.variants.len(), 2);
        let e = a
            .merge(&sample("rocm", &["gfx1100"]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the variant label rocm stands for two property sets"),
            "{e}"
        );
        let mut other = sample("x", &["gfx1100"]);
        other.namespaces = vec!["nvidia".into()];
        let e = a.merge(&other).unwrap_err().to_string();
        assert!(e.contains("default-priorities.namespace disagree"), "{e}");
    }
}
