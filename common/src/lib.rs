//! Small rules that more than one llmctl crate needs and that belong to none of them: the
//! engine, the wire, the CLI and the simulator all reach them here, so none depends on another
//! for them.

pub mod classify;
pub mod delays;
pub mod duration;
pub mod located;
pub mod paths;
pub mod text;
pub mod time;

/// The p-th percentile (0..=100) of sorted values, by nearest rank; None when there are none.
pub fn nearest_rank(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::nearest_rank;

    #[test]
    fn the_nearest_rank_is_the_smallest_value_with_p_percent_at_or_below_it() {
        assert_eq!(nearest_rank(&[], 50.0), None);
        let v: Vec<u64> = (1..=10).collect();
        assert_eq!(nearest_rank(&v, 0.0), Some(1));
        assert_eq!(nearest_rank(&v, 50.0), Some(5));
        assert_eq!(nearest_rank(&v, 51.0), Some(6));
        assert_eq!(nearest_rank(&v, 100.0), Some(10));
    }
}
