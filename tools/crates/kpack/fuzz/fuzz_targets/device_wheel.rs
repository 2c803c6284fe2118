#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = kpack::fuzz::fuzz_device_wheel(data);
});
