//! mempalace-store-lance
