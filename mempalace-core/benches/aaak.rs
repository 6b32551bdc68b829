//! AAAK compressor speed, printed as a table: drawers summarised per second for texts of a
//! few sizes (this repository's README cut into drawer-sized pieces).
//! Run: `cargo bench --workspace --profile release --bench aaak`.

use std::time::Instant;

use mempalace_core::aaak::{AaakMetadata, Dialect, EntityCodes};

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let readme = include_str!("../../README.md");
    let dialect = Dialect::new(&EntityCodes::default());
    let metadata = AaakMetadata {
        wing: Some("wing_docs".into()),
        room: Some("readme".into()),
        date: Some("2026-12-04".into()),
        source_file: Some("/repo/README.md".into()),
    };
    println!("| text size | drawers | drawers/s | µs per drawer |");
    println!("| --- | --- | --- | --- |");
    for size in [200usize, 800, 4000] {
        let chars: Vec<char> = readme.chars().collect();
        let texts: Vec<String> = chars
            .chunks(size)
            .map(|c| c.iter().collect())
            .cycle()
            .take(5_000)
            .collect();
        let started = Instant::now();
        let mut bytes = 0;
        for t in &texts {
            bytes += dialect.compress(t, &metadata).len();
        }
        let secs = started.elapsed().as_secs_f64();
        assert!(bytes > 0);
        println!(
            "| {size} chars | {} | {:.0} | {:.1} |",
            texts.len(),
            texts.len() as f64 / secs,
            secs * 1e6 / texts.len() as f64
        );
    }
}
