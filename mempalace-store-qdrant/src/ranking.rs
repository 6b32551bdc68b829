//! Qdrant scores -> cosine distances, and the result order the `VectorStore` contract wants.

use mempalace_core::Neighbour;

/// Cosine distance from a Qdrant score: with `Distance::Cosine` Qdrant returns the cosine
/// similarity (higher is closer), and MemPalace works in distance `1 - cos`.
pub fn distance_from_score(score: f32) -> f32 {
    1.0 - score
}

/// Sorts by ascending distance, ties broken by ascending drawer id, and keeps `limit`.
pub fn sort_neighbours(neighbours: &mut Vec<Neighbour>, limit: usize) {
    neighbours.sort_by(|a, b| {
        a.distance
            .total_cmp(&b.distance)
            .then_with(|| a.drawer.id.cmp(&b.drawer.id))
    });
    neighbours.truncate(limit);
}

#[cfg(test)]
mod tests {
    use mempalace_core::{AddedBy, Drawer, DrawerMetadata};

    use super::*;

    fn n(id: &str, distance: f32) -> Neighbour {
        Neighbour {
            drawer: Drawer {
                id: id.into(),
                text: String::new(),
                metadata: DrawerMetadata {
                    wing: "w".into(),
                    room: "r".into(),
                    source_file: String::new(),
                    chunk_index: 0,
                    added_by: AddedBy::Mcp,
                    filed_at: String::new(),
                    authored_at: None,
                    conversation: None,
                },
            },
            distance,
        }
    }

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

    #[test]
    fn sorted_by_distance_then_id_and_truncated() {
        let mut v = vec![
            n("c", 0.5),
            n("b", 0.1),
            n("a", 0.5),
            n("d", 0.0),
            n("e", 0.9),
        ];
        sort_neighbours(&mut v, 4);
        let ids: Vec<_> = v.iter().map(|x| x.drawer.id.as_str()).collect();
        assert_eq!(ids, ["d", "b", "a", "c"]);
        sort_neighbours(&mut v, 10);
        assert_eq!(v.len(), 4);
        sort_neighbours(&mut v, 0);
        assert!(v.is_empty());
    }
}
