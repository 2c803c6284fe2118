//! `rocm-wheel variant`: a kpack host wheel as a variant wheel (PEP 825 /
//! PEP 850 drafts, `variant.json` schema v0.2.0, as variantlib 0.2.2 and
//! rocm-bootstrap 0.3.0 implement them). The wheel is the host's, plus
//! `*.dist-info/variant.json` (its label's property `amd :: gfx_arch` lists
//! every target its device wheels serve, rocm-bootstrap's `amd` provider
//! judges them) and, in METADATA, one requirement per target pulling that
//! target's device wheel through a variant marker:
//!
//!     Requires-Dist: jax-rocm7-plugin-device-gfx1201==0.10.2; "amd :: gfx_arch :: gfx1201" in variant_properties
//!
//! A sub-family or family device wheel is named once per member target.
//! The file name gains the label: `{name}-{version}-{tags}-{label}.whl`.

pub(crate) mod metadata;

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use wheel_format::{
    parse_variant_requirement, validate_variant_label, validate_variant_value, Headers, WheelName,
    NULL_VARIANT_LABEL, VARIANT_JSON,
};
use wheel_rewrite::{Source, WheelRewriter};

use super::device_extras::{device_wheels, host_file, host_metadata, insert_headers, HostMetadata};
use metadata::{Properties, VariantInfo};

/// rocm-bootstrap's variant provider: its namespace and feature, the
/// package installers fetch it from, and its plugin class.
pub(crate) const NAMESPACE: &str = "amd";
pub(crate) const FEATURE: &str = "gfx_arch";
const PROVIDER_REQUIRES: &str = "rocm-bootstrap>=0.3.0";
const PLUGIN_API: &str = "rocm_bootstrap.variant_provider:AMDVariantPlugin";

#[derive(clap::Args)]
pub struct Args {
    /// The host wheel of a kpack build (with its device extras or not),
    /// not a variant wheel.
    input: PathBuf,
    /// The variant wheel to write (atomically): the input's file name with
    /// `-LABEL` before `.whl`.
    #[arg(short, long)]
    output: PathBuf,
    /// The variant label: 1-16 of 0-9 a-z _ . (`rocm`); `null` writes the
    /// null variant (no properties, no device wheels).
    #[arg(long)]
    label: String,
    /// A device wheel of the host (`<host>-device-<bundle>` at the host's
    /// version); repeat for each. Its archives' targets become the
    /// variant's `amd :: gfx_arch` values.
    #[arg(long = "device-wheel", value_name = "WHEEL")]
    device_wheels: Vec<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    validate_variant_label(&args.label)?;
    let null = args.label == NULL_VARIANT_LABEL;
    if null && !args.device_wheels.is_empty() {
        bail!("the null variant has no properties and pulls no device wheel: give no --device-wheel with --label null");
    }
    if !null && args.device_wheels.is_empty() {
        bail!(
            "give the host's device wheels (--device-wheel): their targets are the variant's \
             {NAMESPACE} :: {FEATURE} values (--label null writes the null variant)"
        );
    }
    let mut host = WheelRewriter::open(&args.input)?;
    let input_name = host.file_name().to_string();
    let parsed = WheelName::parse(&input_name)?;
    if let Some(label) = parsed.variant {
        bail!("{input_name} is a variant wheel already (label {label}): give the plain host wheel");
    }
    let want = WheelName {
        variant: Some(&args.label),
        ..parsed
    }
    .to_string();
    if host_file(&args.output) != want {
        bail!(
            "the output must be named {want} (the host wheel's name with the label), not {}",
            host_file(&args.output)
        );
    }
    let HostMetadata {
        member,
        text,
        name,
        version,
    } = host_metadata(&mut host, &args.input)?;
    let targets = device_targets(&args.device_wheels, &name, &version)?;
    // Both ways, as the set is installed: each device wheel pins the host,
    // and the host's device extras (device-extras wrote them) require it.
    let requires: Vec<String> = (Headers::parse("METADATA", &text).get_all("Requires-Dist"))
        .map(str::to_string)
        .collect();
    for (device, device_version, path) in targets.values() {
        kpack::wheel::required_by((&name, &version, &requires), (device, device_version))
            .with_context(|| path.display().to_string())?;
    }
    let mut lines = String::new();
    for (target, (device, _, _)) in &targets {
        let req = format!(
            "{device}=={version}; \"{NAMESPACE} :: {FEATURE} :: {target}\" in variant_properties"
        );
        parse_variant_requirement(&req)?;
        lines.push_str(&format!("Requires-Dist: {req}\n"));
    }
    let info = variant_info(&args.label, targets.keys().cloned().collect());
    host.replace(
        &member,
        Source::Bytes(insert_headers(&text, &lines).into_bytes()),
    )?;
    host.add_dist_info(VARIANT_JSON, Source::Bytes(info.render().into_bytes()))?;
    host.finish(&args.output)?;
    let values: Vec<&str> = targets.keys().map(String::as_str).collect();
    println!(
        "{want}: variant {}, {NAMESPACE} :: {FEATURE} :: {}",
        args.label,
        if values.is_empty() {
            "(none: the null variant)".into()
        } else {
            values.join(", ")
        }
    );
    Ok(())
}

/// The variant metadata of one wheel: label `label` with `values` (none:
/// the null variant), rocm-bootstrap's provider.
fn variant_info(label: &str, values: Vec<String>) -> VariantInfo {
    let mut props = Properties::new();
    if !values.is_empty() {
        props
            .entry(NAMESPACE.into())
            .or_default()
            .insert(FEATURE.into(), values);
    }
    let provider = serde_json::json!({
        "requires": [PROVIDER_REQUIRES],
        "plugin-api": PLUGIN_API,
    });
    VariantInfo {
        namespaces: vec![NAMESPACE.into()],
        providers: [(NAMESPACE.to_string(), provider)].into(),
        variants: [(label.to_string(), props)].into(),
    }
}

/// Target -> the device wheel (distribution name, version, path) serving
/// it, over the device wheels of host `name` `version`; each target a
/// value rocm-bootstrap's provider knows, served by one wheel only.
fn device_targets(
    paths: &[PathBuf],
    name: &str,
    version: &str,
) -> Result<BTreeMap<String, (String, String, PathBuf)>> {
    let mut targets: BTreeMap<String, (String, String, PathBuf)> = BTreeMap::new();
    for device in device_wheels(paths, name, version)? {
        for target in &device.targets {
            check_value(target, &device.path)?;
            if let Some((_, _, other)) = targets.get(target) {
                bail!(
                    "{} and {} both serve {target}: give one device wheel per target",
                    other.display(),
                    device.path.display()
                );
            }
            let entry = (
                device.name.clone(),
                device.version.clone(),
                device.path.clone(),
            );
            targets.insert(target.clone(), entry);
        }
    }
    Ok(targets)
}

/// The `amd :: gfx_arch` values rocm-bootstrap 0.3.0's provider reports:
/// its targets that a variant value can spell.
pub(crate) fn provider_values() -> Vec<&'static str> {
    gfx_targets::bootstrap_targets()
        .into_iter()
        .filter(|t| validate_variant_value(t).is_ok())
        .collect()
}

/// Refuses a target the provider would never report (an installer could
/// not select it) or a value cannot spell.
fn check_value(target: &str, device: &std::path::Path) -> Result<()> {
    let shown = device.display();
    if gfx_targets::is_generic(target) {
        bail!(
            "{shown} serves the generic target {target}: {NAMESPACE} :: {FEATURE} has values for \
             single targets only (no '-'); build variant wheels without --//:gfx_generic"
        );
    }
    if !provider_values().contains(&target) {
        bail!(
            "{shown} serves {target}, which rocm-bootstrap's {NAMESPACE} provider does not know \
             (its {NAMESPACE} :: {FEATURE} values: {}): no installer would select it",
            provider_values().join(", ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_providers_values() {
        let v = provider_values();
        assert_eq!(v.len(), 33, "{v:?}");
        assert!(v.contains(&"gfx1201") && v.contains(&"gfx1250"));
        assert!(!v.contains(&"gfx1250-strict"));
        let d = std::path::Path::new("d.whl");
        check_value("gfx90a", d).unwrap();
        for (bad, why) in [
            ("gfx9999", "does not know"),
            ("gfx12-generic", "generic target"),
            ("gfx1250-strict", "does not know"),
        ] {
            let e = check_value(bad, d).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
