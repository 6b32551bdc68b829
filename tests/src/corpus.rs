//! Seeded test data: drawers spread over wings and rooms with random unit vectors.

use mempalace_core::{AddedBy, Drawer, DrawerMetadata};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The wings of the seeded corpus.
pub const WINGS: [&str; 3] = ["wing_code", "wing_people", "项目"];
/// The rooms of the seeded corpus (each wing has all of them).
pub const ROOMS: [&str; 4] = ["auth", "billing", "diary", "🚀 launch"];

/// A random unit vector of `dimension` from `rng`.
pub fn unit_vector(rng: &mut StdRng, dimension: usize) -> Vec<f32> {
    loop {
        let v: Vec<f32> = (0..dimension)
            .map(|_| rng.random_range(-1.0f32..1.0))
            .collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 1e-3 {
            return v.into_iter().map(|x| x / norm).collect();
        }
    }
}

/// `n` random unit vectors from a fixed seed.
pub fn unit_vectors(seed: u64, n: usize, dimension: usize) -> Vec<Vec<f32>> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| unit_vector(&mut rng, dimension)).collect()
}

/// A drawer with the given id, wing and room and otherwise plain metadata.
pub fn drawer(id: &str, wing: &str, room: &str, text: &str) -> Drawer {
    Drawer {
        id: id.to_string(),
        text: text.to_string(),
        metadata: DrawerMetadata {
            wing: wing.to_string(),
            room: room.to_string(),
            source_file: format!("/src/{wing}/{room}/notes.md"),
            chunk_index: 0,
            added_by: AddedBy::Mine,
            filed_at: "2026-01-02T03:04:05.000006".to_string(),
            authored_at: None,
            conversation: None,
            entities: Vec::new(),
        },
    }
}

/// `n` drawers cycling over [`WINGS`] × [`ROOMS`], ids `d00000`…, with seeded vectors.
pub fn seeded(seed: u64, n: usize, dimension: usize) -> (Vec<Drawer>, Vec<Vec<f32>>) {
    let drawers = (0..n)
        .map(|i| {
            let wing = WINGS[i % WINGS.len()];
            let room = ROOMS[(i / WINGS.len()) % ROOMS.len()];
            let mut d = drawer(
                &format!("d{i:05}"),
                wing,
                room,
                &format!("drawer number {i} in {wing}/{room}"),
            );
            d.metadata.chunk_index = i as u32;
            if i % 2 == 0 {
                d.metadata.entities = vec![format!("Name{}", i % 7), "src/ü.rs".to_string()];
            }
            d
        })
        .collect();
    (drawers, unit_vectors(seed, n, dimension))
}
