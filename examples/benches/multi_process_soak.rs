//! Soak of one palace shared by many `mempalace mcp` processes: each files the same shared
//! facts and as many of its own, 8 calls in flight per process; prints what landed and how fast.
//! Run: `cargo bench --workspace --profile dev --bench multi_process_soak`
//! (MEMPALACE_SOAK_SERVERS, default 8, and MEMPALACE_SOAK_FACTS, default 200, set the size).

#[path = "../tests/support/palace_processes.rs"]
mod palace_processes;

use std::time::Instant;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let servers = env_usize("MEMPALACE_SOAK_SERVERS", 8);
    let facts = env_usize("MEMPALACE_SOAK_FACTS", 200);
    let in_flight = 8;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let started = Instant::now();
    let outcome = rt.block_on(palace_processes::file_from_many_servers(
        &dir.path().join("palace"),
        &[],
        servers,
        facts,
        in_flight,
    ));
    let wall = started.elapsed().as_secs_f64();
    let expected = (facts + servers * facts) as u64;
    let duplicated: u32 = outcome
        .shared_filed
        .iter()
        .map(|&n| n.saturating_sub(1))
        .sum();
    let lost = outcome.shared_filed.iter().filter(|&&n| n == 0).count() + outcome.own_missing;
    println!("| measure | value |");
    println!("| --- | --- |");
    println!("| processes × calls in flight | {servers} × {in_flight} |");
    println!("| add_drawer calls | {} |", outcome.calls);
    println!(
        "| wall time | {wall:.1} s ({:.0} calls/s) |",
        outcome.calls as f64 / wall
    );
    println!("| failed calls | {} |", outcome.failed.len());
    println!("| shared facts duplicated | {duplicated} |");
    println!("| facts lost | {lost} |");
    println!(
        "| drawers seen by each server | {:?} (expected {expected}) |",
        outcome.totals_seen
    );
    for f in outcome.failed.iter().take(5) {
        println!("failed: {f}");
    }
}
