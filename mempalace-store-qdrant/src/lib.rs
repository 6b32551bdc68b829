//! mempalace-store-qdrant
