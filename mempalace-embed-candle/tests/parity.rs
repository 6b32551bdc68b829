//! Parity with sentence-transformers: token ids exactly, vectors to cosine ≥ 0.9999, on the
//! reference file in `tests/data/embedding-parity` (English, Chinese, Japanese, emoji, AAAK,
//! code, one letter, surrounding spaces, and a text truncated at 256 tokens).

use std::path::PathBuf;

use mempalace_core::Embedder;
use mempalace_embed_candle::{MAX_SEQ_LENGTH, MatmulKernel, MiniLmEmbedder, WeightPrecision};
use serde::Deserialize;

#[derive(Deserialize)]
struct Reference {
    text: String,
    token_ids: Vec<u32>,
    vector: Vec<f32>,
}

fn references() -> Vec<Reference> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/embedding-parity/vectors.jsonl");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {} ({e})", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn model() -> MiniLmEmbedder {
    MiniLmEmbedder::load_resolved(None).unwrap_or_else(|e| panic!("{e}"))
}

/// Whether this CPU runs the kernel that reads the half-precision copy (AVX-512 f, bw, vl).
fn half_precision_kernel_runs_here() -> bool {
    cfg!(target_arch = "x86_64")
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vl")
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb)
}

#[test]
fn token_ids_match_exactly() {
    let refs = references();
    assert!(refs.len() >= 20);
    let m = model();
    let texts: Vec<String> = refs.iter().map(|r| r.text.clone()).collect();
    let ids = m.token_ids(&texts).unwrap();
    for (r, got) in refs.iter().zip(&ids) {
        assert_eq!(got, &r.token_ids, "token ids of {:?}", r.text);
    }
    assert!(
        ids.iter().any(|i| i.len() == MAX_SEQ_LENGTH),
        "the long text is truncated at 256"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_match_sentence_transformers() {
    let refs = references();
    let texts: Vec<String> = refs.iter().map(|r| r.text.clone()).collect();
    let precisions = [WeightPrecision::Single, WeightPrecision::Half];
    for (kernel, precision) in MatmulKernel::available()
        .into_iter()
        .flat_map(|k| precisions.map(|p| (k, p)))
    {
        let m = model()
            .with_matmul_kernel(kernel)
            .with_weight_precision(precision);
        let mut lowest = 1.0f64;
        let mut check = |v: &[f32], r: &Reference, how: &str| {
            let c = cosine(v, &r.vector);
            lowest = lowest.min(c);
            assert!(
                c >= 0.9999,
                "{} {precision:?} {how}: cosine {c} for {:?}",
                kernel.name(),
                r.text
            );
        };
        // In one batch, and one by one: both must match.
        let batched = m.embed(&texts).await.unwrap();
        for (r, v) in refs.iter().zip(&batched) {
            assert_eq!(v.len(), 384);
            check(v, r, "batched");
            let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-4);
        }
        // One text per call: each product is split across the cores.
        let single = m.clone().with_batch_size(1);
        for r in &refs {
            let v = single
                .embed(std::slice::from_ref(&r.text))
                .await
                .unwrap()
                .remove(0);
            check(&v, r, "unbatched");
        }
        eprintln!(
            "{} {precision:?}: lowest cosine to sentence-transformers {lowest:.7}",
            kernel.name()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_text_reads_the_half_precision_copy_only_when_asked_to() {
    let refs = references();
    let single = model().with_weight_precision(WeightPrecision::Single);
    single.embed(&[refs[0].text.clone()]).await.unwrap();
    assert!(!single.has_half_copy(), "f32 was asked for");
    let half = model();
    assert_eq!(half.weight_precision(), WeightPrecision::Half);
    assert!(!half.has_half_copy(), "made on first use, not at load");
    let v = half.embed(&[refs[0].text.clone()]).await.unwrap();
    assert_eq!(
        half.has_half_copy(),
        half_precision_kernel_runs_here(),
        "the kernel that reads it runs on AVX-512 CPUs"
    );
    assert!(cosine(&v[0], &refs[0].vector) >= 0.9999);
    // The f32 weights stay mapped for the products of many rows.
    assert!(half.weights_in_place());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_many_passes_matches_the_references() {
    // Twelve copies of the references (with the 256-token text in each) in batches of 64:
    // several thousand tokens, and the batch holding the twelve long texts alone has over
    // 3,000, so it is split into several encoder passes (at most 2,048 tokens each).
    let refs = references();
    let texts: Vec<String> = (0..12)
        .flat_map(|_| refs.iter().map(|r| r.text.clone()))
        .collect();
    let m = model().with_batch_size(64);
    let total_tokens: usize = m.token_ids(&texts).unwrap().iter().map(Vec::len).sum();
    assert!(total_tokens > 3 * 2048, "only {total_tokens} tokens");
    let vectors = m.embed(&texts).await.unwrap();
    for (i, v) in vectors.iter().enumerate() {
        let r = &refs[i % refs.len()];
        let c = cosine(v, &r.vector);
        assert!(c >= 0.9999, "text {i}: cosine {c} for {:?}", r.text);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_and_cancelled_calls_leave_every_caller_its_own_vectors() {
    let refs = std::sync::Arc::new(references());
    let m = model().with_batch_size(1);
    // A call given up before its vectors arrive (its task aborted) must not hold up or
    // mix up the calls after it.
    let abandoned = {
        let m = m.clone();
        let text = refs[0].text.clone();
        tokio::spawn(async move { m.embed(&[text]).await })
    };
    abandoned.abort();
    // Many tasks at once, each with its own text, each on the shared embedding threads.
    let tasks: Vec<_> = (0..3 * refs.len())
        .map(|i| {
            let (m, refs) = (m.clone(), std::sync::Arc::clone(&refs));
            tokio::spawn(async move {
                let r = &refs[i % refs.len()];
                let v = m.embed(std::slice::from_ref(&r.text)).await.unwrap();
                (i, cosine(&v[0], &r.vector))
            })
        })
        .collect();
    for task in tasks {
        let (i, c) = task.await.unwrap();
        assert!(c >= 0.9999, "call {i}: cosine {c}");
    }
}

#[test]
fn the_weights_are_read_in_place_from_the_mapped_file() {
    assert!(model().weights_in_place());
}

#[tokio::test]
async fn paraphrases_score_above_unrelated_pairs() {
    let m = model();
    let texts: Vec<String> = [
        "We picked Clerk for login because Auth0 became too expensive.",
        "Auth0's pricing pushed us to switch our authentication to Clerk.",
        "The recipe needs two cups of flour and a pinch of salt.",
        "我们为什么选择了 Clerk 来做用户认证？",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let v = m.embed(&texts).await.unwrap();
    let para = cosine(&v[0], &v[1]);
    let unrelated = cosine(&v[0], &v[2]);
    assert!(para > 0.6, "paraphrase similarity {para}");
    assert!(
        para > unrelated + 0.3,
        "paraphrase {para} vs unrelated {unrelated}"
    );
    assert!(m.embed(&[]).await.unwrap().is_empty());
}

/// Byte ranges in the safetensors file of the tensors whose names `wanted` accepts.
#[cfg(target_os = "linux")]
fn tensor_ranges(
    file: &std::path::Path,
    wanted: impl Fn(&str) -> bool,
) -> Vec<std::ops::Range<u64>> {
    use std::io::Read;
    let mut f = std::fs::File::open(file).unwrap();
    let mut len = [0u8; 8];
    f.read_exact(&mut len).unwrap();
    let header_len = u64::from_le_bytes(len);
    let mut header = vec![0u8; header_len as usize];
    f.read_exact(&mut header).unwrap();
    let header: serde_json::Value = serde_json::from_slice(&header).unwrap();
    header
        .as_object()
        .unwrap()
        .iter()
        .filter(|(name, _)| wanted(name))
        .map(|(_, entry)| {
            let at = |i: usize| entry["data_offsets"][i].as_u64().unwrap() + 8 + header_len;
            at(0)..at(1)
        })
        .collect()
}

/// Where the word table lies in the safetensors file: its byte range.
#[cfg(target_os = "linux")]
fn word_table_range(file: &std::path::Path) -> std::ops::Range<u64> {
    let ranges = tensor_ranges(file, |name| {
        name.ends_with("embeddings.word_embeddings.weight")
    });
    assert_eq!(ranges.len(), 1);
    ranges[0].clone()
}

/// The model file, read once in full so that all of it is in the page cache (as after
/// mining): a page the encoder touches then maps its cached neighbours too.
#[cfg(target_os = "linux")]
fn model_file_in_page_cache() -> std::path::PathBuf {
    let dir = mempalace_embed_candle::model_dir::resolve(None);
    let file = std::fs::canonicalize(dir.join("model.safetensors")).unwrap();
    std::hint::black_box(std::fs::read(&file).unwrap());
    file
}

/// The tokenizer's whole lower-case words of more than three letters (one token each), in
/// token-id order: texts of them have exactly one token per word.
#[cfg(target_os = "linux")]
fn whole_vocabulary_words(model_dir: &std::path::Path) -> Vec<String> {
    let tokenizer: serde_json::Value =
        serde_json::from_slice(&std::fs::read(model_dir.join("tokenizer.json")).unwrap()).unwrap();
    let mut words: Vec<(&String, u64)> = tokenizer["model"]["vocab"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(w, _)| w.len() > 3 && w.chars().all(|c| c.is_ascii_lowercase()))
        .map(|(w, id)| (w, id.as_u64().unwrap()))
        .collect();
    words.sort_by_key(|&(_, id)| id);
    words.into_iter().map(|(w, _)| w.clone()).collect()
}

/// Pages of `range` of `file` that each of this process's mappings of it has resident
/// (Linux: `/proc/self/maps` and the present bits of `/proc/self/pagemap`).
#[cfg(target_os = "linux")]
fn resident_pages_per_mapping(file: &std::path::Path, range: std::ops::Range<u64>) -> Vec<usize> {
    use std::io::{Read, Seek, SeekFrom};
    const PAGE: u64 = 4096;
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let mut pagemap = std::fs::File::open("/proc/self/pagemap").unwrap();
    let name = file.to_string_lossy();
    let mut out = Vec::new();
    for line in maps.lines().filter(|l| l.ends_with(name.as_ref())) {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let (start, end) = cols[0].split_once('-').unwrap();
        let start = u64::from_str_radix(start, 16).unwrap();
        let end = u64::from_str_radix(end, 16).unwrap();
        let offset = u64::from_str_radix(cols[2], 16).unwrap();
        let first = (start + range.start.saturating_sub(offset)) / PAGE;
        let last = (start + range.end.saturating_sub(offset))
            .min(end)
            .div_ceil(PAGE);
        let mut entries = vec![0u8; ((last - first) * 8) as usize];
        pagemap.seek(SeekFrom::Start(first * 8)).unwrap();
        pagemap.read_exact(&mut entries).unwrap();
        out.push(
            entries
                .chunks(8)
                .filter(|e| u64::from_le_bytes((*e).try_into().unwrap()) >> 63 == 1)
                .count(),
        );
    }
    out
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_word_table_leaves_the_resident_set_after_each_call() {
    // With the whole file in the page cache, each token's row would map the 64 KiB of the
    // table around it: two thousand different tokens would keep most of its 47 MB resident.
    let file = model_file_in_page_cache();
    let dir = file.parent().unwrap();
    let table = word_table_range(&file);
    let words = whole_vocabulary_words(dir);
    let spread: Vec<&str> = words
        .iter()
        .step_by((words.len() / 2_000).max(1))
        .map(String::as_str)
        .collect();
    assert!(spread.len() >= 1_500, "{} words", spread.len());
    let texts: Vec<String> = spread.chunks(10).map(|c| c.join(" ")).collect();
    let m = model();
    for text in &texts {
        m.embed(std::slice::from_ref(text)).await.unwrap();
    }
    let pages = resident_pages_per_mapping(&file, table.clone());
    let table_pages = (table.end - table.start).div_ceil(4096) as usize;
    // Each embedder maps the file once; other tests in this process (under `cargo test`)
    // have their own mapping.
    assert!(
        pages.iter().any(|&p| p < 64),
        "resident pages of the {table_pages}-page word table, per mapping: {pages:?}"
    );
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_note_of_up_to_54_tokens_leaves_the_f32_dense_layers_unmapped() {
    // A note of up to 54 tokens (56 rows with [CLS] and [SEP]) is multiplied from the
    // half-precision copy on AVX-512 CPUs, whichever kernel takes longer texts: the 41 MiB
    // of f32 dense layers then leave the resident set once the copy is made, and stay out.
    if !half_precision_kernel_runs_here() {
        eprintln!("SKIPPED: the half-precision kernel needs AVX-512 (f, bw, vl)");
        return;
    }
    let file = model_file_in_page_cache();
    let dense = tensor_ranges(&file, |name| {
        name.contains("encoder.layer.") && name.ends_with(".weight") && !name.contains("LayerNorm")
    });
    assert_eq!(
        dense.len(),
        6 * 6,
        "q, k, v, attention output, intermediate, output per layer"
    );
    let total: u64 = dense.iter().map(|r| (r.end - r.start).div_ceil(4096)).sum();
    // 54 single-token words per text.
    let words: Vec<String> = whole_vocabulary_words(file.parent().unwrap())
        .into_iter()
        .take(54 * 8)
        .collect();
    for kernel in MatmulKernel::available() {
        let m = model().with_matmul_kernel(kernel);
        assert_eq!(m.weight_precision(), WeightPrecision::Half);
        for text in words.chunks(54).map(|c| c.join(" ")) {
            m.embed(std::slice::from_ref(&text)).await.unwrap();
        }
        let resident: Vec<usize> = dense
            .iter()
            .map(|r| resident_pages_per_mapping(&file, r.clone()))
            .fold(Vec::new(), |mut sum, per_mapping| {
                sum.resize(sum.len().max(per_mapping.len()), 0);
                sum.iter_mut().zip(&per_mapping).for_each(|(s, p)| *s += p);
                sum
            });
        assert!(
            resident.iter().any(|&p| p < 64),
            "{}: resident pages of the {total} pages of f32 dense layers, per mapping: {resident:?}",
            kernel.name()
        );
    }
}
