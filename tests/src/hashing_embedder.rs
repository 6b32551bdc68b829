//! `HashingEmbedder`: a deterministic embedder for tests (feature hashing of words).

use async_trait::async_trait;
use mempalace_core::{Embedder, Result};

/// Embeds text by hashing its lower-cased words (and, for scripts without spaces, its single
/// characters) into a fixed number of signed buckets, then normalising. Texts that share words
/// are close; identical texts are identical. For tests only: it knows no meaning.
pub struct HashingEmbedder {
    dimension: usize,
}

impl HashingEmbedder {
    /// An embedder of `dimension` buckets.
    pub fn new(dimension: usize) -> Self {
        HashingEmbedder { dimension }
    }

    /// Embeds one text synchronously.
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dimension];
        let lower = text.to_lowercase();
        let mut add = |token: &str| {
            let h = fnv1a(token.as_bytes());
            let index = (h % self.dimension as u64) as usize;
            let sign = if (h >> 63) & 1 == 0 { 1.0 } else { -1.0 };
            v[index] += sign;
        };
        for word in lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            if word.is_ascii() {
                add(word);
            } else {
                let mut buf = [0u8; 4];
                for c in word.chars() {
                    add(c.encode_utf8(&mut buf));
                }
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        }
        v
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    })
}

#[async_trait]
impl Embedder for HashingEmbedder {
    fn model_name(&self) -> &str {
        "test-hashing"
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
}
