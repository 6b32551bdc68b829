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
        // In one batch, and one by one: both must match.
        let batched = m.embed(&texts).await.unwrap();
        for (r, v) in refs.iter().zip(&batched) {
            assert_eq!(v.len(), 384);
            let c = cosine(v, &r.vector);
            lowest = lowest.min(c);
            assert!(
                c >= 0.9999,
                "{} {precision:?}: cosine {c} for {:?}",
                kernel.name(),
                r.text
            );
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
            let c = cosine(&v, &r.vector);
            lowest = lowest.min(c);
            assert!(
                c >= 0.9999,
                "{} {precision:?}: unbatched {c} {:?}",
                kernel.name(),
                r.text
            );
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
        cfg!(target_arch = "x86_64")
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl"),
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
