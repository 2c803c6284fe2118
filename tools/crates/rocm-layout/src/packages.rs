//! Which of TheRock's pip SDK packages installs a ROCm library, by soname.

/// TheRock's pip package that installs a library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SdkPackage {
    /// `rocm-sdk-core`: the HIP runtime and what it loads.
    Core,
    /// `rocm-sdk-libraries` (multi-arch) or `rocm-sdk-libraries-<family>`:
    /// the math and ML libraries, whose kernels are per gfx family.
    Libraries,
}

/// Library names (the soname between `lib` and `.so`) by package, as
/// TheRock's SDK wheels lay them out.
const LIBRARIES: &[(&str, SdkPackage)] = &[
    ("amd_comgr", SdkPackage::Core),
    ("amdhip64", SdkPackage::Core),
    ("hiprtc", SdkPackage::Core),
    ("hsa-runtime64", SdkPackage::Core),
    ("rocm-core", SdkPackage::Core),
    ("rocm_smi64", SdkPackage::Core),
    ("rocprofiler-register", SdkPackage::Core),
    ("roctracer64", SdkPackage::Core),
    ("roctx64", SdkPackage::Core),
    ("MIOpen", SdkPackage::Libraries),
    ("hipblas", SdkPackage::Libraries),
    ("hipblaslt", SdkPackage::Libraries),
    ("hipfft", SdkPackage::Libraries),
    ("hiprand", SdkPackage::Libraries),
    ("hipsolver", SdkPackage::Libraries),
    ("hipsparse", SdkPackage::Libraries),
    ("hipsparselt", SdkPackage::Libraries),
    ("rccl", SdkPackage::Libraries),
    ("rocblas", SdkPackage::Libraries),
    ("rocfft", SdkPackage::Libraries),
    ("rocrand", SdkPackage::Libraries),
    ("rocsolver", SdkPackage::Libraries),
    ("rocsparse", SdkPackage::Libraries),
];

/// The SDK package holding `soname` (`libamdhip64.so.7`), if it is ROCm's.
pub fn sdk_package(soname: &str) -> Option<SdkPackage> {
    let stem = soname.strip_prefix("lib")?;
    let stem = &stem[..stem.find(".so")?];
    LIBRARIES
        .iter()
        .find(|(name, _)| *name == stem)
        .map(|(_, p)| *p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packages_by_soname() {
        assert_eq!(sdk_package("libamdhip64.so.7"), Some(SdkPackage::Core));
        assert_eq!(sdk_package("libhipblas.so.3"), Some(SdkPackage::Libraries));
        assert_eq!(sdk_package("libMIOpen.so.1"), Some(SdkPackage::Libraries));
        assert_eq!(sdk_package("libstdc++.so.6"), None);
        assert_eq!(sdk_package("libamdhip64"), None);
        assert_eq!(sdk_package("amdhip64.so"), None);
    }
}
