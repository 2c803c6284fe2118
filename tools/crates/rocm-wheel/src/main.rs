//! `rocm-wheel`: one CLI, one subcommand per concern. Each subcommand is a
//! thin shell over a library crate; see `src/cmd/`.

use std::sync::LazyLock;

use clap::{Parser, Subcommand};

mod cmd;
mod memory;

/// `0.1.0`, or `0.1.0 (git <commit>)` for the release wheel's binary, which
/// Bazel compiles with ROCM_WHEEL_REVISION (tools/release).
static VERSION: LazyLock<String> = LazyLock::new(|| {
    let version = env!("CARGO_PKG_VERSION");
    match option_env!("ROCM_WHEEL_REVISION") {
        Some(revision) => format!("{version} ({revision})"),
        None => version.to_string(),
    }
});

#[derive(Parser)]
#[command(
    name = "rocm-wheel",
    version = VERSION.as_str(),
    about = "Wheel, ELF and offload-bundle tools for rules_rocm",
    after_help = "Outputs are written atomically: a failed or refused run leaves no output and no \
                  temporary file, nor does a killed one where the filesystem has O_TMPFILE. \
                  Memory stays within per-command bounds whatever an input claims \
                  (tools/crates/rocm-wheel/README.md in rules_rocm, \"Memory bounds\")."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write a PEP 427 wheel from a JSON manifest.
    Build(cmd::build::Args),
    /// Read or set DT_RUNPATH / DT_RPATH of an ELF file.
    Rpath(cmd::rpath::Args),
    /// Lower an ELF file's glibc floor: its weak references to newer glibc
    /// versions (Rust std's gettid, statx, ...) lose their version.
    ///
    /// The loader then binds such a symbol to glibc's default version when
    /// it has one and to null otherwise, which is what a weak reference
    /// expects; version needs only they used are dropped. A strong
    /// reference to a newer version is refused, named.
    GlibcFloor(cmd::glibc_floor::Args),
    /// Check the ELF files of a wheel against a manylinux policy.
    Check(cmd::check::Args),
    /// Write or read clang offload bundles.
    Bundle(cmd::bundle::Args),
    /// Describe a wheel, shared object or object file.
    Inspect(cmd::inspect::Args),
    /// Keep only some GPU families' device code in a wheel.
    ///
    /// Every ELF member's offload bundles (.hip_fatbin) keep the host entry
    /// and the code objects of the requested targets, in the same format and
    /// compression. Each bundle stays at its offset and the bytes it frees
    /// become zeros, so host code, symbols, relocations and addresses are
    /// byte-identical. The download shrinks (zeros compress to almost nothing
    /// in the wheel); the installed size does not: each .so keeps its size,
    /// with zeros where the dropped code objects were.
    ///
    /// A code object for a generic target (gfx12-generic) stays when the
    /// generic target runs on a requested target (gfx1201), next to any
    /// code object for that target itself.
    ///
    /// Refused: a requested target no bundle has code for (a family needs at
    /// least one of its targets), a wheel without device code, and a bundle
    /// that would keep no code object.
    Thin(cmd::thin::Args),
    /// Fix a ROCm wheel's search paths, Root-Is-Purelib and platform tag.
    ///
    /// Each ELF file's DT_RUNPATH (or DT_RPATH) keeps only the entries that
    /// work where the wheel is installed: $ORIGIN-relative directories the
    /// wheel installs files in, /opt/rocm/lib, and $ORIGIN/… paths that
    /// reach TheRock's pip SDK next to site-packages (_rocm_sdk_core/lib,
    /// _rocm_sdk_libraries[_<family>]/lib). Build-tree, absolute, relative,
    /// empty and duplicate entries are dropped. Only the dynamic strings
    /// change (elf-edit); every other byte of each file stays.
    ///
    /// A wheel with native code gets Root-Is-Purelib: false. The platform
    /// tag is kept if rocm-wheel check proves it, else (or with --plat)
    /// set; RECORD is rewritten.
    ///
    /// Refused, with no output file: anything rocm-wheel check still finds
    /// an error in after these fixes (a library to bundle, symbols too new
    /// for the tag). Repairing a repaired wheel changes nothing: the
    /// output is then a byte copy of the input.
    Repair(cmd::repair::Args),
    /// Check that a HIP host object's kernels are in its code objects.
    Kernels(cmd::kernels::Args),
    /// Write kpack markers and archives (device code stored apart from host binaries), list archives.
    Kpack(cmd::kpack::Args),
    /// Give a kpack host wheel one extra per device wheel.
    ///
    /// Each device wheel `<host>-device-<bundle>` (rocm-bootstrap's
    /// device_dist_name: gfx1201, gfx12-0, gfx12) becomes the extra
    /// `device-<bundle>`, which requires it at the host's version, and
    /// `device-all` requires every one: `pip install "host[device-gfx1201]"`
    /// installs the host with its gfx1201 device code, as TheRock's torch
    /// wheels do. Only METADATA changes (RECORD follows).
    ///
    /// Refused: a device wheel of another distribution or version (PEP 440
    /// equality, as pip compares the pins: 1.0 is 1.0.0), or that does not
    /// pin the host; two for one bundle; a host that has one of the extras
    /// already.
    DeviceExtras(cmd::device_extras::Args),
    /// Write a static package index of a folder of wheels.
    ///
    /// PEP 503 HTML and PEP 691 JSON pages (index.html, index.json) with
    /// sha256 fragments, data-requires-python and each wheel's METADATA
    /// (PEP 658), projects under their normalised names, the wheels copied
    /// beside their page: serve OUT from any static file server, or
    /// `pip install --index-url file:///abs/OUT NAME`.
    ///
    /// Variant wheels (`rocm-wheel variant`) are listed as any wheel, and
    /// each package version with some gets `{name}-{version}-variants.json`
    /// beside them (PEP 825 draft): their `variant.json` files merged.
    ///
    /// Refused, with no output: a file that is not a wheel, two different
    /// wheels with one file name, two file names for one wheel (project,
    /// version, tags, variant label), a variant wheel whose `variant.json`
    /// is missing, invalid or contradicts another's (one label, two
    /// property sets), an output directory that is not empty.
    Index(cmd::index::Args),
    /// Write a kpack host wheel as a variant wheel (PEP 825 / PEP 850 drafts).
    ///
    /// The host wheel plus `*.dist-info/variant.json` (schema v0.2.0, as
    /// variantlib 0.2.2 reads it): label LABEL, property `amd :: gfx_arch`
    /// listing every target its device wheels serve, rocm-bootstrap's `amd`
    /// provider (`rocm-bootstrap>=0.3.0`). METADATA requires each target's
    /// device wheel through a marker, `"amd :: gfx_arch :: gfx1201" in
    /// variant_properties`; the file name ends in `-LABEL.whl`. `--label null`
    /// writes the null variant (no properties, no device wheels).
    ///
    /// Refused, with no output: a label outside ^[0-9a-z_.]{1,16}$, a target
    /// the provider does not know (gfx9999) or a generic one, a device wheel
    /// of another host or version, two device wheels for one target, a
    /// variant wheel as input.
    Variant(cmd::variant::Args),
}

fn main() -> std::process::ExitCode {
    memory::return_freed_buffers();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Build(a) => cmd::build::run(a),
        Command::Rpath(a) => cmd::rpath::run(a),
        Command::GlibcFloor(a) => cmd::glibc_floor::run(a),
        Command::Check(a) => return std::process::ExitCode::from(cmd::check::run(a)),
        Command::Bundle(a) => cmd::bundle::run(a),
        Command::Inspect(a) => cmd::inspect::run(a),
        Command::Thin(a) => cmd::thin::run(a),
        Command::Kernels(a) => cmd::kernels::run(a),
        Command::Repair(a) => cmd::repair::run(a),
        Command::Kpack(a) => cmd::kpack::run(a),
        Command::DeviceExtras(a) => cmd::device_extras::run(a),
        Command::Index(a) => cmd::index::run(a),
        Command::Variant(a) => cmd::variant::run(a),
    };
    // Returning (not `process::exit`) runs every destructor first.
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rocm-wheel: error: {e:#}");
            std::process::ExitCode::from(1)
        }
    }
}
