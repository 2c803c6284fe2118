#![no_main]

// A refusal (Err) is the reader's ordinary answer; a broken promise panics.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = kpack_fuzz::host(data, kpack_fuzz::Plant::from_env());
});
