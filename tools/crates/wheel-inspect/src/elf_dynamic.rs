//! What an ELF file's dynamic section says about loading it (`DT_SONAME`,
//! `DT_NEEDED`, `DT_RPATH`, `DT_RUNPATH`), read the same way by `check` and
//! `inspect`.

use goblin::elf::Elf;

/// The dynamic-section facts of one ELF file, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DynamicFacts {
    pub soname: Option<String>,
    pub needed: Vec<String>,
    /// DT_RPATH split at `:`, empty entries kept (glibc reads an empty
    /// entry as the current directory, which `check` reports).
    pub rpath: Vec<String>,
    /// DT_RUNPATH, split the same way.
    pub runpath: Vec<String>,
}

impl DynamicFacts {
    /// Reads them from a parsed ELF file.
    pub fn of(elf: &Elf) -> Self {
        DynamicFacts {
            soname: elf.soname.map(str::to_string),
            needed: elf.libraries.iter().map(|s| s.to_string()).collect(),
            rpath: split_path_list(&elf.rpaths),
            runpath: split_path_list(&elf.runpaths),
        }
    }
}

fn split_path_list(values: &[&str]) -> Vec<String> {
    values
        .iter()
        .flat_map(|v| v.split(':'))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_lists_keep_empty_entries() {
        assert_eq!(
            split_path_list(&["$ORIGIN::/opt/rocm/lib", "x"]),
            ["$ORIGIN", "", "/opt/rocm/lib", "x"]
        );
    }
}
