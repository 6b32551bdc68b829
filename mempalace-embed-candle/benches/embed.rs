//! Embedding speed of all-MiniLM-L6-v2 on this machine, printed as a table: sentences per
//! second for short (~12 words) and paragraph (~120 words) texts at batch sizes 1, 16 and 64,
//! one text per call (p50 and p95 ms: what a search or an add_drawer waits for, with a
//! note-sized text of ~28 words too; with the caches warm and cold), each with the weights in
//! f32 and in half precision, also through the async `Embedder::embed` the server calls, plus
//! model load time and resident memory, and a sweep of text lengths with half-precision
//! weights on every kernel: where the crate's few-rows kernel stops beating BLAS
//! (`few_rows_limit` in `src/matmul.rs`), and texts of mixed lengths in calls of 64 as
//! `mine` embeds them (alone: `-- --mining-only`).
//! Run: `cargo bench --workspace --profile dev --bench embed`.

use std::time::Instant;

use mempalace_embed_candle::{MatmulKernel, MiniLmEmbedder, WeightPrecision};

/// Every kernel with each weight precision.
fn setups() -> Vec<(MatmulKernel, WeightPrecision)> {
    MatmulKernel::available()
        .into_iter()
        .flat_map(|k| [WeightPrecision::Single, WeightPrecision::Half].map(|p| (k, p)))
        .collect()
}

fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .map(|l| l.to_string())
        })
        .and_then(|l| {
            l.split_whitespace()
                .nth(1)
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Text number `i` of `words` words from a small vocabulary (texts differ by `i`).
fn text(i: usize, words: usize) -> String {
    const VOCAB: &[&str] = &[
        "memory",
        "palace",
        "agent",
        "drawer",
        "search",
        "meaning",
        "project",
        "decision",
        "webhook",
        "billing",
        "authentication",
        "moved",
        "because",
        "pricing",
        "team",
        "weekly",
        "release",
        "notes",
        "database",
        "migration",
    ];
    (0..words)
        .map(|w| VOCAB[(i * 7 + w * 3 + w * w) % VOCAB.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

/// `n` texts of `words` words each.
fn texts(words: usize, n: usize) -> Vec<String> {
    (0..n).map(|i| text(i, words)).collect()
}

/// One short text per call through `Embedder::embed` on a two-worker tokio runtime, as the
/// server calls it: the hand-off to the embedding threads and back included.
fn async_calls(model: &MiniLmEmbedder) {
    use mempalace_core::Embedder;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let input = texts(12, 64);
    let mut times = Vec::new();
    runtime.block_on(async {
        for text in input.iter().cycle().take(3 * input.len()) {
            let t = Instant::now();
            let out = model.embed(std::slice::from_ref(text)).await.unwrap();
            times.push(t.elapsed().as_secs_f64() * 1e3);
            assert_eq!(out.len(), 1);
        }
    });
    times.sort_by(f64::total_cmp);
    println!();
    println!("| one text per call, async | p50 ms | p95 ms |\n| --- | --- | --- |");
    println!(
        "| short (~12 words), `Embedder::embed` | {:.2} | {:.2} |",
        times[times.len() / 2],
        times[times.len() * 95 / 100]
    );
}

/// Each text of `input` embedded alone, in ms, sorted; with `evict`, 256 MiB of other memory
/// is written before each call so that the weights are no longer in the caches.
fn one_text_per_call_ms(
    model: &MiniLmEmbedder,
    input: &[String],
    mut evict: Option<&mut [u8]>,
) -> Vec<f64> {
    let mut times: Vec<f64> = input
        .iter()
        .map(|text| {
            if let Some(other) = evict.as_deref_mut() {
                other
                    .iter_mut()
                    .step_by(64)
                    .for_each(|b| *b = b.wrapping_add(1));
            }
            let t = Instant::now();
            let out = model.embed_blocking(std::slice::from_ref(text)).unwrap();
            assert_eq!(out.len(), 1);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times
}

/// One text per call at lengths around the rows up to which each kernel multiplies on the
/// crate's few-rows kernel (p50 ms, caches warm and cold): with OpenBLAS, texts past the limit
/// go to BLAS, so below it both kernels should match and above it OpenBLAS should be faster.
fn length_sweep(model: &MiniLmEmbedder, other: &mut [u8]) {
    let kernels = MatmulKernel::available();
    println!();
    print!("| tokens (words + 2) |");
    for kernel in &kernels {
        print!(" {} warm | {} cold |", kernel.name(), kernel.name());
    }
    println!("\n|{}", " --- |".repeat(1 + 2 * kernels.len()));
    for words in [24usize, 36, 48, 54, 60, 64, 72, 96] {
        let input = texts(words, 64);
        print!("| {} |", words + 2);
        for kernel in &kernels {
            let m = model
                .clone()
                .with_matmul_kernel(*kernel)
                .with_weight_precision(WeightPrecision::Half);
            for cold in [false, true] {
                let times = one_text_per_call_ms(&m, &input, cold.then_some(&mut *other));
                print!(" {:.2} |", times[times.len() / 2]);
            }
        }
        println!();
    }
}

/// Texts of mixed lengths in calls of 64, as `mine` hands its chunks over: 15 to 200 words
/// (about 20 to 256 tokens) spread through each call, texts per second on every kernel with
/// f32 weights (the products of a mining call are too big for the half-precision path).
fn mining_calls(model: &MiniLmEmbedder) {
    let words: Vec<usize> = (0..512).map(|i| 15 + (i * 97) % 186).collect();
    let input: Vec<String> = words.iter().enumerate().map(|(i, &w)| text(i, w)).collect();
    println!();
    println!(
        "| matrix kernel | mixed lengths (15-200 words), calls of 64 | texts/s |\n| --- | --- | --- |"
    );
    for kernel in MatmulKernel::available() {
        let m = model
            .clone()
            .with_matmul_kernel(kernel)
            .with_weight_precision(WeightPrecision::Single);
        let _ = m.embed_blocking(&input[..64]).unwrap();
        let t = Instant::now();
        for call in input.chunks(64) {
            assert_eq!(m.embed_blocking(call).unwrap().len(), call.len());
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "| {} | {} texts | {:.1} |",
            kernel.name(),
            input.len(),
            input.len() as f64 / secs
        );
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    // As the CLI does first: OpenBLAS on this CPU's best kernels.
    #[cfg(feature = "openblas")]
    // SAFETY: no other thread has started yet.
    println!("OpenBLAS core: {:?}", unsafe {
        mempalace_embed_candle::openblas_core::select_best_core()
    });
    if std::env::args().any(|a| a == "--mining-only") {
        let model = MiniLmEmbedder::load_resolved(None).expect("run scripts/fetch-model.sh first");
        return mining_calls(&model);
    }
    let before = rss_mib();
    let t = Instant::now();
    let model = MiniLmEmbedder::load_resolved(None).expect("run scripts/fetch-model.sh first");
    let load = t.elapsed();
    let _ = model.embed_blocking(&texts(12, 4)).unwrap();
    println!("| measure | value |\n| --- | --- |");
    println!("| model load | {:.0} ms |", load.as_secs_f64() * 1e3);
    println!(
        "| resident memory after load + warm-up | {:.0} MiB (+{:.0} MiB) |",
        rss_mib(),
        rss_mib() - before
    );
    println!();
    println!(
        "| matrix kernel | weights | one text per call | p50 ms | p95 ms |\n| --- | --- | --- | --- | --- |"
    );
    // Between a server's calls other work (the store's queries) pushes the weights out of
    // the caches; "cold" runs each call after reading 256 MiB of other memory.
    let mut other = vec![0u8; 256 << 20];
    for (kernel, precision) in setups() {
        let m = model
            .clone()
            .with_matmul_kernel(kernel)
            .with_weight_precision(precision);
        for (label, words, cold) in [
            ("short (~12 words)", 12usize, false),
            ("short (~12 words), cold caches", 12, true),
            // An add_drawer note of 30-40 tokens.
            ("note (~28 words)", 28, false),
            ("note (~28 words), cold caches", 28, true),
            ("paragraph (~120 words)", 120, false),
            ("paragraph (~120 words), cold caches", 120, true),
        ] {
            let input = texts(words, 64);
            let times = one_text_per_call_ms(&m, &input, cold.then_some(&mut other[..]));
            println!(
                "| {} | {precision:?} | {label} | {:.2} | {:.2} |",
                kernel.name(),
                times[times.len() / 2],
                times[times.len() * 95 / 100]
            );
        }
    }
    length_sweep(&model, &mut other);
    mining_calls(&model);
    std::hint::black_box(&other);
    async_calls(&model);
    println!();
    println!(
        "| matrix kernel | weights | texts | batch size | sentences/s |\n| --- | --- | --- | --- | --- |"
    );
    for (kernel, precision) in setups() {
        for (label, words, n) in [
            ("short (~12 words)", 12usize, 256usize),
            ("paragraph (~120 words)", 120, 128),
        ] {
            let input = texts(words, n);
            for batch in [1usize, 16, 64] {
                let m = model
                    .clone()
                    .with_matmul_kernel(kernel)
                    .with_weight_precision(precision)
                    .with_batch_size(batch);
                let _ = m.embed_blocking(&input[..4]).unwrap();
                let t = Instant::now();
                let out = m.embed_blocking(&input).unwrap();
                let secs = t.elapsed().as_secs_f64();
                assert_eq!(out.len(), n);
                println!(
                    "| {} | {precision:?} | {label} | {batch} | {:.1} |",
                    kernel.name(),
                    n as f64 / secs
                );
            }
        }
    }
}
