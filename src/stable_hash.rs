//! The stable 64-bit key hash: SipHash-1-3 with zero keys over a documented byte encoding.
//!
//! MonkeyDB (Biswas et al., OOPSLA'21), the store behind IsoPredict's traces (PLDI'24 §6), names
//! every key by hashing a tuple with Rust's `DefaultHasher`, which is SipHash-1-3 (Aumasson &
//! Bernstein) keyed with (0, 0). Rust does not promise that `DefaultHasher` stays the same, so
//! this file implements the function itself; the keys it derives are equal to the ones in the
//! artifact's traces (tests pin values copied from `tests/data/isopredict-traces`).
//!
//! Encoding, the same bytes Rust's `Hash` feeds for these types on a 64-bit machine:
//! - a string: its UTF-8 bytes followed by one `0xFF` byte;
//! - a `u64` (or `usize`, or an enum discriminant): 8 bytes, little-endian;
//! - a `Vec<u64>`: its length as a `u64`, then each element.
//!
//! A tuple is the concatenation of its fields. [`StableHasher`] is `Clone`, so a hasher that
//! has absorbed a common prefix (table, tag, column) can be reused for every row.

/// Streaming SipHash-1-3 with keys (0, 0).
#[derive(Debug, Clone)]
pub struct StableHasher {
    v0: u64,
    v1: u64,
    v2: u64,
    v3: u64,
    tail: u64,
    ntail: usize,
    length: usize,
}

impl Default for StableHasher {
    fn default() -> Self {
        Self::new()
    }
}

#[inline]
fn sip_round(v0: &mut u64, v1: &mut u64, v2: &mut u64, v3: &mut u64) {
    *v0 = v0.wrapping_add(*v1);
    *v1 = v1.rotate_left(13);
    *v1 ^= *v0;
    *v0 = v0.rotate_left(32);
    *v2 = v2.wrapping_add(*v3);
    *v3 = v3.rotate_left(16);
    *v3 ^= *v2;
    *v0 = v0.wrapping_add(*v3);
    *v3 = v3.rotate_left(21);
    *v3 ^= *v0;
    *v2 = v2.wrapping_add(*v1);
    *v1 = v1.rotate_left(17);
    *v1 ^= *v2;
    *v2 = v2.rotate_left(32);
}

impl StableHasher {
    /// A hasher that has absorbed nothing.
    pub fn new() -> Self {
        StableHasher {
            v0: 0x736f_6d65_7073_6575,
            v1: 0x646f_7261_6e64_6f6d,
            v2: 0x6c79_6765_6e65_7261,
            v3: 0x7465_6462_7974_6573,
            tail: 0,
            ntail: 0,
            length: 0,
        }
    }

    #[inline]
    fn compress(&mut self, m: u64) {
        self.v3 ^= m;
        sip_round(&mut self.v0, &mut self.v1, &mut self.v2, &mut self.v3);
        self.v0 ^= m;
    }

    /// Absorbs raw bytes.
    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        self.length += bytes.len();
        let mut rest = bytes;
        if self.ntail != 0 {
            let need = 8 - self.ntail;
            let take = need.min(rest.len());
            for (i, &b) in rest[..take].iter().enumerate() {
                self.tail |= (b as u64) << (8 * (self.ntail + i));
            }
            self.ntail += take;
            rest = &rest[take..];
            if self.ntail < 8 {
                return self;
            }
            let m = self.tail;
            self.compress(m);
            self.tail = 0;
            self.ntail = 0;
        }
        let mut chunks = rest.chunks_exact(8);
        for chunk in &mut chunks {
            let m = u64::from_le_bytes(chunk.try_into().expect("8-byte chunk"));
            self.compress(m);
        }
        for (i, &b) in chunks.remainder().iter().enumerate() {
            self.tail |= (b as u64) << (8 * i);
        }
        self.ntail = chunks.remainder().len();
        self
    }

    /// Absorbs a string the way Rust's `Hash for str` does: bytes, then `0xFF`.
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes());
        self.bytes(&[0xFF])
    }

    /// Absorbs a `u64` (also used for lengths and enum discriminants): 8 bytes little-endian.
    pub fn u64(&mut self, x: u64) -> &mut Self {
        self.bytes(&x.to_le_bytes())
    }

    /// The hash of everything absorbed so far (the hasher can keep absorbing afterwards).
    pub fn finish(&self) -> u64 {
        let (mut v0, mut v1, mut v2, mut v3) = (self.v0, self.v1, self.v2, self.v3);
        let b = ((self.length as u64 & 0xff) << 56) | self.tail;
        v3 ^= b;
        sip_round(&mut v0, &mut v1, &mut v2, &mut v3);
        v0 ^= b;
        v2 ^= 0xff;
        for _ in 0..3 {
            sip_round(&mut v0, &mut v1, &mut v2, &mut v3);
        }
        v0 ^ v1 ^ v2 ^ v3
    }
}

/// The stable hash of one string (MonkeyDB's set id of a table, or a string key component).
pub fn hash_str(s: &str) -> u64 {
    StableHasher::new().str(s).finish()
}

/// The stable hash of a `Vec<u64>` (MonkeyDB's row id of a primary-key tuple).
pub fn hash_u64s(values: &[u64]) -> u64 {
    let mut h = StableHasher::new();
    h.u64(values.len() as u64);
    for &v in values {
        h.u64(v);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{Hash, Hasher};

    #[allow(deprecated)]
    fn std_hash<T: Hash>(t: &T) -> u64 {
        let mut s = std::collections::hash_map::DefaultHasher::new();
        t.hash(&mut s);
        s.finish()
    }

    #[test]
    fn matches_the_artifact_traces() {
        // Set ids and row ids of Smallbank's ACCOUNTS table, as printed in
        // tests/data/isopredict-traces/smallbank_small_10000.txt.
        assert_eq!(hash_str("ACCOUNTS"), 6871557320205672354);
        assert_eq!(hash_str("SAVINGS"), 9297007753912807030);
        assert_eq!(hash_str("CHECKING"), 6284751966915899473);
        assert_eq!(hash_u64s(&[0]), 9886797495896358906);
        assert_eq!(hash_u64s(&[4]), 792017965103506125);
        // (ACCOUNTS, KeyTag::Columns): a string then the discriminant 0.
        assert_eq!(
            StableHasher::new().str("ACCOUNTS").u64(0).finish(),
            9934390104948777825
        );
    }

    #[test]
    fn agrees_with_std_default_hasher_on_every_split() {
        let data: Vec<u8> = (0u8..=40).collect();
        for len in 0..data.len() {
            for split in 0..=len {
                let mut h = StableHasher::new();
                h.bytes(&data[..split]).bytes(&data[split..len]);
                let mut s = {
                    #[allow(deprecated)]
                    std::collections::hash_map::DefaultHasher::new()
                };
                s.write(&data[..len]);
                assert_eq!(h.finish(), s.finish(), "len {len} split {split}");
            }
        }
        assert_eq!(hash_str("x"), std_hash(&"x"));
        assert_eq!(hash_u64s(&[1, 2, 3]), std_hash(&vec![1u64, 2, 3]));
    }
}
