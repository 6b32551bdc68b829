//! Conversation mining at scale: a generated ChatGPT `conversations.json` of
//! `MEMPALACE_BENCH_EXPORT_MB` (default 100) is
//! 1. read and cut into exchange drawers (streaming: one conversation in memory at a time),
//!    reporting exchanges/s and the process's peak RSS, which must stay far below the
//!    export's size; then
//! 2. a slice of it (`MEMPALACE_BENCH_MINE_CONVERSATIONS`, default 300 conversations) is
//!    mined end to end on the real stack (all-MiniLM-L6-v2 + LanceDB + SQLite): exchanges/s
//!    filed, drawers/s, peak RSS.
//!
//! Run: `cargo bench --workspace --profile dev --bench mine_conversations` (the release
//! profile gives the shipped speed).

use std::io::{BufReader, BufWriter, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use mempalace::PalaceBuilder;
use mempalace::core::Cancellation;
use mempalace::ingest::NoProgress;
use mempalace::ingest::conversation_mine::{ConversationMineOptions, mine_conversations};
use mempalace_core::conversations::conversation_drawers::{
    ConversationFiling, FiledSoFar, conversation_drawers,
};
use mempalace_core::conversations::exchanges::exchange_ranges;
use mempalace_core::conversations::formats::{SourceName, read_conversations};
use serde_json::json;

const WORDS: &[&str] = &[
    "the",
    "migration",
    "failed",
    "because",
    "the",
    "connection",
    "pool",
    "was",
    "exhausted",
    "we",
    "decided",
    "to",
    "use",
    "postgres",
    "with",
    "skip",
    "locked",
    "for",
    "the",
    "queue",
    "deploy",
    "pipeline",
    "retries",
    "webhooks",
    "after",
    "a",
    "timeout",
    "index",
    "on",
    "events",
    "tenant",
    "latency",
    "improved",
    "twice",
    "cache",
    "eviction",
    "policy",
    "redis",
];

fn sentence(seed: usize, words: usize) -> String {
    let mut s: String = (0..words)
        .map(|w| WORDS[(seed * 31 + w * 17 + w * w) % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ");
    s.push('.');
    s
}

/// One ChatGPT conversation of `exchanges` user/assistant pairs, as the export writes it.
fn chatgpt_conversation(i: usize, exchanges: usize) -> serde_json::Value {
    let mut mapping = serde_json::Map::new();
    mapping.insert(
        "root".into(),
        json!({"id": "root", "message": null, "parent": null, "children": ["m0"]}),
    );
    let nodes = exchanges * 2;
    for n in 0..nodes {
        let role = if n % 2 == 0 { "user" } else { "assistant" };
        let text: String = (0..if n % 2 == 0 { 2 } else { 6 + (i + n) % 5 })
            .map(|k| sentence(i * 101 + n * 7 + k, 12 + (k * 5 + n) % 14))
            .collect::<Vec<_>>()
            .join(" ");
        let parent = if n == 0 {
            "root".to_string()
        } else {
            format!("m{}", n - 1)
        };
        let children: Vec<String> = if n + 1 < nodes {
            vec![format!("m{}", n + 1)]
        } else {
            vec![]
        };
        mapping.insert(
            format!("m{n}"),
            json!({
                "id": format!("m{n}"), "parent": parent, "children": children,
                "message": {
                    "id": format!("m{n}"), "author": {"role": role, "name": null, "metadata": {}},
                    "create_time": 1_735_689_600.0 + (i * 3600 + n * 30) as f64,
                    "content": {"content_type": "text", "parts": [text]},
                    "status": "finished_successfully", "metadata": {}, "recipient": "all",
                },
            }),
        );
    }
    json!({
        "id": format!("conv-{i}"), "conversation_id": format!("conv-{i}"),
        "title": format!("Generated conversation {i}"),
        "create_time": 1_735_689_600.0 + (i * 3600) as f64,
        "mapping": mapping, "current_node": format!("m{}", nodes - 1),
        "default_model_slug": "gpt-4o", "moderation_results": [],
    })
}

/// Writes an export of about `megabytes` MB (or `max_conversations`), returning the number of
/// conversations written.
fn write_export(path: &Path, megabytes: u64, max_conversations: usize) -> anyhow::Result<usize> {
    let mut out = BufWriter::new(std::fs::File::create(path)?);
    let target = megabytes.saturating_mul(1_000_000);
    let mut written = 1u64;
    out.write_all(b"[")?;
    let mut i = 0;
    while written < target && i < max_conversations {
        if i > 0 {
            out.write_all(b",")?;
            written += 1;
        }
        let bytes = serde_json::to_vec(&chatgpt_conversation(i, 4 + i % 9))?;
        written += bytes.len() as u64;
        out.write_all(&bytes)?;
        i += 1;
    }
    out.write_all(b"]")?;
    out.flush()?;
    Ok(i)
}

/// The process's peak resident memory so far, in MiB.
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let megabytes = env("MEMPALACE_BENCH_EXPORT_MB", 100);
    let slice = env("MEMPALACE_BENCH_MINE_CONVERSATIONS", 300) as usize;
    let dir = tempfile::tempdir()?;

    // 1. Read + cut the whole export.
    let export = dir.path().join("conversations.json");
    let t = Instant::now();
    let conversations = write_export(&export, megabytes, usize::MAX)?;
    let size = std::fs::metadata(&export)?.len();
    let generated = t.elapsed().as_secs_f64();
    let rss_before = peak_rss_mib();
    let filing = ConversationFiling {
        wing: "bench".into(),
        source_file: export.display().to_string(),
        extract: Default::default(),
    };
    let (mut exchanges, mut drawers) = (0usize, 0usize);
    let t = Instant::now();
    read_conversations(
        BufReader::with_capacity(256 * 1024, std::fs::File::open(&export)?),
        &SourceName::new("bench"),
        &mut |c| {
            exchanges += exchange_ranges(&c.turns, 0).len();
            drawers += conversation_drawers(&c, &filing, &FiledSoFar::default(), "now").len();
        },
    )?;
    let read_secs = t.elapsed().as_secs_f64();
    let rss_read = peak_rss_mib();

    // 2. Mine a slice end to end.
    let slice_dir = dir.path().join("slice");
    std::fs::create_dir_all(&slice_dir)?;
    let sliced = write_export(&slice_dir.join("conversations.json"), u64::MAX, slice)?;
    let embedder = mempalace::minilm(None);
    embedder.warm_up().await?; // model load is not mining time
    let palace = Arc::new(
        PalaceBuilder::new(dir.path().join("palace"))
            .embedder(embedder)
            .open()
            .await?,
    );
    let mine = ConversationMineOptions::new("bench");
    let r = mine_conversations(palace, &slice_dir, mine, &NoProgress, &Cancellation::new()).await?;
    let rss_mine = peak_rss_mib();

    println!("| measure | value |\n| --- | --- |");
    println!(
        "| export | {:.1} MB, {conversations} conversations (generated in {generated:.1} s) |",
        size as f64 / 1e6
    );
    println!(
        "| read + cut (streaming) | {exchanges} exchanges → {drawers} drawers in {read_secs:.2} s: {:.0} exchanges/s, {:.1} MB/s |",
        exchanges as f64 / read_secs,
        size as f64 / 1e6 / read_secs
    );
    println!(
        "| peak RSS while reading | {rss_read:.0} MiB (before: {rss_before:.0} MiB; the export is {:.0} MiB) |",
        size as f64 / 1_048_576.0
    );
    println!(
        "| mined end to end (MiniLM + LanceDB) | {sliced} conversations, {} exchanges, {} drawers in {:.1} s |",
        r.filed.new_exchanges, r.filed.drawers_filed, r.wall_seconds
    );
    println!(
        "| end-to-end rate | {:.1} exchanges/s, {:.1} drawers/s |",
        r.filed.new_exchanges as f64 / r.wall_seconds,
        r.filed.drawers_filed as f64 / r.wall_seconds
    );
    println!("| peak RSS after mining (model loaded) | {rss_mine:.0} MiB |");
    Ok(())
}
