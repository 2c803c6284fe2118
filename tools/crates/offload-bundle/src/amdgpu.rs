//! AMDGPU code objects: the ELF header fields that say which GPU a code
//! object is for, and the offload-bundle entry ids that name it.

use anyhow::{anyhow, bail, Result};

use elf_read::raw::ET_DYN;
pub use elf_read::EM_AMDGPU;
/// Processor selection mask of `e_flags`.
pub const EF_AMDGPU_MACH: u32 = 0x0ff;
const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;
/// `e_ident[EI_ABIVERSION]` from which on the V4 feature encoding is used.
const ELFABIVERSION_AMDGPU_HSA_V4: u8 = 2;

/// `EF_AMDGPU_MACH_AMDGCN_*` values, from LLVM's `BinaryFormat/ELF.h`
/// (reserved values left out). Kept sorted by name for readability only.
const MACH_TABLE: &[(&str, u32)] = &[
    ("gfx10-1-generic", 0x052),
    ("gfx10-3-generic", 0x053),
    ("gfx1010", 0x033),
    ("gfx1011", 0x034),
    ("gfx1012", 0x035),
    ("gfx1013", 0x042),
    ("gfx1030", 0x036),
    ("gfx1031", 0x037),
    ("gfx1032", 0x038),
    ("gfx1033", 0x039),
    ("gfx1034", 0x03e),
    ("gfx1035", 0x03d),
    ("gfx1036", 0x045),
    ("gfx11-generic", 0x054),
    ("gfx1100", 0x041),
    ("gfx1101", 0x046),
    ("gfx1102", 0x047),
    ("gfx1103", 0x044),
    ("gfx1150", 0x043),
    ("gfx1151", 0x04a),
    ("gfx1152", 0x055),
    ("gfx1153", 0x058),
    ("gfx12-generic", 0x059),
    ("gfx1200", 0x048),
    ("gfx1201", 0x04e),
    ("gfx1250", 0x049),
    ("gfx1251", 0x05a),
    ("gfx12-5-generic", 0x05b),
    ("gfx600", 0x020),
    ("gfx601", 0x021),
    ("gfx602", 0x03a),
    ("gfx700", 0x022),
    ("gfx701", 0x023),
    ("gfx702", 0x024),
    ("gfx703", 0x025),
    ("gfx704", 0x026),
    ("gfx705", 0x03b),
    ("gfx801", 0x028),
    ("gfx802", 0x029),
    ("gfx803", 0x02a),
    ("gfx805", 0x03c),
    ("gfx810", 0x02b),
    ("gfx9-4-generic", 0x05f),
    ("gfx9-generic", 0x051),
    ("gfx900", 0x02c),
    ("gfx902", 0x02d),
    ("gfx904", 0x02e),
    ("gfx906", 0x02f),
    ("gfx908", 0x030),
    ("gfx909", 0x031),
    ("gfx90a", 0x03f),
    ("gfx90c", 0x032),
    // gfx940/gfx941 were merged into gfx942 upstream; ROCm 5.2 still emits
    // gfx940 code objects, so keep their historical values.
    ("gfx940", 0x040),
    ("gfx941", 0x04b),
    ("gfx942", 0x04c),
    ("gfx950", 0x04f),
];

/// The `EF_AMDGPU_MACH` value of a processor name such as `gfx90a`.
pub fn mach_of_processor(processor: &str) -> Option<u32> {
    MACH_TABLE
        .iter()
        .find(|(name, _)| *name == processor)
        .map(|&(_, m)| m)
}

/// The processor name of an `EF_AMDGPU_MACH` value.
pub fn processor_of_mach(mach: u32) -> Option<&'static str> {
    MACH_TABLE
        .iter()
        .find(|&&(_, m)| m == mach)
        .map(|&(name, _)| name)
}

/// A parsed bundle entry id: `<kind>-<arch>-<vendor>-<os>-<env>[-<target id>]`,
/// e.g. `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+` or
/// `host-x86_64-unknown-linux-gnu-`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryId<'a> {
    pub kind: &'a str,
    /// `<arch>-<vendor>-<os>-<env>`.
    pub triple: &'a str,
    /// Processor plus features (`gfx90a:xnack+`); empty for host entries.
    pub target_id: &'a str,
}

impl<'a> EntryId<'a> {
    /// Splits an id the way clang does (at most six `-` separated parts, so a
    /// target id such as `gfx9-generic` stays whole). Never fails: ids read
    /// from files are reported as they are.
    pub fn parse(id: &'a str) -> EntryId<'a> {
        let (kind, rest) = id.split_once('-').unwrap_or((id, ""));
        // The triple is the next four `-` separated parts.
        let mut end = 0;
        let mut parts = 0;
        for (i, c) in rest.char_indices() {
            if c == '-' {
                parts += 1;
                if parts == 4 {
                    end = i;
                    break;
                }
            }
        }
        let (triple, target_id) = if parts == 4 {
            (&rest[..end], &rest[end + 1..])
        } else {
            (rest, "")
        };
        EntryId {
            kind,
            triple,
            target_id,
        }
    }

    pub fn is_host(&self) -> bool {
        self.kind == "host"
    }

    /// The processor part of the target id (`gfx90a` for `gfx90a:xnack+`).
    pub fn processor(&self) -> &'a str {
        self.target_id.split(':').next().unwrap_or("")
    }

    /// The `:feature+`/`:feature-` suffixes of the target id.
    pub fn features(&self) -> impl Iterator<Item = &'a str> {
        self.target_id.split(':').skip(1)
    }
}

/// Checks a device entry id written by us: HIP offload kind, amdgcn triple,
/// known processor, known features.
pub fn validate_device_id(id: &str) -> Result<()> {
    let e = EntryId::parse(id);
    let hint = "expected e.g. `hipv4-amdgcn-amd-amdhsa--gfx90a` or `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`";
    if !matches!(e.kind, "hip" | "hipv4" | "openmp") {
        bail!(
            "entry id `{id}`: offload kind `{}` is not hip, hipv4 or openmp; {hint}",
            e.kind
        );
    }
    if !e.triple.starts_with("amdgcn-amd-amdhsa-") {
        bail!(
            "entry id `{id}`: triple `{}` is not amdgcn-amd-amdhsa-*; {hint}",
            e.triple
        );
    }
    if e.target_id.is_empty() {
        bail!("entry id `{id}` names no GPU target; {hint}");
    }
    if mach_of_processor(e.processor()).is_none() {
        bail!(
            "entry id `{id}`: unknown GPU processor `{}` (not in LLVM's EF_AMDGPU_MACH table)",
            e.processor()
        );
    }
    let mut seen: Vec<&str> = Vec::new();
    for f in e.features() {
        if !matches!(f, "xnack+" | "xnack-" | "sramecc+" | "sramecc-") {
            bail!(
                "entry id `{id}`: unknown target feature `{f}` (expected xnack+/- or sramecc+/-)"
            );
        }
        let name = &f[..f.len() - 1];
        if seen.contains(&name) {
            bail!("entry id `{id}`: target feature {name} is given twice; give each feature once");
        }
        seen.push(name);
    }
    Ok(())
}

/// What a device entry id denotes, independent of the order its features
/// are written in: `gfx90a:xnack+:sramecc-` and `gfx90a:sramecc-:xnack+` are
/// the same target, so a bundle holding both would be ambiguous.
pub fn target_key(id: &str) -> (String, String, String, Vec<String>) {
    let e = EntryId::parse(id);
    let mut features: Vec<String> = e.features().map(str::to_string).collect();
    features.sort();
    (
        e.kind.to_string(),
        e.triple.to_string(),
        e.processor().to_string(),
        features,
    )
}

/// What the ELF header of an AMDGPU code object says about its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeObjectHeader {
    pub e_type: u16,
    pub e_flags: u32,
    pub abi_version: u8,
}

impl CodeObjectHeader {
    pub fn mach(&self) -> u32 {
        self.e_flags & EF_AMDGPU_MACH
    }

    pub fn processor(&self) -> Option<&'static str> {
        processor_of_mach(self.mach())
    }

    /// The target id clang would name this code object by, e.g. `gfx90a`
    /// or `gfx90a:sramecc+:xnack-` (features only when on or off, in
    /// LLVM's alphabetical order; only code object V4+ records them).
    pub fn target_id(&self) -> Option<String> {
        let mut id = self.processor()?.to_string();
        if self.abi_version >= ELFABIVERSION_AMDGPU_HSA_V4 {
            for (name, bits) in [
                (
                    "sramecc",
                    (self.e_flags & EF_AMDGPU_FEATURE_SRAMECC_V4) >> 10,
                ),
                ("xnack", (self.e_flags & EF_AMDGPU_FEATURE_XNACK_V4) >> 8),
            ] {
                match bits {
                    2 => id.push_str(&format!(":{name}-")),
                    3 => id.push_str(&format!(":{name}+")),
                    _ => {}
                }
            }
        }
        Some(id)
    }
}

/// Reads the ELF header of an AMDGPU code object. `name` is used in errors.
pub fn read_code_object_header(data: &[u8], name: &str) -> Result<CodeObjectHeader> {
    if !data.starts_with(elf_read::raw::ELFMAG) {
        bail!("{name}: not an ELF file; expected an AMDGPU code object (e.g. from `clang -x hip --cuda-device-only --no-gpu-bundle-output`)");
    }
    if data.len() < 6 || data[4] != 2 || data[5] != 1 {
        bail!("{name}: not a 64-bit little-endian ELF file; AMDGPU code objects are ELF64 LSB");
    }
    if data.len() < 64 {
        bail!(
            "{name}: truncated ELF: the file is {} bytes, shorter than the 64-byte ELF64 \
             header; the file was cut short — rebuild or copy it again",
            data.len()
        );
    }
    let h = elf_read::Elf::open(data)
        .map_err(|e| anyhow!("{name}: {e}"))?
        .header;
    let e_machine = h.e_machine;
    if e_machine != EM_AMDGPU {
        bail!(
            "{name}: ELF e_machine is {e_machine}, not EM_AMDGPU ({EM_AMDGPU}); \
             this is not an AMDGPU code object (host object or wrong file?)"
        );
    }
    Ok(CodeObjectHeader {
        e_type: h.e_type,
        e_flags: h.e_flags,
        abi_version: h.e_ident[8],
    })
}

/// Checks that a code object is a whole, well-formed ELF file that fits
/// the entry id it is bundled under: same processor and, for code object
/// V4+, the same xnack/sramecc settings.
pub fn check_code_object(id: &str, data: &[u8], name: &str) -> Result<()> {
    let e = EntryId::parse(id);
    let hdr = read_code_object_header(data, name)?;
    // A file cut short (an interrupted copy, a full disk) is refused instead
    // of being bundled and failing to load on the GPU at run time.
    elf_read::check_layout64(data).map_err(|e| anyhow!("{name}: {e}"))?;
    // Beyond the layout: symbol, string and dynamic tables must parse too.
    if let Err(err) = elf_read::Parsed::parse(data) {
        bail!("{name}: corrupt ELF: {err}; rebuild the code object");
    }
    // The runtime loads only linked code objects.
    if hdr.e_type != ET_DYN {
        bail!(
            "{name} is an unlinked AMDGPU object (ELF e_type {}), not a code object; \
             link it first, e.g. `ld.lld -shared {name} -o out.co`",
            hdr.e_type
        );
    }
    let want = mach_of_processor(e.processor());
    if want != Some(hdr.mach()) {
        let got = hdr
            .processor()
            .map(str::to_string)
            .unwrap_or_else(|| format!("unknown EF_AMDGPU_MACH {:#x}", hdr.mach()));
        bail!(
            "{name} is a {got} code object (e_flags {:#x}) but entry `{id}` names {}; \
             compile it with --offload-arch={} or fix the entry",
            hdr.e_flags,
            e.processor(),
            e.processor()
        );
    }
    if hdr.abi_version >= ELFABIVERSION_AMDGPU_HSA_V4 {
        let mut want_xnack = None;
        let mut want_sramecc = None;
        for f in e.features() {
            match f {
                "xnack+" => want_xnack = Some(true),
                "xnack-" => want_xnack = Some(false),
                "sramecc+" => want_sramecc = Some(true),
                "sramecc-" => want_sramecc = Some(false),
                _ => {}
            }
        }
        check_feature(
            name,
            id,
            "xnack",
            want_xnack,
            hdr.e_flags & EF_AMDGPU_FEATURE_XNACK_V4,
            8,
        )?;
        check_feature(
            name,
            id,
            "sramecc",
            want_sramecc,
            hdr.e_flags & EF_AMDGPU_FEATURE_SRAMECC_V4,
            10,
        )?;
    }
    Ok(())
}

/// V4 feature fields: 0 unsupported, 1 any, 2 off, 3 on.
fn check_feature(
    name: &str,
    id: &str,
    feature: &str,
    want: Option<bool>,
    bits: u32,
    shift: u32,
) -> Result<()> {
    let got = bits >> shift;
    let ok = match want {
        None => got <= 1,
        Some(true) => got == 3,
        Some(false) => got == 2,
    };
    if !ok {
        let got_s = ["unsupported", "any", "off (-)", "on (+)"][got as usize & 3];
        let want_s = match want {
            None => "unspecified",
            Some(true) => "on (+)",
            Some(false) => "off (-)",
        };
        bail!(
            "{name}: code object has {feature} {got_s} but entry `{id}` says {feature} {want_s}; \
             make the entry's target id match the --offload-arch the object was compiled with"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ids_like_clang() {
        let e = EntryId::parse("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+");
        assert_eq!(e.kind, "hipv4");
        assert_eq!(e.triple, "amdgcn-amd-amdhsa-");
        assert_eq!(e.target_id, "gfx90a:xnack+");
        assert_eq!(e.processor(), "gfx90a");
        assert_eq!(e.features().collect::<Vec<_>>(), ["xnack+"]);
        let g = EntryId::parse("hipv4-amdgcn-amd-amdhsa--gfx9-generic");
        assert_eq!(g.processor(), "gfx9-generic");
        let h = EntryId::parse("host-x86_64-unknown-linux-gnu-");
        assert!(h.is_host());
        assert_eq!(h.triple, "x86_64-unknown-linux-gnu");
        assert_eq!(h.target_id, "");
        // clang-15 writes host ids without the trailing dash.
        let h15 = EntryId::parse("host-x86_64-unknown-linux-gnu");
        assert_eq!(h15.triple, "x86_64-unknown-linux-gnu");
    }

    #[test]
    fn mach_table_is_a_bijection() {
        for (i, (n, m)) in MACH_TABLE.iter().enumerate() {
            for (n2, m2) in &MACH_TABLE[i + 1..] {
                assert_ne!(n, n2);
                assert_ne!(m, m2, "{n} and {n2} share {m:#x}");
            }
        }
        assert_eq!(mach_of_processor("gfx90a"), Some(0x3f));
        assert_eq!(processor_of_mach(0x48), Some("gfx1200"));
    }

    #[test]
    fn target_ids_of_headers() {
        let h = |flags: u32, abi: u8| CodeObjectHeader {
            e_type: 3,
            e_flags: flags,
            abi_version: abi,
        };
        assert_eq!(h(0x53f, 2).target_id().unwrap(), "gfx90a");
        assert_eq!(h(0xe3f, 3).target_id().unwrap(), "gfx90a:sramecc+:xnack-");
        assert_eq!(h(0x33f, 4).target_id().unwrap(), "gfx90a:xnack+");
        // V3 objects use other bits; no features are derived from them.
        assert_eq!(h(0x33f, 1).target_id().unwrap(), "gfx90a");
        assert_eq!(h(0x0ff, 3).target_id(), None);
    }

    #[test]
    fn device_id_validation() {
        validate_device_id("hipv4-amdgcn-amd-amdhsa--gfx1200").unwrap();
        validate_device_id("hip-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-").unwrap();
        for bad in [
            "hipv4-amdgcn-amd-amdhsa--gfx9999",
            "cuda-nvptx64-nvidia-cuda--sm_80",
            "hipv4-amdgcn-amd-amdhsa-",
            "hipv4-amdgcn-amd-amdhsa--gfx90a:fast+",
        ] {
            assert!(validate_device_id(bad).is_err(), "{bad}");
        }
    }
}
