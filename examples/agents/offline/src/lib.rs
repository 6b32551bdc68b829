//! What the offline example agents share: an embedder that needs no model.

use mempalace::prelude::*;

/// A deterministic stand-in for a real embedding model: each word (lower-cased, without
/// punctuation) adds to a few dimensions picked by its hash, and the vector is normalised.
/// Texts that share words are near; no model files, no network. Use a real embedder (the
/// `minilm` feature) for meaning.
pub struct WordHashEmbedder {
    dimension: usize,
}

impl WordHashEmbedder {
    /// An embedder of `dimension` dimensions.
    pub fn new(dimension: usize) -> Self {
        WordHashEmbedder { dimension }
    }

    fn vector(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dimension];
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
            for b in word.to_lowercase().bytes() {
                hash = (hash ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
            }
            for k in 0..3 {
                let i = ((hash >> (k * 16)) as usize) % self.dimension;
                v[i] += if (hash >> (48 + k)) & 1 == 0 {
                    1.0
                } else {
                    -1.0
                };
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        } else {
            v[0] = 1.0;
        }
        v
    }
}

#[mempalace::async_trait]
impl Embedder for WordHashEmbedder {
    fn model_name(&self) -> &str {
        "word-hash"
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    async fn embed(&self, texts: &[String]) -> mempalace::core::Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.vector(t)).collect())
    }
}
