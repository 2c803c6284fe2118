//! Host/device kernel consistency of one HIP translation unit.
//!
//! clang's host half of a HIP compile defines, per kernel, a device stub
//! (`__device_stub__<name>`, mangled like the kernel with the longer name)
//! that launches it, and a kernel handle that carries the kernel's own
//! (device-side) mangled name and is what `__hipRegisterFunction`
//! registers. The device half defines, per kernel, a kernel descriptor
//! `<name>.kd` in the target's code object. A kernel the host registers
//! with no descriptor in a target's code object fails at launch on that GPU
//! (`hipErrorInvalidDeviceFunction`): the two halves saw different code.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};
use elf_read::raw::STT_FUNC;
use elf_read::Parsed;

const STUB: &str = "__device_stub__";

/// The names of an ELF file's symbols that are defined (section index not
/// undefined), with their types.
fn defined_symbols(data: &[u8]) -> Result<Vec<(String, u8)>> {
    let elf = Parsed::parse(data).context("not a valid ELF file")?;
    Ok(elf
        .symbols()
        .filter(|s| s.defined)
        .map(|s| (s.name.to_string(), s.kind))
        .collect())
}

/// The kernel names a device stub's symbol can stand for (most likely
/// first): `__device_stub__vadd` is `vadd`; `_Z19__device_stub__vaddPfi` is
/// `_Z4vaddPfi` (the identifier's length prefix loses 15). A length prefix
/// that follows digits of the previous component (`_ZN2a219__device_stub__`)
/// is ambiguous, so every split of the digit run is a candidate.
pub fn kernel_candidates(stub: &str) -> Vec<String> {
    let Some(at) = stub.find(STUB) else {
        return Vec::new();
    };
    let digits_start = stub[..at]
        .rfind(|c: char| !c.is_ascii_digit())
        .map_or(0, |i| i + 1);
    let digits = &stub[digits_start..at];
    let rest = &stub[at + STUB.len()..];
    if digits.is_empty() {
        // extern "C" kernels are not mangled.
        return if at == 0 && !rest.is_empty() {
            vec![rest.to_string()]
        } else {
            Vec::new()
        };
    }
    (0..digits.len())
        .rev()
        .filter(|&split| !digits[split..].starts_with('0'))
        .filter_map(|split| {
            let len: usize = digits[split..].parse().ok()?;
            let name_len = len.checked_sub(STUB.len()).filter(|&n| n > 0)?;
            (name_len <= rest.len()).then(|| {
                format!(
                    "{}{}{}{}",
                    &stub[..digits_start],
                    &digits[..split],
                    name_len,
                    rest
                )
            })
        })
        .collect()
}

/// The kernels a HIP host object registers, by their device-side names.
///
/// A stub's name is confirmed by the kernel handle of that name when the
/// object has one (clang >= 13); otherwise the most likely candidate is used.
pub fn host_kernels(host_object: &[u8]) -> Result<BTreeSet<String>> {
    let symbols = defined_symbols(host_object)?;
    let names: BTreeSet<&str> = symbols.iter().map(|(n, _)| n.as_str()).collect();
    let mut kernels = BTreeSet::new();
    for (name, kind) in &symbols {
        if *kind != STT_FUNC || !name.contains(STUB) {
            continue;
        }
        let candidates = kernel_candidates(name);
        let chosen = candidates
            .iter()
            .find(|c| names.contains(c.as_str()))
            .or(candidates.first());
        if let Some(k) = chosen {
            kernels.insert(k.clone());
        }
    }
    Ok(kernels)
}

/// The kernels whose descriptors (`<name>.kd`) a code object defines.
pub fn device_kernels(code_object: &[u8]) -> Result<BTreeSet<String>> {
    Ok(defined_symbols(code_object)?
        .into_iter()
        .filter_map(|(n, _)| n.strip_suffix(".kd").map(str::to_string))
        .collect())
}

/// What one translation unit's check found.
#[derive(Debug, Default)]
pub struct KernelReport {
    /// The kernels the host object registers.
    pub host: BTreeSet<String>,
    /// Target -> registered kernels its code object lacks (only targets that lack some).
    pub missing: BTreeMap<String, Vec<String>>,
}

/// Compares the host object's kernels with each target's code object.
///
/// `devices` are (gfx target, code-object bytes); a code object may hold
/// more kernels than the host registers (device-only kernels are fine).
pub fn check_kernels(host_object: &[u8], devices: &[(String, Vec<u8>)]) -> Result<KernelReport> {
    let host = host_kernels(host_object).context("reading the host object's symbols")?;
    let mut missing = BTreeMap::new();
    for (target, code_object) in devices {
        let device = device_kernels(code_object)
            .with_context(|| format!("reading the {target} code object's symbols"))?;
        let lacking: Vec<String> = host.difference(&device).cloned().collect();
        if !lacking.is_empty() {
            missing.insert(target.clone(), lacking);
        }
    }
    Ok(KernelReport { host, missing })
}

/// Names as `demangled [mangled]` when a demangler is given and works.
fn display_names(demangler: Option<&Path>, names: &[String]) -> Vec<String> {
    let demangled = demangler.and_then(|d| {
        let out = Command::new(d).args(names).output().ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        (out.status.success() && lines.len() == names.len()).then_some(lines)
    });
    match demangled {
        Some(d) => names
            .iter()
            .zip(d)
            .map(|(m, d)| if *m == d { d } else { format!("{d}  [{m}]") })
            .collect(),
        None => names.to_vec(),
    }
}

impl KernelReport {
    /// The kernels the host registers, one a line.
    pub fn host_listing(&self) -> String {
        self.host.iter().map(|k| format!("{k}\n")).collect()
    }

    /// Why `hip_library` `library` refuses `source`: the kernels each
    /// target lacks (demangled by `demangler`, llvm-cxxfilt, if given and
    /// it works), the likely cause and how to compare the two compiles.
    pub fn mismatch_message(
        &self,
        library: &str,
        source: &str,
        demangler: Option<&Path>,
    ) -> String {
        let mut msg = format!(
        "{}: {}: the host code registers {} kernel(s), and the device code of {} target(s) lacks some of them; \
         those launches would fail with hipErrorInvalidDeviceFunction on such GPUs.",
        library,
        source,
        self.host.len(),
        self.missing.len()
    );
        for (target, kernels) in &self.missing {
            let _ = write!(msg, "\n  {target}: missing");
            for k in display_names(demangler, kernels) {
                let _ = write!(msg, "\n    {k}");
            }
        }
        let _ = write!(
        msg,
        "\nLikely cause: the device compile saw other code than the host compile: a define, include or header \
         seen by one side only (device_copts or a per-target select() with -D, an #if on __HIP_DEVICE_COMPILE__ \
         or __gfx*__ around a __global__ function). Compare the two command lines:\n  \
         bazel aquery 'mnemonic(\"HipHostCompile|HipDeviceCompile\", {})'",
        library
    );
        msg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extern_c_stub() {
        assert_eq!(kernel_candidates("__device_stub__vadd"), vec!["vadd"]);
    }

    #[test]
    fn mangled_stubs() {
        assert_eq!(
            kernel_candidates("_Z19__device_stub__vaddPKfS0_Pfi"),
            vec!["_Z4vaddPKfS0_Pfi"]
        );
        assert_eq!(
            kernel_candidates("_ZN2ns25__device_stub__sort_keysIfEEvPT_i"),
            vec!["_ZN2ns10sort_keysIfEEvPT_i"]
        );
    }

    #[test]
    fn digits_of_the_previous_component_are_ambiguous() {
        // namespace a2, kernel k: `_ZN2a216__device_stub__kEv`.
        let c = kernel_candidates("_ZN2a216__device_stub__kEv");
        assert!(c.contains(&"_ZN2a21kEv".to_string()), "{c:?}");
    }

    #[test]
    fn not_a_stub() {
        assert!(kernel_candidates("_Z4vaddPfi").is_empty());
        assert!(kernel_candidates("x__device_stub__").is_empty());
        assert!(kernel_candidates("_Z5__device_stub__k").is_empty());
    }

    #[test]
    fn message_names_library_source_target_and_kernels() {
        let mut report = KernelReport::default();
        report.host.insert("_Z4sortPfi".into());
        report
            .missing
            .insert("gfx1201".into(), vec!["_Z4sortPfi".into()]);
        let m = report.mismatch_message("//pkg:k", "pkg/k.hip", None);
        for needle in [
            "//pkg:k: pkg/k.hip",
            "gfx1201: missing",
            "_Z4sortPfi",
            "Likely cause",
        ] {
            assert!(m.contains(needle), "{needle} not in {m}");
        }
    }
}
