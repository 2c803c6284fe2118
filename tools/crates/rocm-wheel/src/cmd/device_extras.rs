//! `rocm-wheel device-extras`: a kpack host wheel whose METADATA reaches
//! its device wheels through extras, as TheRock's torch does
//! (`pip install "torch[device-gfx1201]"`): one extra `device-<bundle>`
//! per device wheel (`<host>-device-<bundle>`, rocm-bootstrap's
//! `device_dist_name`: gfx1201, gfx12-0, gfx12) requiring it at the host's
//! exact version, and `device-all` requiring every one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use kpack::wheel::device_bundle;
use wheel_format::{
    canonical_name, dist_info_path, find_dist_info, parse_requirement, same_version,
    wheel_identity, Headers,
};
use wheel_read::WheelReader;
use wheel_rewrite::{Source, WheelRewriter};

#[derive(clap::Args)]
pub struct Args {
    /// The host wheel (a kpack build's: its device code is in device wheels).
    input: PathBuf,
    /// The output wheel (written atomically), named as the input: only
    /// METADATA changes.
    #[arg(short, long)]
    output: PathBuf,
    /// A device wheel of the host, `<host>-device-<bundle>` at the host's
    /// version; repeat for each.
    #[arg(long = "device-wheel", value_name = "WHEEL", required = true)]
    device_wheels: Vec<PathBuf>,
}

/// The extra every device wheel of the build is under.
const ALL: &str = "device-all";

pub fn run(args: Args) -> Result<()> {
    let mut host = WheelRewriter::open(&args.input)?;
    check_output_name(&args.output, host.file_name())?;
    let HostMetadata {
        member,
        text: metadata,
        name,
        version,
    } = host_metadata(&mut host, &args.input)?;
    let mut bundles = BTreeMap::new();
    for path in &args.device_wheels {
        let (bundle, device) = device_wheel(path, &name, &version)?;
        if let Some(other) = bundles.insert(bundle.clone(), (device, path.clone())) {
            bail!(
                "{} and {} are both the device-{bundle} wheel of {name}; give one",
                other.1.display(),
                path.display()
            );
        }
    }
    let text = add_extras(&metadata, &name, &version, &bundles)?;
    host.replace(&member, Source::Bytes(text.into_bytes()))?;
    host.finish(&args.output)?;
    let extras: Vec<String> = bundles.keys().map(|b| format!("device-{b}")).collect();
    println!(
        "{}: extras {}, {ALL}",
        host_file(&args.output),
        extras.join(", ")
    );
    Ok(())
}

/// A host wheel's METADATA: its member name, text, and the distribution's
/// name and version.
pub(crate) struct HostMetadata {
    pub member: String,
    pub text: String,
    pub name: String,
    pub version: String,
}

/// The METADATA of the open host wheel `host` (read from `input`).
pub(crate) fn host_metadata(host: &mut WheelRewriter, input: &Path) -> Result<HostMetadata> {
    let stem = find_dist_info(host.names().iter().map(String::as_str))
        .with_context(|| input.display().to_string())?;
    let member = dist_info_path(&stem, "METADATA");
    let text = host.read_text(&member)?;
    let version = Headers::parse("METADATA", &text)
        .require("Version")?
        .to_string();
    Ok(HostMetadata {
        member,
        text,
        name: host.name().to_string(),
        version,
    })
}

pub(crate) fn host_file(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The output keeps the input's file name: the name, version and tags do
/// not change, and pip refuses a wheel whose file name disagrees with them.
fn check_output_name(output: &Path, input_name: &str) -> Result<()> {
    let out_name = host_file(output);
    if out_name != input_name {
        bail!(
            "the output must be named as the host wheel, {input_name} (only METADATA changes), \
             not {out_name}"
        );
    }
    Ok(())
}

/// The bundle (`gfx1201`, `gfx12-0`) and distribution name of the device
/// wheel at `path`, which must belong to host `name` `version`
/// ([`device_bundle`]) and pin it.
pub(crate) fn device_wheel(path: &Path, name: &str, version: &str) -> Result<(String, String)> {
    let shown = path.display();
    let mut wheel =
        WheelReader::open(path).with_context(|| format!("{shown} is not a valid wheel"))?;
    let text = wheel.read_text(&dist_info_path(wheel.dist(), "METADATA"))?;
    let (device, device_version) = wheel_identity(wheel.file_name(), wheel.dist(), &text)
        .with_context(|| format!("{shown} is not a valid wheel"))?;
    let bundle = device_bundle((name, version), (&device, &device_version))
        .with_context(|| shown.to_string())?;
    let pins_host = Headers::parse("METADATA", &text)
        .get_all("Requires-Dist")
        .any(|r| pins(r, name, version));
    if !pins_host {
        bail!(
            "{shown} does not require {name}=={version}: a device wheel pins its host \
             (rocm_wheel writes it with --//:hip_device_code=kpack)"
        );
    }
    Ok((bundle, device))
}

/// Whether requirement `r` is `name==version` with no marker (the version
/// compared as [`device_bundle`] compares it).
fn pins(r: &str, name: &str, version: &str) -> bool {
    let spec: String = r.chars().filter(|c| !c.is_whitespace()).collect();
    if spec.contains(';') {
        return false;
    }
    let Some((n, v)) = spec.split_once("==") else {
        return false;
    };
    canonical_name(n) == canonical_name(name) && same_version(v, version)
}

/// PEP 685's comparison form of an extra name.
fn extra_key(extra: &str) -> String {
    canonical_name(extra)
}

/// METADATA `text` with `Provides-Extra` and `Requires-Dist` lines for
/// `bundles` (bundle -> device distribution) added at the end of its
/// headers; the rest, the description included, as it was.
fn add_extras(
    text: &str,
    name: &str,
    version: &str,
    bundles: &BTreeMap<String, (String, PathBuf)>,
) -> Result<String> {
    let headers = Headers::parse("METADATA", text);
    let mut new = Vec::new();
    let taken: Vec<String> = headers.get_all("Provides-Extra").map(extra_key).collect();
    let mut all = Vec::new();
    for (bundle, (device, _)) in bundles {
        new.push((format!("device-{bundle}"), vec![device.clone()]));
        all.push(device.clone());
    }
    new.push((ALL.to_string(), all));
    let mut lines = String::new();
    for (extra, _) in &new {
        if taken.contains(&extra_key(extra)) {
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

/// METADATA `text` with the header `lines` (each ending in a newline)
/// added at the end of its headers; the rest, the description included,
/// as it was.
pub(crate) fn insert_headers(text: &str, lines: &str) -> String {
    let end = header_end(text);
    let (head, body) = text.split_at(end);
    let sep = if head.is_empty() || head.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    format!("{head}{sep}{lines}{body}")
}

/// Byte offset where METADATA's header block ends (the blank line before
/// the description, or the end of the text).
fn header_end(text: &str) -> usize {
    let mut end = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_end_matches(['\r', '\n']).is_empty() {
            break;
        }
        end += line.len();
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundles(list: &[(&str, &str)]) -> BTreeMap<String, (String, PathBuf)> {
        (list.iter())
            .map(|(b, d)| (b.to_string(), (d.to_string(), PathBuf::new())))
            .collect()
    }

    #[test]
    fn extras_go_before_the_description() {
        let m = "Metadata-Version: 2.4\nName: jax-rocm7-plugin\nVersion: 0.10.2\n\
                 Requires-Dist: jax-rocm7-pjrt==0.10.2\n\nRequires-Dist: in the body\n";
        let b = bundles(&[
            ("gfx1200", "jax-rocm7-plugin-device-gfx1200"),
            ("gfx1201", "jax-rocm7-plugin-device-gfx1201"),
        ]);
        let out = add_extras(m, "jax-rocm7-plugin", "0.10.2", &b).unwrap();
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
        // No body and no final newline.
        let out = add_extras(
            "Name: x\nVersion: 1",
            "x",
            "1",
            &bundles(&[("gfx12", "x-device-gfx12")]),
        );
        assert!(out
            .unwrap()
            .starts_with("Name: x\nVersion: 1\nProvides-Extra: device-gfx12\n"));
    }

    #[test]
    fn an_extra_is_added_once() {
        let b = bundles(&[("gfx1201", "x-device-gfx1201")]);
        for taken in ["device-gfx1201", "Device_GFX1201", "device-all"] {
            let m = format!("Name: x\nVersion: 1\nProvides-Extra: {taken}\n");
            let e = add_extras(&m, "x", "1", &b).unwrap_err().to_string();
            assert!(e.contains("x already has an extra"), "{e}");
        }
    }

    #[test]
    fn a_pin_is_the_host_at_its_version() {
        assert!(pins(
            "jax-rocm7-plugin==0.10.2",
            "jax_rocm7_plugin",
            "0.10.2"
        ));
        assert!(pins(
            "Jax.ROCm7-Plugin == 0.10.2",
            "jax-rocm7-plugin",
            "0.10.2"
        ));
        assert!(!pins(
            "jax-rocm7-plugin==0.10.1",
            "jax-rocm7-plugin",
            "0.10.2"
        ));
        assert!(!pins(
            "jax-rocm7-plugin>=0.10.2",
            "jax-rocm7-plugin",
            "0.10.2"
        ));
        assert!(!pins(
            "jax-rocm7-plugin==0.10.2; extra == 'x'",
            "jax-rocm7-plugin",
            "0.10.2"
        ));
        assert!(!pins(
            "jax-rocm7-pjrt==0.10.2",
            "jax-rocm7-plugin",
            "0.10.2"
        ));
    }
}
