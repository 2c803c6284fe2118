#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = offload_bundle::fuzz_read(data);
});
