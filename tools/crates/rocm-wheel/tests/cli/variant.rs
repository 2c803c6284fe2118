//! `rocm-wheel variant` and the index's `-variants.json`: a split set's
//! host as a variant wheel (per-target and family device wheels, the null
//! variant), indexed beside the plain wheels, where pip still takes the
//! plain host; the refusals leave no output. variantlib itself judges the
//! real build's variant wheels (tests/host/kpack/check_variants.py).

use crate::index::{device_extras, device_wheel, pip_report, wheel, wheel_with};
use crate::*;
use serde_json::{json, Value};
use std::io::Read;
use std::path::{Path, PathBuf};

const HOST: &str = "demo_plugin-1.0-py3-none-any.whl";

/// The device wheel `Demo.Plugin-device-<bundle>` 1.0 pinning the host,
/// one archive per target of `targets`, in `dir`.
fn device(dir: &Path, host: &str, bundle: &str, targets: &[&str]) -> PathBuf {
    let pin = format!("{host}==1.0");
    device_wheel(
        dir,
        &format!("{host}-device-{bundle}"),
        "1.0",
        &[&pin],
        targets,
    )
}

/// `host` given its device extras for `devices` (as the rules write a
/// variant's input), in `dir/<sub>/`.
fn with_extras(dir: &Path, sub: &str, host: &Path, devices: &[&Path]) -> PathBuf {
    std::fs::create_dir_all(dir.join(sub)).unwrap();
    let out = format!("{sub}/{}", host.file_name().unwrap().to_string_lossy());
    device_extras(dir, host, &out, devices).success();
    dir.join(out)
}

/// `rocm-wheel variant HOST -o OUT --label LABEL --device-wheel D...` in `dir`.
fn variant(dir: &Path, host: &Path, out: &str, label: &str, devices: &[&Path]) -> Out {
    let mut argv = vec!["variant".to_string(), host.display().to_string()];
    argv.extend(["-o".into(), out.into(), "--label".into(), label.into()]);
    for d in devices {
        argv.extend(["--device-wheel".to_string(), d.display().to_string()]);
    }
    rw(dir, &argv)
}

fn member(wheel: &Path, suffix: &str) -> String {
    let mut z = zip::ZipArchive::new(std::fs::File::open(wheel).unwrap()).unwrap();
    let name = (z.file_names())
        .find(|n| n.ends_with(suffix))
        .unwrap_or_else(|| panic!("{} has no {suffix}", wheel.display()))
        .to_string();
    let mut s = String::new();
    z.by_name(&name).unwrap().read_to_string(&mut s).unwrap();
    s
}

fn variant_requires(metadata: &str) -> Vec<&str> {
    (metadata.lines())
        .filter(|l| l.starts_with("Requires-Dist:") && l.contains("variant_properties"))
        .collect()
}

#[test]
fn a_split_set_as_variant_wheels_in_the_index() {
    let d = tempdir();
    let p = d.path();
    let dist = p.join("dist");
    let host = wheel(&p.join("build"), "Demo.Plugin", "1.0", &[]);
    let g0 = device(&dist, "Demo.Plugin", "gfx1200", &["gfx1200"]);
    let g1 = device(&dist, "Demo.Plugin", "gfx1201", &["gfx1201"]);
    let host_out = dist.join(HOST);
    device_extras(p, &host, host_out.to_str().unwrap(), &[&g0, &g1]).success();
    let rocm = "dist/demo_plugin-1.0-py3-none-any-rocm.whl";
    let out = variant(p, &host_out, rocm, "rocm", &[&g1, &g0]).success();
    assert!(
        out.stdout
            .contains("variant rocm, amd :: gfx_arch :: gfx1200, gfx1201"),
        "{}",
        out.stdout
    );
    let rocm = p.join(rocm);
    let v: Value = serde_json::from_str(&member(&rocm, ".dist-info/variant.json")).unwrap();
    assert_eq!(
        v,
        json!({
            "$schema": "https://variants-schema.wheelnext.dev/v0.2.0.json",
            "default-priorities": {"namespace": ["amd"]},
            "providers": {"amd": {
                "requires": ["rocm-bootstrap>=0.3.0"],
                "plugin-api": "rocm_bootstrap.variant_provider:AMDVariantPlugin"}},
            "variants": {"rocm": {"amd": {"gfx_arch": ["gfx1200", "gfx1201"]}}},
        })
    );
    let metadata = member(&rocm, ".dist-info/METADATA");
    assert_eq!(
        variant_requires(&metadata),
        [
            "Requires-Dist: Demo.Plugin-device-gfx1200==1.0; \"amd :: gfx_arch :: gfx1200\" in variant_properties",
            "Requires-Dist: Demo.Plugin-device-gfx1201==1.0; \"amd :: gfx_arch :: gfx1201\" in variant_properties",
        ]
    );
    // The extras stay; RECORD lists the new file.
    assert!(
        metadata.contains("Provides-Extra: device-gfx1201"),
        "{metadata}"
    );
    assert!(member(&rocm, ".dist-info/RECORD")
        .contains("demo_plugin-1.0.dist-info/variant.json,sha256="));
    // The null variant: no properties, no device wheel.
    variant(
        p,
        &host_out,
        "dist/demo_plugin-1.0-py3-none-any-null.whl",
        "null",
        &[],
    )
    .success();
    let null = p.join("dist/demo_plugin-1.0-py3-none-any-null.whl");
    assert!(variant_requires(&member(&null, ".dist-info/METADATA")).is_empty());

    index_lists_the_variants_and_pip_skips_them(p);
}

/// `dist`'s index: the rocm and null variants merged into the version's
/// `-variants.json`, linked from both pages; pip takes the plain host.
fn index_lists_the_variants_and_pip_skips_them(p: &Path) {
    rw(p, &["index", "-o", "index", "dist"]).success();
    let project = p.join("index/demo-plugin");
    let merged: Value = serde_json::from_slice(
        &std::fs::read(project.join("demo_plugin-1.0-variants.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        merged["variants"],
        json!({"null": {}, "rocm": {"amd": {"gfx_arch": ["gfx1200", "gfx1201"]}}})
    );
    let page: Value =
        serde_json::from_slice(&std::fs::read(project.join("index.json")).unwrap()).unwrap();
    let listed: Vec<&str> = (page["files"].as_array().unwrap().iter())
        .map(|f| f["filename"].as_str().unwrap())
        .collect();
    assert!(
        listed.contains(&"demo_plugin-1.0-variants.json"),
        "{listed:?}"
    );
    let html = std::fs::read_to_string(project.join("index.html")).unwrap();
    assert!(
        html.contains(">demo_plugin-1.0-variants.json</a>"),
        "{html}"
    );
    // pip cannot parse a variant wheel's name and skips it: the plain host.
    let report = pip_report(p, &p.join("index"), "demo-plugin");
    let url = report["install"][0]["download_info"]["url"]
        .as_str()
        .unwrap();
    assert!(url.ends_with(&format!("/{HOST}")), "{url}");
}

#[test]
fn family_device_wheels_get_one_marker_per_member_target() {
    let d = tempdir();
    let p = d.path();
    let plain = wheel(&p.join("h"), "Demo.Plugin", "1.0", &[]);
    let gfx12 = device(
        &p.join("d"),
        "Demo.Plugin",
        "gfx12",
        &["gfx1200", "gfx1201"],
    );
    let host = with_extras(p, "x", &plain, &[&gfx12]);
    let out = "demo_plugin-1.0-py3-none-any-rocm.whl";
    variant(p, &host, out, "rocm", &[&gfx12]).success();
    assert_eq!(
        variant_requires(&member(&p.join(out), ".dist-info/METADATA")),
        [
            "Requires-Dist: Demo.Plugin-device-gfx12==1.0; \"amd :: gfx_arch :: gfx1200\" in variant_properties",
            "Requires-Dist: Demo.Plugin-device-gfx12==1.0; \"amd :: gfx_arch :: gfx1201\" in variant_properties",
        ]
    );
}

/// Long because: one refusal after another, each a few lines.
#[test]
fn variant_refusals_leave_no_output() {
    let d = tempdir();
    let p = d.path();
    let plain = wheel(&p.join("h"), "Demo.Plugin", "1.0", &[]);
    let good = device(&p.join("g"), "Demo.Plugin", "gfx1201", &["gfx1201"]);
    let host = with_extras(p, "with-extras", &plain, &[&good]);
    let out = "out/demo_plugin-1.0-py3-none-any-rocm.whl";
    std::fs::create_dir(p.join("out")).unwrap();
    let refused = |host: &Path, out: &str, label: &str, devices: &[&Path], needle: &str| {
        variant(p, host, out, label, devices).fails(1, needle);
        assert_empty_dir(&p.join("out"));
    };
    refused(
        &host,
        "out/demo_plugin-1.0-py3-none-any-Rocm.whl",
        "Rocm",
        &[&good],
        "invalid variant label \"Rocm\"",
    );
    let long = "abcdefghijklmnopq";
    refused(
        &host,
        &format!("out/x-{long}.whl"),
        long,
        &[&good],
        "1 to 16 characters",
    );
    let unknown = device(&p.join("u"), "Demo.Plugin", "gfx9999", &["gfx9999"]);
    refused(
        &host,
        out,
        "rocm",
        &[&unknown],
        "serves gfx9999, which rocm-bootstrap's amd provider does not know",
    );
    let generic = device(
        &p.join("x"),
        "Demo.Plugin",
        "gfx12-generic",
        &["gfx12-generic"],
    );
    refused(
        &host,
        out,
        "rocm",
        &[&generic],
        "serves the generic target gfx12-generic",
    );
    let twice = device(&p.join("t"), "Demo.Plugin", "gfx12-0", &["gfx1201"]);
    refused(&host, out, "rocm", &[&good, &twice], "both serve gfx1201");
    let other = device(&p.join("o"), "Other", "gfx1201", &["gfx1201"]);
    refused(
        &host,
        out,
        "rocm",
        &[&other],
        "does not require Demo.Plugin==1.0",
    );
    // A device wheel of the host that its extras do not name.
    let unnamed = device(&p.join("n"), "Demo.Plugin", "gfx1200", &["gfx1200"]);
    refused(
        &host,
        out,
        "rocm",
        &[&good, &unnamed],
        "no device-* extra of the host requires Demo.Plugin-device-gfx1200",
    );
    refused(
        &host,
        "out/demo_plugin-1.0-py3-none-any.whl",
        "rocm",
        &[&good],
        "the output must be named demo_plugin-1.0-py3-none-any-rocm.whl",
    );
    refused(&host, out, "rocm", &[], "give the host's device wheels");
    refused(
        &host,
        "out/demo_plugin-1.0-py3-none-any-null.whl",
        "null",
        &[&good],
        "give no --device-wheel with --label null",
    );
    // A variant wheel is no input.
    variant(
        p,
        &host,
        "demo_plugin-1.0-py3-none-any-rocm.whl",
        "rocm",
        &[&good],
    )
    .success();
    let rocm = p.join("demo_plugin-1.0-py3-none-any-rocm.whl");
    refused(
        &rocm,
        "out/demo_plugin-1.0-py3-none-any-rocm-x.whl",
        "x",
        &[&good],
        "is a variant wheel already (label rocm)",
    );
}

#[test]
fn index_refuses_one_label_for_two_property_sets() {
    let d = tempdir();
    let p = d.path();
    let dist = p.join("dist");
    // Two builds' hosts of one version, other platform tags: label rocm
    // for gfx1201 in one and gfx1100 in the other.
    let linux = "py3-none-manylinux_2_28_x86_64";
    let module = p.join("m.py");
    std::fs::write(&module, "").unwrap();
    let a = wheel(&p.join("a"), "Demo.Plugin", "1.0", &[]);
    let b = wheel_with(
        &p.join("b"),
        "Demo.Plugin",
        "1.0",
        linux,
        &[],
        &[("m.py", &module)],
    );
    let ga = device(&p.join("ga"), "Demo.Plugin", "gfx1201", &["gfx1201"]);
    let gb = device(&p.join("gb"), "Demo.Plugin", "gfx1100", &["gfx1100"]);
    let (a, b) = (
        with_extras(p, "xa", &a, &[&ga]),
        with_extras(p, "xb", &b, &[&gb]),
    );
    std::fs::create_dir(&dist).unwrap();
    variant(
        p,
        &a,
        "dist/demo_plugin-1.0-py3-none-any-rocm.whl",
        "rocm",
        &[&ga],
    )
    .success();
    let out_b = format!("dist/demo_plugin-1.0-{linux}-rocm.whl");
    variant(p, &b, &out_b, "rocm", &[&gb]).success();
    rw(p, &["index", "-o", "index", "dist"])
        .fails(1, "the variant label rocm stands for two property sets");
    assert!(!p.join("index").exists());
    // A variant wheel without its variant.json.
    std::fs::remove_file(p.join(&out_b)).unwrap();
    std::fs::copy(&b, p.join(&out_b)).unwrap();
    rw(p, &["index", "-o", "index", "dist"])
        .fails(1, "is named as a variant wheel (label rocm) but has no");
    assert!(!p.join("index").exists());
}
