//! The kpack side of wheels: each binary's `HIPK` wrappers and each
//! `.kpack` archive's table of contents, read from the zip members without
//! copying them anywhere: an archive is streamed (a pass to its TOC at the
//! end, one over its frames), a binary is read into wheel-read's
//! bounded-memory ELF image (the headers, `.hipFatBinSegment`,
//! `.rela.dyn` and `.rocm_kpack_ref`). No temporary file is written, so
//! scratch disk use is nil and a killed run leaves nothing; memory is that
//! of one member's image (wheel-read's bounds) plus the TOCs kept. And
//! whether a host wheel resolves among its device wheels' archives.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use wheel_format::{canonical_name, same_version};

use crate::archive::{toc_from, Source};
use crate::set::Archives;
use crate::{check_binary, host_refs, Problem, Toc, WrapperRef};

/// What a wheel holds of kpack: binaries with wrappers, and archives.
pub struct KpackWheel {
    pub path: PathBuf,
    /// The distribution name and version its METADATA gives (checked
    /// against the file name).
    pub name: String,
    pub version: String,
    /// Its METADATA's Requires-Dist values, as written.
    pub requires_dist: Vec<String>,
    /// Member path -> its wrappers (only binaries that have some).
    pub binaries: Vec<(String, Vec<WrapperRef>)>,
    /// Member path -> the archive's table of contents.
    pub archives: BTreeMap<String, Toc>,
}

impl KpackWheel {
    /// The gfx targets its archives serve.
    pub fn targets(&self) -> BTreeSet<String> {
        self.archives
            .values()
            .flat_map(|toc| toc.gfx_arches.iter().cloned())
            .collect()
    }

    /// Its name PEP 503-normalised (as [`required_for_target`] gives names).
    pub fn key(&self) -> String {
        canonical_name(&self.name)
    }

    /// The file name (for messages and copies).
    pub fn file_name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// A `.kpack` member, read by streaming it from the start as often as the
/// archive reader asks (decompressing and discarding up to the offset).
struct MemberSource<'z> {
    zip: &'z mut wheel_read::Archive,
    index: usize,
}

impl Source for MemberSource<'_> {
    fn read_from(&mut self, pos: u64) -> Result<Box<dyn Read + '_>> {
        let mut m = self.zip.by_index(self.index)?;
        std::io::copy(&mut (&mut m).take(pos), &mut std::io::sink())?;
        Ok(Box::new(m))
    }
}

fn is_binary(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    (base.ends_with(".so") || base.contains(".so.")) && !name.contains(".data/")
}

/// The sections of a binary `host_refs` reads besides the headers.
const KPACK_SECTIONS: &[&str] = &[".hipFatBinSegment", ".rela.dyn", crate::MARKER_SECTION];

/// Reads the wrappers of every binary of `wheel` and its archives' TOCs.
pub fn read(wheel: &Path) -> Result<KpackWheel> {
    let mut reader = wheel_read::WheelReader::open(wheel).map_err(|e| anyhow::anyhow!("{e}"))?;
    let dist = reader.dist().to_string();
    let metadata = reader.read_text(&wheel_format::dist_info_path(&dist, "METADATA"))?;
    let file_name = reader.file_name().to_string();
    let (name, version) = wheel_format::wheel_identity(&file_name, &dist, &metadata)
        .with_context(|| format!("{}", wheel.display()))?;
    let requires_dist = wheel_format::Headers::parse("METADATA", &metadata)
        .get_all("Requires-Dist")
        .map(str::to_string)
        .collect();
    let (_, mut zip, names, _) = reader.into_archive();
    let mut out = KpackWheel {
        path: wheel.to_path_buf(),
        name,
        version,
        requires_dist,
        binaries: Vec::new(),
        archives: BTreeMap::new(),
    };
    for (index, name) in names.iter().enumerate() {
        if name.ends_with('/') {
            continue;
        }
        let what = format!("{}: {name}", wheel.display());
        if name.ends_with(".kpack") {
            let toc = toc_from(
                &mut MemberSource {
                    zip: &mut zip,
                    index,
                },
                &what,
            )?;
            out.archives.insert(name.clone(), toc);
        } else if is_binary(name) {
            let mut magic = Vec::new();
            let declared = {
                let m = zip.by_index(index).with_context(|| what.clone())?;
                let declared = m.size();
                m.take(4)
                    .read_to_end(&mut magic)
                    .with_context(|| what.clone())?;
                declared
            };
            if magic != elf_read::raw::ELFMAG {
                continue;
            }
            let mut reopen = |f: &mut dyn FnMut(&mut dyn Read) -> Result<()>| -> Result<()> {
                let mut m = zip.by_index(index)?;
                f(&mut m)
            };
            let opts = wheel_read::ImageOptions {
                want_sections: KPACK_SECTIONS,
                ..Default::default()
            };
            let image = wheel_read::elf_image(&mut reopen, declared, &opts)
                .with_context(|| what.clone())?;
            let refs = host_refs(&image[..]).with_context(|| what.clone())?;
            if !refs.is_empty() {
                out.binaries.push((name.clone(), refs));
            }
        }
    }
    Ok(out)
}

/// Reads each device wheel of a set; refuses one holding host binaries
/// (a host wheel given in its place), saying to give it as the wheel to
/// `role` (check, thin).
pub fn read_devices(paths: &[PathBuf], role: &str) -> Result<Vec<KpackWheel>> {
    let devices = paths.iter().map(|d| read(d)).collect::<Result<Vec<_>>>()?;
    if let Some(d) = devices.iter().find(|d| !d.binaries.is_empty()) {
        bail!(
            "{}: holds host binaries with kpack markers, not device code; give it as the wheel to {role}",
            d.path.display()
        );
    }
    Ok(devices)
}

/// Whether `device` belongs to `host`: the one test of "this device
/// wheel belongs to this host" (`check`, `thin`, `variant`; `device-extras`
/// takes its device side, [`pins_host`]). The device wheel pins the host,
/// and the host's METADATA
/// must require it under a `device-*` extra, by name (PEP 503-normalised)
/// at its exact version ([`same_version`], PEP 440 equality): its extras
/// say which device wheels it was built with, whatever their names (rocm_wheel's
/// `<host>-device-gfx1201`, AMD's `amd-torch-device-gfx12`, any
/// `device_dist_name` prefix).
pub fn belongs(host: &KpackWheel, device: &KpackWheel) -> Result<()> {
    required_by(
        (&host.name, &host.version, &host.requires_dist),
        (&device.name, &device.version),
    )?;
    pins_host(device, &host.name, &host.version)
}

/// The device side of [`belongs`], all a device wheel can say before its
/// host has extras (`device-extras` writes them): it pins host `name`
/// `version` (`<host>==<version>` with no marker, as AMD's splitter and
/// rocm_wheel write it; names PEP 503-normalised, versions by PEP 440
/// equality), and is at that version (what the host's extras ask pip for).
pub fn pins_host(device: &KpackWheel, name: &str, version: &str) -> Result<()> {
    let pinned = device.requires_dist.iter().any(|r| {
        wheel_format::exact_pin(r).is_some_and(|(n, v, marker)| {
            marker.is_empty()
                && canonical_name(&n) == canonical_name(name)
                && same_version(&v, version)
        })
    });
    if !pinned {
        bail!(
            "{} does not require {name}=={version}: a device wheel pins its host \
             (rocm_wheel writes it with --//:hip_device_code=kpack)",
            device.name
        );
    }
    if !same_version(&device.version, version) {
        bail!(
            "{} is {}, but the host {name} is {version}: device wheels are at the host's exact \
             version; give the device wheels built with this host",
            device.name,
            device.version
        );
    }
    Ok(())
}

/// [`belongs`] from the host's name, version and Requires-Dist, and the
/// device wheel's name and version (`variant` reads the host's METADATA
/// itself).
pub fn required_by(host: (&str, &str, &[String]), device: (&str, &str)) -> Result<()> {
    let ((host_name, host_version, requires), (device_name, device_version)) = (host, device);
    let key = canonical_name(device_name);
    let pins: Vec<String> = (requires.iter())
        .filter_map(|r| wheel_format::exact_pin(r))
        .filter(|(name, _, marker)| canonical_name(name) == key && is_device_extra(marker))
        .map(|(_, version, _)| version)
        .collect();
    if pins.is_empty() {
        bail!(
            "{} is not a device wheel of {} {}: no device-* extra of the host requires {} (a \
             host names its device wheels in its extras, `device-<target>`); give the device \
             wheels its extras name, or a host built with them",
            device_name,
            host_name,
            host_version,
            device_name
        );
    }
    if !pins.iter().any(|v| same_version(v, device_version)) {
        bail!(
            "{} {} is not the device wheel {} {} requires ({}=={}): give the device wheels built \
             with this host",
            device_name,
            device_version,
            host_name,
            host_version,
            device_name,
            pins[0]
        );
    }
    Ok(())
}

/// A marker without spaces, quoted with `"`, lower-cased: what the
/// extra tests below compare.
fn squeezed(marker: &str) -> String {
    (marker.chars())
        .filter(|c| !c.is_whitespace())
        .map(|c| if c == '\'' { '"' } else { c })
        .collect::<String>()
        .to_ascii_lowercase()
}

/// Whether a requirement's marker puts it under a `device-*` extra
/// (`extra == "device-gfx1201"`, any quoting and spacing).
fn is_device_extra(marker: &str) -> bool {
    squeezed(marker).contains("extra==\"device-")
}

/// The device wheels (PEP 503 names) `host` requires under its extra
/// `device-<target>`: what `pip install "<host>[device-<target>]"`
/// installs, a target's wheel and the rest of its packaging chain (AMD's
/// sets emit a family wheel beside target wheels).
pub fn required_for_target(host: &KpackWheel, target: &str) -> BTreeSet<String> {
    let want = format!("extra==\"{}\"", canonical_name(&format!("device-{target}")));
    (host.requires_dist.iter())
        .filter_map(|r| wheel_format::exact_pin(r))
        .filter(|(_, _, marker)| squeezed(marker).contains(&want))
        .map(|(name, _, _)| canonical_name(&name))
        .collect()
}

/// Refuses device wheels that are not the host's ([`belongs`]), and
/// two sharing a file name (with each other or the host: copied into one
/// directory, one would replace the other).
pub fn check_members(host: &KpackWheel, devices: &[KpackWheel]) -> Result<()> {
    let mut files: HashMap<String, &Path> = HashMap::new();
    files.insert(host.file_name(), &host.path);
    for d in devices {
        belongs(host, d).with_context(|| d.path.display().to_string())?;
        if let Some(other) = files.insert(d.file_name(), &d.path) {
            bail!(
                "{} and {} have one file name, {}: give each wheel once",
                other.display(),
                d.path.display(),
                d.file_name()
            );
        }
    }
    Ok(())
}

/// Refuses wheels that would install one archive twice: installed
/// together, the last would overwrite the others, so whether the set
/// resolves would depend on the install order.
pub fn installed_once(host: &KpackWheel, devices: &[&KpackWheel]) -> Result<()> {
    let mut installed: HashMap<&str, &Path> = HashMap::new();
    for w in std::iter::once(host).chain(devices.iter().copied()) {
        for k in w.archives.keys() {
            if let Some(other) = installed.insert(k, &w.path) {
                bail!(
                    "{} and {} both install {k}: give only one of them (installed together, one would overwrite the other)",
                    other.display(),
                    w.path.display()
                );
            }
        }
    }
    Ok(())
}

/// Every wrapper of `host` checked for every target in `targets` against
/// the archives of `host` and `devices` installed together (see
/// [`installed_once`] for archives installed twice: here the last given
/// wins).
pub fn check_set(host: &KpackWheel, devices: &[&KpackWheel], targets: &[String]) -> Vec<Problem> {
    let mut by_path: BTreeMap<&str, &Toc> = BTreeMap::new();
    for w in std::iter::once(host).chain(devices.iter().copied()) {
        by_path.extend(w.archives.iter().map(|(k, v)| (k.as_str(), v)));
    }
    let archives = Archives::new(by_path);
    host.binaries
        .iter()
        .flat_map(|(binary, refs)| check_binary(binary, refs, &archives, targets))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wheel(name: &str, version: &str, requires: &[&str]) -> KpackWheel {
        KpackWheel {
            path: PathBuf::from(format!("{name}.whl")),
            name: name.to_string(),
            version: version.to_string(),
            requires_dist: requires.iter().map(|r| r.to_string()).collect(),
            binaries: Vec::new(),
            archives: BTreeMap::new(),
        }
    }

    #[test]
    fn a_targets_extra_pulls_its_chain() {
        let host = wheel(
            "torch",
            "1",
            &[
                "amd-torch-device-gfx1201 == 1; extra == \"device-gfx1201\"",
                "amd-torch-device-gfx12==1; extra=='device-gfx1201'",
                "amd-torch-device-gfx12==1; extra == \"device-gfx1200\"",
                "amd-torch-device-gfx942==1; extra == \"device-all\"",
            ],
        );
        let got: Vec<String> = required_for_target(&host, "gfx1201").into_iter().collect();
        assert_eq!(got, ["amd-torch-device-gfx12", "amd-torch-device-gfx1201"]);
        assert!(required_for_target(&host, "gfx942").is_empty());
    }

    #[test]
    fn a_device_wheel_is_the_one_its_host_requires() {
        let host = wheel(
            "torch",
            "2.9.0+rocm7.13.0a20261201",
            &[
                "rocm[libraries]==7.13.0a20261201",
                "amd-torch-device-gfx1201 == 2.9.0+rocm7.13.0a20261201; extra == \"device-gfx1201\"",
                "amd-torch-device-gfx12==2.9.0+rocm7.13.0a20261201; extra == \"device-gfx1201\"",
                "jax-rocm7-plugin-device-gfx1200==2.9.0.0+rocm7.13.0a20261201; extra == 'device-all'",
                "not-a-device==2.9.0",
            ],
        );
        for (name, version) in [
            ("amd-torch-device-gfx1201", "2.9.0+rocm7.13.0a20261201"),
            ("AMD_Torch.Device-GFX12", "2.9.0+rocm7.13.0a20261201"),
            (
                "jax-rocm7-plugin-device-gfx1200",
                "2.9.0+rocm7.13.0a20261201",
            ),
        ] {
            let pin = ["torch==2.9.0+rocm7.13.0a20261201"];
            belongs(&host, &wheel(name, version, &pin)).unwrap();
            // Required by the host but not pinning it: not its device wheel.
            let e = belongs(&host, &wheel(name, version, &[])).unwrap_err();
            assert!(
                format!("{e:#}").contains("does not require torch==2.9.0+rocm7.13.0a20261201"),
                "{e:#}"
            );
        }
        for (name, version, needle) in [
            (
                "amd-torch-device-gfx1100",
                "2.9.0+rocm7.13.0a20261201",
                "no device-* extra of the host requires amd-torch-device-gfx1100",
            ),
            ("not-a-device", "2.9.0", "is not a device wheel of torch"),
            ("rocm", "7.13.0a20261201", "is not a device wheel of torch"),
            (
                "amd-torch-device-gfx1201",
                "2.9.0+rocm7.12.0",
                "is not the device wheel torch 2.9.0+rocm7.13.0a20261201 requires",
            ),
            (
                "amd-torch-device-gfx1201",
                "2.9.0",
                "(amd-torch-device-gfx1201==2.9.0+rocm7.13.0a20261201)",
            ),
        ] {
            let e = belongs(&host, &wheel(name, version, &[]))
                .unwrap_err()
                .to_string();
            assert!(e.contains(needle), "{name} {version}: {e}");
        }
    }

    #[test]
    fn a_pin_is_the_host_at_its_version() {
        let pins = |r: &str, name: &str, version: &str| {
            pins_host(&wheel("d", version, &[r]), name, version).is_ok()
        };
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
