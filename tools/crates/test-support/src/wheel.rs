//! Wheels and zip archives made member by member, so a test controls
//! every byte that matters to it: RECORD is computed here (correct unless
//! the test breaks it), and members can be streamed, lie about their size
//! or be symbolic links.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::Digest;

/// URL-safe base64 without padding, as RECORD writes hashes.
fn b64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The RECORD row of a member: `name,sha256=<hash>,<size>`.
pub fn record_row(name: &str, data: &[u8]) -> String {
    format!(
        "{name},sha256={},{}\n",
        b64(&sha2::Sha256::digest(data)),
        data.len()
    )
}

/// The METADATA of `dist` `version`, the fields pip needs.
pub fn metadata_text(dist: &str, version: &str) -> String {
    format!("Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
}

/// Writes `files` (in order, deflated), `symlinks` (name, target) and a
/// RECORD under `dist_info` that lists them all with correct hashes
/// (symbolic links without one). The caller supplies METADATA and WHEEL
/// among `files`, so it may make them disagree with anything.
pub fn wheel_zip(
    path: &Path,
    dist_info: &str,
    files: &[(String, Vec<u8>)],
    symlinks: &[(&str, &str)],
) {
    let mut record: String = files.iter().map(|(n, d)| record_row(n, d)).collect();
    for (n, _) in symlinks {
        record.push_str(&format!("{n},,\n"));
    }
    record.push_str(&format!("{dist_info}/RECORD,,\n"));
    let mut z = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (n, d) in files {
        z.start_file(n.as_str(), opts).unwrap();
        z.write_all(d).unwrap();
    }
    for (n, t) in symlinks {
        z.add_symlink(*n, *t, opts).unwrap();
    }
    z.start_file(format!("{dist_info}/RECORD"), opts).unwrap();
    z.write_all(record.as_bytes()).unwrap();
    z.finish().unwrap();
}

/// A pure wheel (`py3-none-any`, purelib) of `dist`-`version` written
/// member by member: RECORD (with correct hashes), METADATA and WHEEL are
/// generated, so the only fault is the one a test puts in. `symlinks` are
/// (name, target) pairs.
pub fn crafted_wheel(
    path: &Path,
    dist: &str,
    version: &str,
    members: &[(&str, &[u8])],
    symlinks: &[(&str, &str)],
) {
    let di = format!("{dist}-{version}.dist-info");
    let mut files: Vec<(String, Vec<u8>)> = members
        .iter()
        .map(|(n, d)| (n.to_string(), d.to_vec()))
        .collect();
    files.push((
        format!("{di}/METADATA"),
        metadata_text(dist, version).into_bytes(),
    ));
    files.push((
        format!("{di}/WHEEL"),
        b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n".to_vec(),
    ));
    wheel_zip(path, &di, &files, symlinks);
}

/// Packs members into a wheel named `file_name` under `dir`. The `WHEEL`
/// file is written from `root_is_purelib` and the file name's tags.
pub fn make_wheel(
    dir: &Path,
    file_name: &str,
    root_is_purelib: bool,
    members: &[(&str, Vec<u8>)],
) -> PathBuf {
    make_wheel_requiring(dir, file_name, root_is_purelib, members, &[])
}

/// [`make_wheel`] whose METADATA also has a `Requires-Dist` per entry of
/// `requires`.
pub fn make_wheel_requiring(
    dir: &Path,
    file_name: &str,
    root_is_purelib: bool,
    members: &[(&str, Vec<u8>)],
    requires: &[&str],
) -> PathBuf {
    let stem = file_name.strip_suffix(".whl").unwrap();
    let parts: Vec<&str> = stem.split('-').collect();
    let (name, version) = (parts[0], parts[1]);
    let n = parts.len();
    let (py, abi, plat) = (parts[n - 3], parts[n - 2], parts[n - 1]);
    let di = format!("{name}-{version}.dist-info");
    let mut files: Vec<(String, Vec<u8>)> = members
        .iter()
        .map(|(m, b)| (m.to_string(), b.clone()))
        .collect();
    files.push((
        format!("{di}/WHEEL"),
        format!(
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: {root_is_purelib}\nTag: {py}-{abi}-{plat}\n"
        )
        .into_bytes(),
    ));
    files.push((
        format!("{di}/METADATA"),
        (metadata_text(name, version)
            + &(requires.iter())
                .map(|r| format!("Requires-Dist: {r}\n"))
                .collect::<String>())
            .into_bytes(),
    ));
    let path = dir.join(file_name);
    wheel_zip(&path, &di, &files, &[]);
    path
}

/// A zip of `members` (name, bytes), stored: an archive that is not
/// necessarily a wheel.
pub fn zip_of(dst: &Path, members: &[(&str, &[u8])]) {
    let mut w = zip::ZipWriter::new(std::fs::File::create(dst).unwrap());
    for (name, data) in members {
        w.start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap();
}

/// The contents of `name` in the zip archive `whl`.
pub fn member(whl: &Path, name: &str) -> Vec<u8> {
    let mut z = zip::ZipArchive::new(std::fs::File::open(whl).unwrap()).unwrap();
    let mut v = Vec::new();
    z.by_name(name).unwrap().read_to_end(&mut v).unwrap();
    v
}

/// Rewrites a wheel with `member`'s contents replaced, keeping RECORD as it
/// was (what a tampered or corrupted download looks like).
pub fn tamper(src: &Path, dst: &Path, member: &str, contents: &[u8]) {
    let mut z = zip::ZipArchive::new(std::fs::File::open(src).unwrap()).unwrap();
    let mut w = zip::ZipWriter::new(std::fs::File::create(dst).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut found = false;
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        let mut data = Vec::new();
        f.read_to_end(&mut data).unwrap();
        if f.name() == member {
            data = contents.to_vec();
            found = true;
        }
        w.start_file(f.name(), opts).unwrap();
        w.write_all(&data).unwrap();
    }
    w.finish().unwrap();
    assert!(found, "{member} not in {}", src.display());
}

/// A wheel `demo-1.0` (manylinux tag) with `count` members made one at a
/// time by `member(i)` (name, bytes), so only one is ever held here.
pub fn generated_wheel(
    path: &Path,
    count: usize,
    mut member: impl FnMut(usize) -> (String, Vec<u8>),
) {
    let di = "demo-1.0.dist-info";
    let mut z = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(1))
        .large_file(true);
    let mut record = String::new();
    let mut add = |z: &mut zip::ZipWriter<std::fs::File>, name: &str, data: &[u8]| {
        record.push_str(&record_row(name, data));
        z.start_file(name, opts).unwrap();
        z.write_all(data).unwrap();
    };
    for i in 0..count {
        let (name, data) = member(i);
        add(&mut z, &name, &data);
    }
    add(
        &mut z,
        &format!("{di}/METADATA"),
        b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
    );
    add(
        &mut z,
        &format!("{di}/WHEEL"),
        b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-manylinux_2_17_x86_64\n",
    );
    record.push_str(&format!("{di}/RECORD,,\n"));
    z.start_file(format!("{di}/RECORD"), opts).unwrap();
    z.write_all(record.as_bytes()).unwrap();
    z.finish().unwrap();
}

/// One member of a hand-written zip: stored or raw-deflated bytes, the
/// CRC and the uncompressed size the headers record (which may lie).
pub struct RawEntry {
    pub name: String,
    pub method: u16,
    pub data: Vec<u8>,
    pub crc: u32,
    pub size: u64,
}

/// Writes a zip whose entries all carry ZIP64 size fields.
pub fn raw_zip(path: &Path, entries: &[RawEntry]) {
    let mut out = Vec::new();
    let mut cd = Vec::new();
    let p16 = |v: &mut Vec<u8>, x: u16| v.extend_from_slice(&x.to_le_bytes());
    let p32 = |v: &mut Vec<u8>, x: u32| v.extend_from_slice(&x.to_le_bytes());
    let p64 = |v: &mut Vec<u8>, x: u64| v.extend_from_slice(&x.to_le_bytes());
    for e in entries {
        let off = out.len() as u64;
        let mut extra = Vec::new();
        p16(&mut extra, 1);
        p16(&mut extra, 16);
        p64(&mut extra, e.size);
        p64(&mut extra, e.data.len() as u64);
        p32(&mut out, 0x0403_4b50);
        p16(&mut out, 45);
        p16(&mut out, 0);
        p16(&mut out, e.method);
        p32(&mut out, 0x0021_0000);
        p32(&mut out, e.crc);
        p32(&mut out, u32::MAX);
        p32(&mut out, u32::MAX);
        p16(&mut out, e.name.len() as u16);
        p16(&mut out, extra.len() as u16);
        out.extend_from_slice(e.name.as_bytes());
        out.extend_from_slice(&extra);
        out.extend_from_slice(&e.data);
        p32(&mut cd, 0x0201_4b50);
        p16(&mut cd, (3 << 8) | 45);
        p16(&mut cd, 45);
        p16(&mut cd, 0);
        p16(&mut cd, e.method);
        p32(&mut cd, 0x0021_0000);
        p32(&mut cd, e.crc);
        p32(&mut cd, u32::MAX);
        p32(&mut cd, u32::MAX);
        p16(&mut cd, e.name.len() as u16);
        p16(&mut cd, extra.len() as u16);
        p16(&mut cd, 0);
        p16(&mut cd, 0);
        p16(&mut cd, 0);
        p32(&mut cd, 0o100644 << 16);
        p32(&mut cd, off as u32);
        cd.extend_from_slice(e.name.as_bytes());
        cd.extend_from_slice(&extra);
    }
    let cd_off = out.len() as u32;
    let cd_len = cd.len() as u32;
    out.extend_from_slice(&cd);
    p32(&mut out, 0x0605_4b50);
    p32(&mut out, 0);
    p16(&mut out, entries.len() as u16);
    p16(&mut out, entries.len() as u16);
    p32(&mut out, cd_len);
    p32(&mut out, cd_off);
    p16(&mut out, 0);
    std::fs::write(path, out).unwrap();
}

/// A wheel `demo-1.0` holding `elf_name` = `head` followed by `zeros` zero
/// bytes, deflated without ever materialising the member; `claim`
/// overrides the size the headers record.
pub fn bomb_wheel(path: &Path, head: &[u8], zeros: u64, claim: Option<u64>) {
    use flate2::{Compress, Compression, Crc, FlushCompress};
    const UNIT: usize = 1 << 20;
    let deflate = |c: &mut Compress, data: &[u8], flush| {
        let mut out = Vec::with_capacity(data.len() + 1024);
        c.compress_vec(data, &mut out, flush).unwrap();
        out
    };
    assert!(zeros >= UNIT as u64 && zeros & (UNIT as u64 - 1) == 0);
    // The first unit starts the zero run; every later unit of zeros after
    // zeros compresses to the same bytes, so it is made once and repeated.
    let mut c = Compress::new(Compression::new(6), false);
    let mut z = deflate(&mut c, head, FlushCompress::Sync);
    z.extend(deflate(&mut c, &vec![0u8; UNIT], FlushCompress::Sync));
    let mut c2 = Compress::new(Compression::new(6), false);
    c2.set_dictionary(&vec![0u8; 32 << 10]).unwrap();
    let unit = deflate(&mut c2, &vec![0u8; UNIT], FlushCompress::Sync);
    let mut sha = sha2::Sha256::new();
    let mut crc = Crc::new();
    sha.update(head);
    crc.update(head);
    let zero_unit = vec![0u8; UNIT];
    let mut unit_crc = Crc::new();
    unit_crc.update(&zero_unit);
    for i in 0..zeros / UNIT as u64 {
        if i > 0 {
            z.extend_from_slice(&unit);
        }
        sha.update(&zero_unit);
        crc.combine(&unit_crc);
    }
    let mut c3 = Compress::new(Compression::new(6), false);
    z.extend(deflate(&mut c3, &[], FlushCompress::Finish));
    let size = head.len() as u64 + zeros;
    let h = b64(&sha.finalize());
    let di = "demo-1.0.dist-info";
    let meta = b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n".to_vec();
    let wheel =
        b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-manylinux_2_17_x86_64\n"
            .to_vec();
    let mut record = format!("demo/libbomb.so,sha256={h},{size}\n");
    let mut entries = vec![RawEntry {
        name: "demo/libbomb.so".into(),
        method: 8,
        data: z,
        crc: crc.sum(),
        size: claim.unwrap_or(size),
    }];
    for (n, d) in [
        (format!("{di}/METADATA"), meta),
        (format!("{di}/WHEEL"), wheel),
    ] {
        record.push_str(&record_row(&n, &d));
        let mut c = Crc::new();
        c.update(&d);
        entries.push(RawEntry {
            name: n,
            method: 0,
            crc: c.sum(),
            size: d.len() as u64,
            data: d,
        });
    }
    record.push_str(&format!("{di}/RECORD,,\n"));
    let mut c = Crc::new();
    c.update(record.as_bytes());
    entries.push(RawEntry {
        name: format!("{di}/RECORD"),
        method: 0,
        crc: c.sum(),
        size: record.len() as u64,
        data: record.into_bytes(),
    });
    raw_zip(path, &entries);
}
