//! Generated input bytes: deterministic, so a failure reproduces.

/// `n` deterministic, semi-compressible bytes (text-like with noise): input
/// for the deflate tests of the zip writer and the wheel rewriter.
pub fn sample(n: usize) -> Vec<u8> {
    let mut x: u32 = 12345;
    (0..n)
        .map(|i| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            if (x >> 16) & 3 == 0 {
                (x >> 8) as u8
            } else {
                b"the quick brown fox jumps over the lazy dog\n"[i % 44]
            }
        })
        .collect()
}

/// xorshift64*: deterministic pseudo-random numbers for generated inputs.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// Compressible but irregular bytes: words, numbers and random runs, so
/// deflate has real match choices to make (where a stale state shows).
pub fn payload(rng: &mut Rng, len: usize) -> Vec<u8> {
    const WORDS: [&[u8]; 8] = [
        b"kernel ",
        b"gfx90a ",
        b"offload ",
        b"\x00\x00\x00\x01",
        b"rocm ",
        b"wheel\n",
        b"\x7fELF",
        b"hip_fatbin ",
    ];
    let mut v = Vec::with_capacity(len + 64);
    while v.len() < len {
        match rng.below(4) {
            0 => v.extend_from_slice(WORDS[rng.below(8) as usize]),
            1 => v.extend_from_slice(format!("{} ", rng.below(100_000)).as_bytes()),
            2 => {
                let n = rng.below(24) as usize;
                v.extend((0..n).map(|_| rng.next_u64() as u8));
            }
            _ => {
                // A copy of earlier data at a random distance.
                if v.len() > 64 {
                    let from = rng.below(v.len() as u64 - 32) as usize;
                    let n = 8 + rng.below(24) as usize;
                    v.extend_from_within(from..from + n.min(v.len() - from));
                }
            }
        }
    }
    v.truncate(len);
    v
}
