//! A host wheel and its device wheels as a set users install: AMD's extras
//! (rocm-kpack's `wheel_splitter`, as TheRock's torch has them: `pip
//! install "torch[device-gfx1201]"`) and the variant wheel (PEP 825 / PEP
//! 850 drafts, rocm-bootstrap's `amd` provider). `rocm-wheel
//! device-extras` and `rocm-wheel variant` are these two functions.
//!
//! Extras: one `device-<target>` per GPU target the device wheels serve,
//! whatever wheel (target, sub-family or family) holds it, requiring every
//! device wheel serving it at the host's exact version, and `device-all`
//! requiring every one. Users know their GPU, not the bundle names the
//! wheels are packed by.
//!
//! Variant: the host wheel plus `*.dist-info/variant.json` (its label's
//! property `amd :: gfx_arch` lists every target its device wheels serve)
//! and, in METADATA, one requirement per target pulling that target's
//! device wheel through a variant marker:
//!
//! ```text
//! Requires-Dist: jax-rocm7-plugin-device-gfx1201==0.10.2; "amd :: gfx_arch :: gfx1201" in variant_properties
//! ```
//!
//! A sub-family or family device wheel is named once per member target.
//! The file name gains the label: `{name}-{version}-{tags}-{label}.whl`.
//!
//! Both take device wheels by the device side of [`wheel::belongs`]
//! ([`wheel::pins_host`]); a variant also needs the host side (the host's
//! extras, written first, require each).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use wheel_format::{
    canonical_name, insert_headers, parse_requirement, parse_variant_requirement,
    validate_variant_label, validate_variant_value, Headers, VariantInfo, VariantProperties,
    WheelName, NULL_VARIANT_LABEL, VARIANT_JSON,
};
use wheel_rewrite::{Source, WheelRewriter};

use crate::wheel;

/// The extra every device wheel of the build is under.
pub const DEVICE_ALL: &str = "device-all";

/// rocm-bootstrap's variant provider: its namespace and feature, the
/// package installers fetch it from, and its plugin class.
pub const NAMESPACE: &str = "amd";
pub const FEATURE: &str = "gfx_arch";
const PROVIDER_REQUIRES: &str = "rocm-bootstrap>=0.3.0";
const PLUGIN_API: &str = "rocm_bootstrap.variant_provider:AMDVariantPlugin";

/// Writes host wheel `input` as `output` (named as the input: only METADATA
/// changes) with its device extras for `devices`; returns the extras' names.
pub fn write_device_extras(
    input: &Path,
    output: &Path,
    devices: &[PathBuf],
) -> Result<Vec<String>> {
    let mut host = WheelRewriter::open(input)?;
    let input_name = host.file_name().to_string();
    let output_name = atomic_write::target_name(output)?;
    if output_name != input_name {
        bail!(
            "the output must be named as the host wheel, {input_name} (only METADATA changes), \
             not {output_name}"
        );
    }
    let (text, member) = host.metadata();
    let text = text.to_string();
    let (name, version) = (host.name().to_string(), host.version().to_string());
    let devices = device_wheels(devices, &name, &version)?;
    let extras = target_extras(&devices);
    let text = add_extras(&text, &name, &version, &extras, &devices)?;
    host.replace(&member, Source::Bytes(text.into_bytes()))?;
    host.finish(output)?;
    Ok((extras.iter().map(|(t, _)| format!("device-{t}")))
        .chain([DEVICE_ALL.to_string()])
        .collect())
}

/// Writes host wheel `input` as the variant wheel `output` (the input's
/// file name with `-<label>`): `label` (`null`: no properties, no device
/// wheels) with the targets `devices` serve; returns the variant's values.
pub fn write_variant(
    input: &Path,
    output: &Path,
    label: &str,
    devices: &[PathBuf],
) -> Result<Vec<String>> {
    validate_variant_label(label)?;
    let null = label == NULL_VARIANT_LABEL;
    if null && !devices.is_empty() {
        bail!("the null variant has no properties and pulls no device wheel: give no --device-wheel with --label null");
    }
    if !null && devices.is_empty() {
        bail!(
            "give the host's device wheels (--device-wheel): their targets are the variant's \
             {NAMESPACE} :: {FEATURE} values (--label null writes the null variant)"
        );
    }
    let mut host = WheelRewriter::open(input)?;
    let input_name = host.file_name().to_string();
    let parsed = WheelName::parse(&input_name)?;
    if let Some(have) = parsed.variant {
        bail!("{input_name} is a variant wheel already (label {have}): give the plain host wheel");
    }
    let want = WheelName {
        variant: Some(label),
        ..parsed
    }
    .to_string();
    let output_name = atomic_write::target_name(output)?;
    if output_name != want {
        bail!("the output must be named {want} (the host wheel's name with the label), not {output_name}");
    }
    let (text, member) = host.metadata();
    let text = text.to_string();
    let (name, version) = (host.name().to_string(), host.version().to_string());
    let targets = variant_targets(devices, &name, &version, &text)?;
    let mut lines = String::new();
    for (target, device) in &targets {
        let req = format!(
            "{}=={version}; \"{NAMESPACE} :: {FEATURE} :: {target}\" in variant_properties",
            device.name
        );
        parse_variant_requirement(&req)?;
        lines.push_str(&format!("Requires-Dist: {req}\n"));
    }
    let values: Vec<String> = targets.keys().cloned().collect();
    let info = variant_info(label, values.clone());
    host.replace(
        &member,
        Source::Bytes(insert_headers(&text, &lines).into_bytes()),
    )?;
    host.add_dist_info(VARIANT_JSON, Source::Bytes(info.render().into_bytes()))?;
    host.finish(output)?;
    Ok(values)
}

/// A device wheel of a host: its distribution name, version, path and the
/// targets its archives' tables of contents name (`gfx1201`, `gfx942:xnack+`,
/// `gfx12-generic`).
#[derive(Debug, Clone)]
pub struct DeviceWheel {
    pub name: String,
    pub version: String,
    pub path: PathBuf,
    pub targets: BTreeSet<String>,
}

/// The device wheels at `paths`, each read once: each pins host `name`
/// `version` ([`wheel::pins_host`]) and holds archives; two with one name
/// are refused.
pub fn device_wheels(paths: &[PathBuf], name: &str, version: &str) -> Result<Vec<DeviceWheel>> {
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut out = Vec::new();
    for path in paths {
        let shown = path.display();
        let wheel = wheel::read_devices(std::slice::from_ref(path), "device-extras")
            .with_context(|| format!("{shown} is not a valid device wheel"))?
            .remove(0);
        wheel::pins_host(&wheel, name, version).with_context(|| shown.to_string())?;
        let targets = wheel.targets();
        if targets.is_empty() {
            bail!("{shown} holds no .kpack archive, so it serves no GPU target: give the host's device wheels");
        }
        if let Some(other) = seen.insert(canonical_name(&wheel.name), path.clone()) {
            bail!(
                "{} and {shown} are both {}: give each device wheel of {name} once",
                other.display(),
                wheel.name
            );
        }
        out.push(DeviceWheel {
            name: wheel.name,
            version: wheel.version,
            path: path.clone(),
            targets,
        });
    }
    Ok(out)
}

/// Extra name -> the device wheels (distribution names) it requires: one
/// `device-<target>` per GPU target served, a target's xnack variants
/// (`gfx942:xnack+`, which AMD packs with the bare target) and the targets
/// a generic code object runs on counting as served; ordered as ISA
/// numbers are.
pub fn target_extras(devices: &[DeviceWheel]) -> Vec<(String, Vec<String>)> {
    let mut by_target: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for d in devices {
        for t in &d.targets {
            let processor = gfx_targets::processor(t);
            let served: Vec<String> = match gfx_targets::generic_covers(processor) {
                Some(c) => c.to_vec(),
                None => vec![processor.to_string()],
            };
            for s in served {
                by_target.entry(s).or_default().insert(d.name.clone());
            }
        }
    }
    let mut extras: Vec<(String, Vec<String>)> = (by_target.into_iter())
        .map(|(t, names)| (t, names.into_iter().collect()))
        .collect();
    extras.sort_by(|a, b| gfx_targets::gfx_sort_key(&a.0).cmp(&gfx_targets::gfx_sort_key(&b.0)));
    extras
}

/// METADATA `text` with `Provides-Extra` and `Requires-Dist` lines for
/// `extras` (target -> device distributions) and `device-all` (every one
/// of `devices`) added at the end of its headers; the rest, the
/// description included, as it was.
pub fn add_extras(
    text: &str,
    name: &str,
    version: &str,
    extras: &[(String, Vec<String>)],
    devices: &[DeviceWheel],
) -> Result<String> {
    let headers = Headers::parse("METADATA", text);
    let taken: Vec<String> = headers
        .get_all("Provides-Extra")
        .map(canonical_name)
        .collect();
    let mut all: Vec<String> = devices.iter().map(|d| d.name.clone()).collect();
    all.sort_by_key(|n| canonical_name(n));
    let new: Vec<(String, Vec<String>)> = (extras.iter())
        .map(|(t, d)| (format!("device-{t}"), d.clone()))
        .chain([(DEVICE_ALL.to_string(), all)])
        .collect();
    let mut lines = String::new();
    for (extra, _) in &new {
        // PEP 685: extras compare by their normalised names.
        if taken.contains(&canonical_name(extra)) {
            bail!(
                "{name} already has an extra {extra}: its device extras were added before, \
                 or its own provides_extra takes the name; give the wheel as rocm_wheel wrote it"
            );
        }
        lines.push_str(&format!("Provides-Extra: {extra}\n"));
    }
    for (extra, devices) in &new {
        for device in devices {
            let req = format!("{device}=={version}; extra == \"{extra}\"");
            parse_requirement(&req)?;
            lines.push_str(&format!("Requires-Dist: {req}\n"));
        }
    }
    Ok(insert_headers(text, &lines))
}

/// Target -> the device wheel serving it, over the device wheels of host
/// `name` `version` whose METADATA is `text`: each wheel belongs to the
/// host both ways (it pins the host, the host's device extras require it),
/// each target is a value rocm-bootstrap's provider knows, served by one
/// wheel only.
fn variant_targets(
    paths: &[PathBuf],
    name: &str,
    version: &str,
    text: &str,
) -> Result<BTreeMap<String, DeviceWheel>> {
    let requires: Vec<String> = (Headers::parse("METADATA", text).get_all("Requires-Dist"))
        .map(str::to_string)
        .collect();
    let devices = device_wheels(paths, name, version)?;
    let mut targets: BTreeMap<String, DeviceWheel> = BTreeMap::new();
    for device in &devices {
        for target in &device.targets {
            check_value(target, &device.path)?;
            if let Some(other) = targets.get(target) {
                bail!(
                    "{} and {} both serve {target}: give one device wheel per target",
                    other.path.display(),
                    device.path.display()
                );
            }
            targets.insert(target.clone(), device.clone());
        }
    }
    for device in &devices {
        wheel::required_by((name, version, &requires), (&device.name, &device.version))
            .with_context(|| device.path.display().to_string())?;
    }
    Ok(targets)
}

/// The variant metadata of one wheel: label `label` with `values` (none:
/// the null variant), rocm-bootstrap's provider.
pub fn variant_info(label: &str, values: Vec<String>) -> VariantInfo {
    let mut props = VariantProperties::new();
    if !values.is_empty() {
        props
            .entry(NAMESPACE.into())
            .or_default()
            .insert(FEATURE.into(), values);
    }
    VariantInfo::with_provider(
        NAMESPACE,
        &[PROVIDER_REQUIRES],
        PLUGIN_API,
        [(label.to_string(), props)].into(),
    )
}

/// The `amd :: gfx_arch` values rocm-bootstrap 0.3.0's provider reports:
/// its targets that a variant value can spell.
pub fn provider_values() -> Vec<&'static str> {
    gfx_targets::bootstrap_targets()
        .into_iter()
        .filter(|t| validate_variant_value(t).is_ok())
        .collect()
}

/// Refuses a target the provider would never report (an installer could
/// not select it) or a value cannot spell.
fn check_value(target: &str, device: &Path) -> Result<()> {
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

    fn device(name: &str, targets: &[&str]) -> DeviceWheel {
        DeviceWheel {
            name: name.to_string(),
            version: "1".to_string(),
            path: PathBuf::new(),
            targets: targets.iter().map(|t| t.to_string()).collect(),
        }
    }

    #[test]
    fn extras_go_before_the_description() {
        let m = "Metadata-Version: 2.4\nName: jax-rocm7-plugin\nVersion: 0.10.2\n\
                 Requires-Dist: jax-rocm7-pjrt==0.10.2\n\nRequires-Dist: in the body\n";
        let d = [
            device("jax-rocm7-plugin-device-gfx1201", &["gfx1201"]),
            device("jax-rocm7-plugin-device-gfx1200", &["gfx1200"]),
        ];
        let out = add_extras(m, "jax-rocm7-plugin", "0.10.2", &target_extras(&d), &d).unwrap();
        assert_eq!(
            out,
            "Metadata-Version: 2.4\nName: jax-rocm7-plugin\nVersion: 0.10.2\n\
             Requires-Dist: jax-rocm7-pjrt==0.10.2\n\
             Provides-Extra: device-gfx1200\nProvides-Extra: device-gfx1201\n\
             Provides-Extra: device-all\n\
             Requires-Dist: jax-rocm7-plugin-device-gfx1200==0.10.2; extra == \"device-gfx1200\"\n\
             Requires-Dist: jax-rocm7-plugin-device-gfx1201==0.10.2; extra == \"device-gfx1201\"\n\
             Requires-Dist: jax-rocm7-plugin-device-gfx1200==0.10.2; extra == \"device-all\"\n\
             Requires-Dist: jax-rocm7-plugin-device-gfx1201==0.10.2; extra == \"device-all\"\n\
             \nRequires-Dist: in the body\n"
        );
        // No body and no final newline; a family wheel gives each of its
        // targets an extra.
        let d = [device("x-device-gfx12", &["gfx1200", "gfx1201"])];
        let out = add_extras("Name: x\nVersion: 1", "x", "1", &target_extras(&d), &d);
        assert!(out.unwrap().starts_with(
            "Name: x\nVersion: 1\nProvides-Extra: device-gfx1200\n\
             Provides-Extra: device-gfx1201\nProvides-Extra: device-all\n\
             Requires-Dist: x-device-gfx12==1; extra == \"device-gfx1200\"\n"
        ));
    }

    #[test]
    fn an_extra_per_target_whatever_wheel_holds_it() {
        // AMD's shapes: a chain (the target wheel and its family's), xnack
        // variants in the bare target's wheel, a generic code object.
        let d = [
            device("amd-torch-device-gfx1201", &["gfx1201"]),
            device("amd-torch-device-gfx12", &["gfx1200", "gfx1201"]),
            device(
                "amd-torch-device-gfx942",
                &["gfx942", "gfx942:xnack+", "gfx942:xnack-"],
            ),
            device("amd-torch-device-gfx11", &["gfx11-generic"]),
        ];
        let got = target_extras(&d);
        let get = |t: &str| got.iter().find(|(x, _)| x == t).map(|(_, d)| d.clone());
        assert_eq!(
            get("gfx1201").unwrap(),
            ["amd-torch-device-gfx12", "amd-torch-device-gfx1201"]
        );
        assert_eq!(get("gfx1200").unwrap(), ["amd-torch-device-gfx12"]);
        assert_eq!(get("gfx942").unwrap(), ["amd-torch-device-gfx942"]);
        assert_eq!(get("gfx1151").unwrap(), ["amd-torch-device-gfx11"]);
        assert!(get("gfx942:xnack+").is_none() && get("gfx11-generic").is_none());
        let order: Vec<&str> = got.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(order[..2], ["gfx942", "gfx1100"]);
    }

    #[test]
    fn an_extra_is_added_once() {
        let d = [device("x-device-gfx1201", &["gfx1201"])];
        for taken in ["device-gfx1201", "Device_GFX1201", "device-all"] {
            let m = format!("Name: x\nVersion: 1\nProvides-Extra: {taken}\n");
            let e = add_extras(&m, "x", "1", &target_extras(&d), &d)
                .unwrap_err()
                .to_string();
            assert!(e.contains("x already has an extra"), "{e}");
        }
    }

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
