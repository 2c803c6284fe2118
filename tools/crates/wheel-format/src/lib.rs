//! wheel-format: the primitives of the wheel format (PEP 427, the binary
//! distribution format spec) that the writer (`build`) and every reader
//! (`inspect`, `check`, `thin`) share, so they agree on what a wheel is:
//!
//! - distribution names, PEP 440 versions, wheel tags and file names, and
//!   extension modules' suffixes against the ABI tag (`cp314t`);
//! - member-name rules (what pip installs);
//! - RECORD: CSV rows with `sha256=` urlsafe-base64 hashes, read, written,
//!   rewritten, and checked against members as they stream;
//! - the `.dist-info` directory; METADATA and WHEEL read, edited and
//!   rendered (one module each), `entry_points.txt` rendered;
//! - PEP 508 requirements, parsed to check them (the PEP 825 draft's
//!   variant markers in variant wheels only), and the draft's rules for
//!   variant labels and properties, and `variant.json` read, merged and
//!   rendered as variantlib does; SPDX license expressions
//!   checked and normalised as packaging (pip, PyPI) does, with the ids of
//!   the SPDX license list.
//!
//! No zip or compression code: callers bring the bytes, so a reader does
//! not pull in the writer's deflate.

mod csv;
mod dist_info;
mod entry_points;
mod extension_abi;
mod hash;
mod headers;
mod license;
mod member_names;
mod metadata;
mod names;
// The packaging oracle test reaches the parser's list of valid
// requirements: a unit test.
#[cfg(test)]
mod packaging;
mod pep508;
mod record;
mod tags;
mod variant;
mod variant_json;
mod version;
mod wheel_file;
mod wheel_name;

pub use dist_info::{dist_info_path, find_dist_info, DistInfoError};
pub use entry_points::render_entry_points;
pub use extension_abi::{extension_abi, extension_abi_problem, is_free_threaded_abi, ExtensionAbi};
pub use hash::{record_hash, Digest, HashingReader, HashingWriter};
pub use headers::{insert_headers, Headers};
pub use license::{
    canonical_license_expression, spdx_ids, spdx_list_version, validate_license_expression,
};
pub use member_names::{
    member_name_problem, normalize_components, validate_member_name, MemberSet,
};
pub use metadata::{
    append_description, read_text_member, rename_metadata, render_metadata, wheel_identity,
    CoreMetadata, MAX_TEXT_MEMBER,
};
pub use names::{canonical_name, dist_info_stem, normalize_name, validate_name};
pub use pep508::{
    exact_pin, parse_requirement, parse_variant_requirement, validate_specifiers, Requirement,
};
pub use record::{
    parse_record, rewrite_record, Expected, Record, RecordEdits, RecordRow, RecordWriter,
};
pub use tags::{parse_tags, wheel_file_name, Tag};
pub use variant::{
    parse_variant_path, validate_variant_key, validate_variant_label, validate_variant_value,
    MAX_VARIANT_LABEL, NULL_VARIANT_LABEL, VARIANT_JSON, VARIANT_SCHEMA_URL,
};
pub use variant_json::{
    describe as describe_variant_properties, Properties as VariantProperties, VariantInfo,
};
pub use version::{normalize_version, same_version, validate_version};
pub use wheel_file::{render_wheel, retag_wheel_file, set_wheel_field, WheelFile};
pub use wheel_name::WheelName;
