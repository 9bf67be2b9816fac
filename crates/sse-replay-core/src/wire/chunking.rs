//! Cutting one body into reads: the chunking property (any chunking of the same bytes gives the
//! same result) is tested with these cuts, and the client-test harness's `random` variant writes
//! with them. The one seeded generator is `fastrand`.

/// Random cut offsets in `1..len`, ascending, each read `1..=max_step` bytes long (`max_step` 0
/// counts as 1), from `rng`: the same seed gives the same cuts.
pub fn random_cuts(rng: &mut fastrand::Rng, len: usize, max_step: usize) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut at = 0usize;
    loop {
        at += rng.usize(1..=max_step.max(1));
        if at >= len {
            return cuts;
        }
        cuts.push(at);
    }
}

/// `body` cut at the ascending offsets `cuts` (the pieces cover it exactly; a repeated offset
/// gives an empty piece). Offsets past the end are clamped.
pub fn split<'a>(body: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut pieces = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for &c in cuts.iter().chain(std::iter::once(&body.len())) {
        let end = c.clamp(start, body.len());
        pieces.push(&body[start..end]);
        start = end;
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_cover_the_body_and_repeat_with_the_seed() {
        let body = [7u8; 1000];
        let a = random_cuts(&mut fastrand::Rng::with_seed(5), body.len(), 64);
        let b = random_cuts(&mut fastrand::Rng::with_seed(5), body.len(), 64);
        assert_eq!(a, b);
        assert!(a.windows(2).all(|w| w[0] < w[1] && w[1] - w[0] <= 64));
        let pieces = split(&body, &a);
        assert_eq!(pieces.iter().map(|p| p.len()).sum::<usize>(), body.len());
        assert!(pieces.iter().all(|p| !p.is_empty()));
        assert!(random_cuts(&mut fastrand::Rng::with_seed(1), 1, 0).is_empty());
    }
}
