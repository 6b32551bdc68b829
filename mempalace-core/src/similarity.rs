//! Cosine distance and the similarity figure shown to users.

/// Cosine distance `1 - cos(a, b)` (0 for identical direction, 2 for opposite); a zero vector
/// is at distance 1 from everything.
pub fn cosine_distance(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 1.0;
    }
    (1.0 - dot / (na.sqrt() * nb.sqrt())) as f32
}

/// The similarity MemPalace reports: `round(max(0, 1 - distance), 3)` (opposite vectors are
/// 0, never negative; a NaN distance counts as 0 too).
pub fn similarity_from_distance(distance: f32) -> f64 {
    let sim = (1.0 - f64::from(distance)).max(0.0);
    (sim * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_and_similarity() {
        assert!(cosine_distance(&[1.0, 0.0], &[2.0, 0.0]).abs() < 1e-6);
        assert!((cosine_distance(&[1.0, 0.0], &[0.0, 1.0]) - 1.0).abs() < 1e-6);
        assert!((cosine_distance(&[1.0, 0.0], &[-1.0, 0.0]) - 2.0).abs() < 1e-6);
        assert_eq!(cosine_distance(&[0.0, 0.0], &[1.0, 0.0]), 1.0);
        assert_eq!(similarity_from_distance(0.12345), 0.877);
        assert_eq!(similarity_from_distance(0.0), 1.0);
        assert_eq!(similarity_from_distance(1.5), 0.0);
        assert_eq!(similarity_from_distance(2.0), 0.0);
        assert_eq!(similarity_from_distance(f32::NAN), 0.0);
    }
}
