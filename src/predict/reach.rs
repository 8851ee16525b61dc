//! Static reachability between nodes: a bit matrix and its transitive closure (Warshall's
//! algorithm on 64-bit words, `O(n³/64)`). The encodings use it to create relation variables
//! only for pairs that some combination of possible edges can relate.

/// An `n × n` bit matrix.
#[derive(Debug, Clone)]
pub(crate) struct Reach {
    n: usize,
    words: usize,
    bits: Vec<u64>,
}

impl Reach {
    /// The empty relation on `n` nodes.
    pub fn new(n: usize) -> Reach {
        let words = n.div_ceil(64).max(1);
        Reach {
            n,
            words,
            bits: vec![0; n * words],
        }
    }

    /// Adds the edge `a → b`.
    pub fn add(&mut self, a: u32, b: u32) {
        self.bits[a as usize * self.words + b as usize / 64] |= 1 << (b % 64);
    }

    /// Whether `a → b` is in the relation.
    pub fn has(&self, a: u32, b: u32) -> bool {
        self.bits[a as usize * self.words + b as usize / 64] >> (b % 64) & 1 == 1
    }

    /// Replaces the relation by its transitive closure.
    pub fn close(&mut self) {
        let w = self.words;
        for k in 0..self.n {
            let (kw, kb) = (k / 64, k % 64);
            for i in 0..self.n {
                if i != k && self.bits[i * w + kw] >> kb & 1 == 1 {
                    for x in 0..w {
                        let v = self.bits[k * w + x];
                        self.bits[i * w + x] |= v;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closure_of_a_chain_and_a_cycle() {
        let mut r = Reach::new(70);
        r.add(0, 1);
        r.add(1, 65);
        r.add(65, 69);
        r.add(3, 4);
        r.add(4, 3);
        r.close();
        assert!(r.has(0, 69));
        assert!(r.has(1, 69));
        assert!(!r.has(69, 0));
        assert!(r.has(3, 3));
        assert!(!r.has(0, 3));
    }
}
