//! `rocm-wheel device-extras`: a kpack host wheel whose METADATA reaches
//! its device wheels through extras, by AMD's rule for split wheels
//! (rocm-kpack's `wheel_splitter`, as TheRock's torch has them:
//! `pip install "torch[device-gfx1201]"`): one extra `device-<target>` per
//! GPU target the device wheels serve, whatever wheel (target, sub-family
//! or family) holds it, requiring every device wheel serving it at the
//! host's exact version, and `device-all` requiring every one. Users know
//! their GPU, not the bundle names the wheels are packed by.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use wheel_format::{
    canonical_name, dist_info_path, find_dist_info, parse_requirement, same_version, Headers,
};
use wheel_rewrite::{Source, WheelRewriter};

#[derive(clap::Args)]
pub struct Args {
    /// The host wheel (a kpack build's: its device code is in device wheels).
    input: PathBuf,
    /// The output wheel (written atomically), named as the input: only
    /// METADATA changes.
    #[arg(short, long)]
    output: PathBuf,
    /// A device wheel of the host (any name, e.g. `<host>-device-gfx1201`
    /// or `amd-torch-device-gfx12`), pinning the host's exact version and
    /// holding `.kpack` archives; repeat for each.
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
    let devices = device_wheels(&args.device_wheels, &name, &version)?;
    let extras = target_extras(&devices);
    let text = add_extras(&metadata, &name, &version, &extras, &devices)?;
    host.replace(&member, Source::Bytes(text.into_bytes()))?;
    host.finish(&args.output)?;
    let names: Vec<String> = extras.iter().map(|(t, _)| format!("device-{t}")).collect();
    println!(
        "{}: extras {}, {ALL}",
        host_file(&args.output),
        names.join(", ")
    );
    Ok(())
}

/// A device wheel of a host: its distribution name, version, path and the
/// targets its archives' tables of contents name (`gfx1201`, `gfx942:xnack+`,
/// `gfx12-generic`).
pub(crate) struct DeviceWheel {
    pub name: String,
    pub version: String,
    pub path: PathBuf,
    pub targets: BTreeSet<String>,
}

/// The device wheels at `paths`, each read once: each pins host `name`
/// `version` ([`device_wheel`]); two with one name are refused.
pub(crate) fn device_wheels(
    paths: &[PathBuf],
    name: &str,
    version: &str,
) -> Result<Vec<DeviceWheel>> {
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut out = Vec::new();
    for path in paths {
        let device = device_wheel(path, name, version)?;
        if let Some(other) = seen.insert(canonical_name(&device.name), path.clone()) {
            bail!(
                "{} and {} are both {}: give each device wheel of {name} once",
                other.display(),
                path.display(),
                device.name
            );
        }
        out.push(device);
    }
    Ok(out)
}

/// Extra name -> the device wheels (distribution names) it requires: one
/// `device-<target>` per GPU target served, a target's xnack variants
/// (`gfx942:xnack+`, which AMD packs with the bare target) and the targets
/// a generic code object runs on counting as served; ordered as ISA
/// numbers are.
fn target_extras(devices: &[DeviceWheel]) -> Vec<(String, Vec<String>)> {
    let mut by_target: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for d in devices {
        for t in &d.targets {
            let processor = gfx_targets::processor(t);
            let covered = gfx_targets::generic_covers(processor);
            let served: Vec<String> = match covered {
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

/// The device wheel at `path` of host `name` `version`: it belongs to the
/// host when it pins it (`<host>==<version>`, as AMD's splitter and
/// rocm_wheel write it), whatever its own name, and it is at the host's
/// version ([`same_version`]: what the host's extras will ask pip for);
/// it must hold device code (`.kpack` archives) and no host binaries.
pub(crate) fn device_wheel(path: &Path, name: &str, version: &str) -> Result<DeviceWheel> {
    let shown = path.display();
    let wheel =
        kpack::wheel::read_devices(std::slice::from_ref(&path.to_path_buf()), "device-extras")
            .with_context(|| format!("{shown} is not a valid device wheel"))?
            .remove(0);
    if !wheel.requires_dist.iter().any(|r| pins(r, name, version)) {
        bail!(
            "{shown} does not require {name}=={version}: a device wheel pins its host \
             (rocm_wheel writes it with --//:hip_device_code=kpack)"
        );
    }
    if !same_version(&wheel.version, version) {
        bail!(
            "{shown} is {} {}, but the host {name} is {version}: device wheels are at the \
             host's exact version; give the device wheels built with this host",
            wheel.name,
            wheel.version
        );
    }
    let targets = wheel.targets();
    if targets.is_empty() {
        bail!("{shown} holds no .kpack archive, so it serves no GPU target: give the host's device wheels");
    }
    Ok(DeviceWheel {
        name: wheel.name,
        version: wheel.version,
        path: path.to_path_buf(),
        targets,
    })
}

/// Whether requirement `r` is `name==version` with no marker (versions
/// compared by PEP 440 equality).
fn pins(r: &str, name: &str, version: &str) -> bool {
    wheel_format::exact_pin(r).is_some_and(|(n, v, marker)| {
        marker.is_empty() && canonical_name(&n) == canonical_name(name) && same_version(&v, version)
    })
}

/// PEP 685's comparison form of an extra name.
fn extra_key(extra: &str) -> String {
    canonical_name(extra)
}

/// METADATA `text` with `Provides-Extra` and `Requires-Dist` lines for
/// `extras` (target -> device distributions) and `device-all` (every one
/// of `devices`) added at the end of its headers; the rest, the
/// description included, as it was.
fn add_extras(
    text: &str,
    name: &str,
    version: &str,
    extras: &[(String, Vec<String>)],
    devices: &[DeviceWheel],
) -> Result<String> {
    let headers = Headers::parse("METADATA", text);
    let taken: Vec<String> = headers.get_all("Provides-Extra").map(extra_key).collect();
    let mut all: Vec<String> = devices.iter().map(|d| d.name.clone()).collect();
    all.sort_by_key(|n| canonical_name(n));
    let new: Vec<(String, Vec<String>)> = (extras.iter())
        .map(|(t, d)| (format!("device-{t}"), d.clone()))
        .chain([(ALL.to_string(), all)])
        .collect();
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
