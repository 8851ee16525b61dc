//! OLTP-Bench's random distributions (`com.oltpbenchmark.util.RandomDistribution`), drawing
//! from a shared [`JavaRandom`] exactly as the Java classes do (notes/workloads.md §1.3).

use super::java_random::JavaRandom;

/// `DiscreteRNG.nextLong(rng, n)`: a uniform value in `[0, n)` from one `nextLong` with the
/// sign bit cleared, redrawn only on 64-bit overflow.
pub fn next_long_below(rng: &mut JavaRandom, n: i64) -> i64 {
    loop {
        let bits = ((rng.next_long() as u64) << 1 >> 1) as i64;
        let val = bits % n;
        if bits.wrapping_sub(val).wrapping_add(n - 1) >= 0 {
            return val;
        }
    }
}

/// `Flat(rng, min, max)`: uniform in `[min, max)`.
#[derive(Debug, Clone)]
pub struct Flat {
    min: i64,
    max: i64,
}

impl Flat {
    /// Values in `[min, max)`.
    ///
    /// # Panics
    /// If `min >= max` (Java throws).
    pub fn new(min: i64, max: i64) -> Flat {
        assert!(min < max, "Flat: invalid range [{min}, {max})");
        Flat { min, max }
    }

    /// `nextLong()`.
    pub fn next_long(&self, rng: &mut JavaRandom) -> i64 {
        self.min + next_long_below(rng, self.max - self.min)
    }

    /// `nextInt()` (the long value truncated to an int).
    pub fn next_int(&self, rng: &mut JavaRandom) -> i32 {
        self.next_long(rng) as i32
    }
}

/// `Zipf(rng, min, max, sigma)` with the default epsilon 0.001.
#[derive(Debug, Clone)]
pub struct Zipf {
    k: Vec<i64>,
    v: Vec<f64>,
}

impl Zipf {
    /// Values in `[min, max)`, `P(i)/P(j) = ((j-min+1)/(i-min+1))^sigma`.
    ///
    /// # Panics
    /// If `max <= min` or `sigma <= 1` (Java throws).
    pub fn new(min: i64, max: i64, sigma: f64) -> Zipf {
        let epsilon = 0.001;
        assert!(max > min && sigma > 1.0, "Zipf: invalid arguments");
        let mut k = Vec::new();
        let mut v = Vec::new();
        let mut sum = 0.0;
        let mut last = -1i64;
        for i in min..max {
            sum += (-sigma * ((i - min + 1) as f64).ln()).exp();
            if last == -1 || i as f64 * (1.0 - epsilon) > last as f64 {
                k.push(i);
                v.push(sum);
                last = i;
            }
        }
        if last != max - 1 {
            k.push(max - 1);
            v.push(sum);
        }
        let n = v.len();
        v[n - 1] = 1.0;
        for x in v.iter_mut().take(n - 1) {
            *x /= sum;
        }
        Zipf { k, v }
    }

    /// `nextLong()`: one `nextDouble`, plus one bounded `nextLong` between table points.
    pub fn next_long(&self, rng: &mut JavaRandom) -> i64 {
        let d = rng.next_double();
        // Collections.binarySearch: index if found, else -(insertion point) - 1.
        let found = self
            .v
            .binary_search_by(|x| x.partial_cmp(&d).expect("no NaN"));
        let mut idx = match found {
            Ok(i) if i > 0 => i + 1,
            Ok(i) => i,
            Err(insertion) => insertion,
        };
        if idx >= self.v.len() {
            idx = self.v.len() - 1;
        }
        if idx == 0 {
            return self.k[0];
        }
        let ceiling = self.k[idx];
        let lower = self.k[idx - 1];
        ceiling - next_long_below(rng, ceiling - lower)
    }
}

/// `FlatHistogram(rng, histogram)`: a value drawn with one [`Flat`] over the total count and
/// mapped to the first value whose cumulative count (in value order) is at least the draw —
/// OLTP-Bench's mapping, which gives the first value one extra share.
#[derive(Debug, Clone)]
pub struct FlatHistogram<T: Clone> {
    inner: Flat,
    cumulative: Vec<(i64, T)>,
}

impl<T: Clone + Ord> FlatHistogram<T> {
    /// A histogram of `(value, count)` pairs (sorted by value here, as Java's TreeMap does).
    pub fn new(histogram: &[(T, i64)]) -> FlatHistogram<T> {
        let mut entries = histogram.to_vec();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut total = 0;
        let mut cumulative = Vec::new();
        for (value, count) in entries {
            total += count;
            cumulative.push((total, value));
        }
        FlatHistogram {
            inner: Flat::new(0, total),
            cumulative,
        }
    }

    /// `nextValue()`.
    pub fn next_value(&self, rng: &mut JavaRandom) -> T {
        let idx = self.inner.next_int(rng) as i64;
        let i = self.cumulative.partition_point(|(c, _)| *c < idx);
        self.cumulative[i.min(self.cumulative.len() - 1)].1.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_matches_the_java_formula() {
        // Flat(Random(0), 0, 5): x = nextLong with the sign bit cleared, 0 + x mod 5.
        let mut a = JavaRandom::new(0);
        let mut b = JavaRandom::new(0);
        let f = Flat::new(0, 5);
        for _ in 0..20 {
            let expected = ((b.next_long() as u64) << 1 >> 1) % 5;
            assert_eq!(f.next_long(&mut a), expected as i64);
        }
    }

    #[test]
    fn zipf_with_a_single_value_draws_one_double() {
        let z = Zipf::new(1, 2, 1.001);
        let mut r = JavaRandom::new(9);
        let mut s = JavaRandom::new(9);
        assert_eq!(z.next_long(&mut r), 1);
        s.next_double();
        assert_eq!(r, s);
    }

    #[test]
    fn flat_histogram_gives_the_first_value_one_extra_share() {
        let h = FlatHistogram::new(&[("b", 3), ("a", 2)]);
        let mut r = JavaRandom::new(1);
        let mut counts = [0usize; 2];
        for _ in 0..5000 {
            match h.next_value(&mut r) {
                "a" => counts[0] += 1,
                _ => counts[1] += 1,
            }
        }
        // Draws 0, 1, 2 map to "a" (cumulative 2 ≥ draw), 3 and 4 to "b".
        assert!((counts[0] as f64 / 5000.0 - 0.6).abs() < 0.03, "{counts:?}");
    }
}
