//! What a thinning did, per member and bundle, and its rendering.

use std::fmt::Write as _;

use offload_bundle::thin::ThinnedBundle;

/// The members that lost code objects, in member order; for a split set,
/// which device wheels were kept.
#[derive(Debug, Default)]
pub struct Report {
    pub members: Vec<ThinnedMember>,
    pub device_wheels: Vec<DeviceWheelChoice>,
}

/// A device wheel of a split set, and whether it was kept.
#[derive(Debug)]
pub struct DeviceWheelChoice {
    pub file: String,
    /// The targets its archives serve, in ISA order.
    pub targets: Vec<String>,
    pub kept: bool,
}

/// One thinned member and what each of its bundles kept.
#[derive(Debug)]
pub struct ThinnedMember {
    pub path: String,
    pub bundles: Vec<ThinnedBundle>,
}

impl Report {
    /// One line per member, one per bundle under it.
    pub fn to_human(&self) -> String {
        let mut s = String::new();
        for m in &self.members {
            let _ = writeln!(s, "{}:", m.path);
            for b in &m.bundles {
                let _ = writeln!(
                    s,
                    "  bundle #{} at {:#x}: kept {}; dropped {}; {} -> {} bytes",
                    b.index,
                    b.offset,
                    if b.kept.is_empty() {
                        "(no device code)".to_string()
                    } else {
                        b.kept.join(", ")
                    },
                    if b.dropped.is_empty() {
                        "nothing".to_string()
                    } else {
                        b.dropped.len().to_string() + " code objects"
                    },
                    b.old_size,
                    b.new_size
                );
            }
        }
        for d in &self.device_wheels {
            let _ = writeln!(
                s,
                "{} {} ({})",
                if d.kept { "kept" } else { "left out" },
                d.file,
                d.targets.join(", ")
            );
        }
        s
    }
}
