//! Connection settings: where the Qdrant server is, how to authenticate and which collection
//! holds the palace.

use std::fmt;
use std::time::Duration;

use mempalace_core::{PalaceError, Result};

/// How to reach the Qdrant server and which collection holds the palace's drawers.
#[derive(Clone, PartialEq, Eq)]
pub struct QdrantOptions {
    /// gRPC URL of the server, e.g. `http://localhost:6334` (`https://` for TLS).
    pub url: String,
    /// API key sent with every request, if the server requires one.
    pub api_key: Option<String>,
    /// The collection that holds the drawers (one palace, one collection).
    pub collection: String,
    /// Dimension of the vectors the collection holds.
    pub dimension: usize,
    /// Timeout for connecting and for each request.
    pub timeout: Duration,
    /// The palace that owns the collection: recorded in the collection's metadata when it is
    /// created (or first claimed), and a collection owned by another palace is refused.
    /// `None` skips the check (a library user managing collections itself).
    pub owner: Option<String>,
}

impl QdrantOptions {
    /// The default gRPC URL of a local Qdrant server.
    pub const DEFAULT_URL: &'static str = "http://localhost:6334";
    /// The default collection name.
    pub const DEFAULT_COLLECTION: &'static str = "mempalace_drawers";
    /// The default connect and request timeout.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

    /// Options for `url` and vectors of `dimension`, collection "mempalace_drawers", timeout 10 s.
    pub fn new(url: impl Into<String>, dimension: usize) -> Self {
        QdrantOptions {
            url: url.into(),
            api_key: None,
            collection: Self::DEFAULT_COLLECTION.to_string(),
            dimension,
            timeout: Self::DEFAULT_TIMEOUT,
            owner: None,
        }
    }

    /// The same options with the owning palace's id.
    pub fn with_owner(mut self, palace_id: impl Into<String>) -> Self {
        self.owner = Some(palace_id.into());
        self
    }

    /// The same options with another collection name.
    pub fn with_collection(mut self, name: &str) -> Self {
        self.collection = name.to_string();
        self
    }

    /// The same options with an API key.
    pub fn with_api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }

    /// The same options with another connect and request timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Checks the options before anything is sent (URL scheme, dimension, collection name).
    pub fn validate(&self) -> Result<()> {
        let url = self.url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://"))
            || url.len() <= "https://".len()
        {
            return Err(PalaceError::invalid(
                "url",
                format!(
                    "Qdrant URL {:?} must start with http:// or https:// (gRPC port, usually 6334)",
                    self.url
                ),
            ));
        }
        if self.dimension == 0 {
            return Err(PalaceError::invalid("dimension", "must be greater than 0"));
        }
        if self.collection.trim().is_empty() {
            return Err(PalaceError::invalid("collection", "must not be empty"));
        }
        if self.collection.len() > 255 || self.collection.contains(['/', '\\', '\0']) {
            return Err(PalaceError::invalid(
                "collection",
                format!(
                    "{:?} is not a valid Qdrant collection name",
                    self.collection
                ),
            ));
        }
        if self.timeout.is_zero() {
            return Err(PalaceError::invalid("timeout", "must be greater than 0"));
        }
        Ok(())
    }
}

impl Default for QdrantOptions {
    /// Local server, default collection, dimension 384 (all-MiniLM-L6-v2).
    fn default() -> Self {
        QdrantOptions::new(Self::DEFAULT_URL, 384)
    }
}

impl fmt::Debug for QdrantOptions {
    /// Prints everything except the API key, which is redacted.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QdrantOptions")
            .field("url", &self.url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("collection", &self.collection)
            .field("dimension", &self.dimension)
            .field("timeout", &self.timeout)
            .field("owner", &self.owner)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_sets_the_documented_defaults() {
        let o = QdrantOptions::new(QdrantOptions::DEFAULT_URL, 384);
        assert_eq!(o.url, "http://localhost:6334");
        assert_eq!(o.collection, "mempalace_drawers");
        assert_eq!(o.timeout, Duration::from_secs(10));
        assert_eq!(o.api_key, None);
        assert_eq!(o.dimension, 384);
        let o = o
            .with_collection("palace_2")
            .with_api_key("k")
            .with_timeout(Duration::from_secs(3));
        assert_eq!(o.collection, "palace_2");
        assert_eq!(o.api_key.as_deref(), Some("k"));
        assert_eq!(o.timeout, Duration::from_secs(3));
        assert!(o.validate().is_ok());
    }

    #[test]
    fn debug_redacts_the_api_key() {
        let o = QdrantOptions::new("https://cloud.example:6334", 8).with_api_key("s3cret");
        let printed = format!("{o:?}");
        assert!(!printed.contains("s3cret"), "{printed}");
        assert!(printed.contains("<redacted>"));
    }

    #[test]
    fn validate_rejects_bad_options() {
        let bad = [
            QdrantOptions::new("localhost:6334", 8),
            QdrantOptions::new("ftp://localhost:6334", 8),
            QdrantOptions::new("http://", 8),
            QdrantOptions::new("http://localhost:6334", 0),
            QdrantOptions::new("http://localhost:6334", 8).with_collection(""),
            QdrantOptions::new("http://localhost:6334", 8).with_collection("a/b"),
            QdrantOptions::new("http://localhost:6334", 8).with_timeout(Duration::ZERO),
        ];
        for o in bad {
            assert!(
                matches!(o.validate(), Err(PalaceError::InvalidInput { .. })),
                "{o:?}"
            );
        }
    }
}
