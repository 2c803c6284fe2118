//! Parse + set/remove rpath on arbitrary bytes: never panics, and every
//! successful edit re-parses with the new value (see `elf_edit::fuzz_one`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    elf_edit::fuzz_one(data);
});
