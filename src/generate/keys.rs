//! Key distributions for generated histories: uniform, Zipf and hotspot, as in the PolySI
//! generator Plume uses (Plume §5.1: "uniform by default, or zipfian, or hotspot — 80% of
//! operations on 20% of keys").
//!
//! Zipf is sampled exactly in O(1) with Vose's alias method (M. D. Vose, "A linear algorithm
//! for generating random numbers with a given distribution", IEEE TSE 1991): the table is built
//! once in O(keys).

use super::rng::Rng;

/// How operations pick their key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyDistribution {
    /// Every key equally likely.
    Uniform,
    /// Key `i` (0-based) has weight `1 / (i + 1)^exponent`; key 0 is the hottest.
    Zipf {
        /// The exponent `s` (1.0 is the classic Zipf law).
        exponent: f64,
    },
    /// A fraction of operations goes to a fraction of the keys (the first ones), uniformly
    /// within the hot and within the cold keys.
    Hotspot {
        /// Fraction of the keys that are hot (Plume: 0.2).
        hot_keys: f64,
        /// Fraction of the operations that use a hot key (Plume: 0.8).
        hot_ops: f64,
    },
}

/// Draws keys `0..keys` from a [`KeyDistribution`].
#[derive(Debug, Clone)]
pub struct KeySampler {
    keys: u32,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Uniform,
    Alias { prob: Vec<f64>, alias: Vec<u32> },
    Hotspot { hot: u32, hot_ops: f64 },
}

impl KeySampler {
    /// A sampler over `keys > 0` keys.
    pub fn new(keys: u32, distribution: KeyDistribution) -> KeySampler {
        assert!(keys > 0, "KeySampler needs at least one key");
        let kind = match distribution {
            KeyDistribution::Uniform => Kind::Uniform,
            KeyDistribution::Zipf { exponent } => {
                let weights: Vec<f64> = (0..keys)
                    .map(|i| 1.0 / ((i + 1) as f64).powf(exponent))
                    .collect();
                let (prob, alias) = alias_table(&weights);
                Kind::Alias { prob, alias }
            }
            KeyDistribution::Hotspot { hot_keys, hot_ops } => {
                let hot = ((keys as f64 * hot_keys).round() as u32).clamp(1, keys);
                Kind::Hotspot { hot, hot_ops }
            }
        };
        KeySampler { keys, kind }
    }

    /// One key.
    pub fn sample(&self, rng: &mut Rng) -> u32 {
        match &self.kind {
            Kind::Uniform => rng.below(self.keys as u64) as u32,
            Kind::Alias { prob, alias } => {
                let i = rng.below(self.keys as u64) as usize;
                if rng.next_f64() < prob[i] {
                    i as u32
                } else {
                    alias[i]
                }
            }
            Kind::Hotspot { hot, hot_ops } => {
                let cold = self.keys - hot;
                if cold == 0 || rng.chance(*hot_ops) {
                    rng.below(*hot as u64) as u32
                } else {
                    hot + rng.below(cold as u64) as u32
                }
            }
        }
    }
}

/// Vose's alias table for `weights` (all positive): column `i` keeps `i` with probability
/// `prob[i]` and otherwise yields `alias[i]`.
fn alias_table(weights: &[f64]) -> (Vec<f64>, Vec<u32>) {
    let n = weights.len();
    let total: f64 = weights.iter().sum();
    let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
    let mut prob = vec![1.0; n];
    let mut alias: Vec<u32> = (0..n as u32).collect();
    let (mut small, mut large): (Vec<u32>, Vec<u32>) =
        (0..n as u32).partition(|&i| scaled[i as usize] < 1.0);
    while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
        small.pop();
        prob[s as usize] = scaled[s as usize];
        alias[s as usize] = l;
        scaled[l as usize] -= 1.0 - scaled[s as usize];
        if scaled[l as usize] < 1.0 {
            large.pop();
            small.push(l);
        }
    }
    // Whatever is left (rounding) keeps its own column with certainty.
    (prob, alias)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(sampler: &KeySampler, keys: usize, draws: usize) -> Vec<usize> {
        let mut rng = Rng::new(1);
        let mut counts = vec![0usize; keys];
        for _ in 0..draws {
            counts[sampler.sample(&mut rng) as usize] += 1;
        }
        counts
    }

    #[test]
    fn zipf_follows_its_weights() {
        let keys = 50;
        let sampler = KeySampler::new(keys, KeyDistribution::Zipf { exponent: 1.0 });
        let draws = 400_000;
        let counts = histogram(&sampler, keys as usize, draws);
        let harmonic: f64 = (1..=keys).map(|i| 1.0 / i as f64).sum();
        for (i, &c) in counts.iter().enumerate() {
            let expected = draws as f64 / ((i + 1) as f64 * harmonic);
            let tolerance = 5.0 * expected.sqrt() + 1.0;
            assert!(
                (c as f64 - expected).abs() < tolerance,
                "key {i}: {c} draws, expected {expected:.0}"
            );
        }
    }

    #[test]
    fn hotspot_sends_most_operations_to_few_keys() {
        let sampler = KeySampler::new(
            100,
            KeyDistribution::Hotspot {
                hot_keys: 0.2,
                hot_ops: 0.8,
            },
        );
        let counts = histogram(&sampler, 100, 100_000);
        let hot: usize = counts[..20].iter().sum();
        assert!((78_000..82_000).contains(&hot), "{hot}");
        assert!(counts[20..].iter().all(|&c| c > 0));
    }

    #[test]
    fn uniform_and_single_key() {
        let counts = histogram(&KeySampler::new(4, KeyDistribution::Uniform), 4, 40_000);
        assert!(counts.iter().all(|&c| (9_000..11_000).contains(&c)));
        for d in [
            KeyDistribution::Uniform,
            KeyDistribution::Zipf { exponent: 1.2 },
            KeyDistribution::Hotspot {
                hot_keys: 0.2,
                hot_ops: 0.8,
            },
        ] {
            assert_eq!(histogram(&KeySampler::new(1, d), 1, 100), vec![100]);
        }
    }
}
