//! The lexical channel on Qdrant: a named sparse vector, `bm25`, per point, made by the
//! server's own BM25 model from the drawer text, with the collection's IDF modifier supplying
//! the inverse document frequencies. Ranking happens in the server, so it scales with the
//! cluster: no host keeps a side index.

use qdrant_client::qdrant::{Document, Modifier, SparseVectorCreationConfigBuilder};

/// Name of the sparse vector holding a drawer's BM25 terms.
pub const SPARSE_VECTOR: &str = "bm25";
/// The server-side model that turns text into BM25 term weights (built into Qdrant, no
/// network): word tokens, lower case, English stop words and stems.
pub const BM25_MODEL: &str = "qdrant/bm25";

/// The text as a document the server turns into BM25 term weights (for points and queries
/// alike: the same model on both sides, so terms always match).
pub fn bm25_document(text: &str) -> Document {
    Document::new(text, BM25_MODEL)
}

/// The sparse vector's configuration: IDF computed by the server over the collection.
pub fn sparse_creation_config() -> SparseVectorCreationConfigBuilder {
    SparseVectorCreationConfigBuilder::new().modifier(Modifier::Idf)
}
