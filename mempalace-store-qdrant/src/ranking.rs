//! Qdrant scores -> cosine distances (the result order is core's `rank_neighbours`).

/// Cosine distance from a Qdrant score: with `Distance::Cosine` Qdrant returns the cosine
/// similarity (higher is closer), and MemPalace works in distance `1 - cos`.
pub fn distance_from_score(score: f32) -> f32 {
    1.0 - score
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_to_distance() {
        assert_eq!(distance_from_score(1.0), 0.0);
        assert_eq!(distance_from_score(0.0), 1.0);
        assert_eq!(distance_from_score(-1.0), 2.0);
        assert!((distance_from_score(0.877) - 0.123).abs() < 1e-6);
        assert!(
            (1.0 - distance_from_score(0.25) - 0.25).abs() < 1e-7,
            "similarity = 1 - distance"
        );
    }
}
