//! `BearerToken`: the shared secret HTTP clients present, read from a file or the environment
//! (never from the command line, which every user of the machine can read), and compared in
//! constant time.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The environment variable holding the token itself (3.11's name).
pub const TOKEN_ENV: &str = "MEMPALACE_MCP_HTTP_TOKEN";
/// The environment variable naming a file that holds the token.
pub const TOKEN_FILE_ENV: &str = "MEMPALACE_MCP_HTTP_TOKEN_FILE";
/// Fewest characters a token may have: shorter secrets can be guessed over the network.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Why no usable token could be read.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The token file could not be read.
    #[error("cannot read the token file {path}: {source}")]
    Unreadable {
        /// The file named.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The token is shorter than [`MIN_TOKEN_CHARS`] (or empty).
    #[error(
        "the bearer token from {origin} has {chars} characters; at least {MIN_TOKEN_CHARS} are required"
    )]
    TooShort {
        /// Where the token came from.
        origin: String,
        /// How long it was.
        chars: usize,
    },
}

/// A bearer token, kept only as its SHA-256 digest.
#[derive(Clone)]
pub struct BearerToken {
    digest: [u8; 32],
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(<secret>)")
    }
}

impl BearerToken {
    /// A token from its text (surrounding whitespace ignored); `origin` names where it came
    /// from in errors.
    pub fn new(secret: &str, origin: &str) -> Result<Self, TokenError> {
        let secret = secret.trim();
        let chars = secret.chars().count();
        if chars < MIN_TOKEN_CHARS {
            return Err(TokenError::TooShort {
                origin: origin.to_string(),
                chars,
            });
        }
        Ok(BearerToken {
            digest: Sha256::digest(secret.as_bytes()).into(),
        })
    }

    /// The token held in `path` (its first line's text; a trailing newline is ignored).
    pub fn from_file(path: &Path) -> Result<Self, TokenError> {
        let text = std::fs::read_to_string(path).map_err(|source| TokenError::Unreadable {
            path: path.to_path_buf(),
            source,
        })?;
        mempalace_core::secret_file::warn_if_others_can_read(path);
        Self::new(&text, &path.display().to_string())
    }

    /// The token the operator configured: `file` if given, else the file named by
    /// `MEMPALACE_MCP_HTTP_TOKEN_FILE`, else `MEMPALACE_MCP_HTTP_TOKEN`; `None` when none is set.
    pub fn configured(file: Option<&Path>) -> Result<Option<Self>, TokenError> {
        if let Some(file) = file {
            return Self::from_file(file).map(Some);
        }
        if let Some(file) = std::env::var_os(TOKEN_FILE_ENV).filter(|f| !f.is_empty()) {
            return Self::from_file(Path::new(&file)).map(Some);
        }
        match std::env::var(TOKEN_ENV) {
            Ok(secret) if !secret.trim().is_empty() => Self::new(&secret, TOKEN_ENV).map(Some),
            _ => Ok(None),
        }
    }

    /// Whether an `Authorization` header carries this token (`Bearer <token>`), compared in
    /// constant time.
    pub fn admits(&self, authorization: Option<&HeaderValue>) -> bool {
        let Some(value) = authorization.and_then(|v| v.to_str().ok()) else {
            return false;
        };
        let Some((scheme, presented)) = value.split_once(' ') else {
            return false;
        };
        if !scheme.eq_ignore_ascii_case("bearer") {
            return false;
        }
        let presented: [u8; 32] = Sha256::digest(presented.trim().as_bytes()).into();
        presented.ct_eq(&self.digest).into()
    }
}

/// Axum middleware: a request without the token gets 401 and nothing else.
pub async fn require_bearer(
    State(token): State<Arc<BearerToken>>,
    request: Request,
    next: Next,
) -> Response {
    if token.admits(request.headers().get(header::AUTHORIZATION)) {
        next.run(request).await
    } else {
        (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "correct-horse-battery-staple";

    #[test]
    fn admits_only_its_own_token_with_the_bearer_scheme() {
        let token = BearerToken::new(SECRET, "test").unwrap();
        let header = |v: &str| HeaderValue::from_str(v).unwrap();
        assert!(token.admits(Some(&header(&format!("Bearer {SECRET}")))));
        assert!(token.admits(Some(&header(&format!("bearer {SECRET}")))));
        assert!(!token.admits(Some(&header(&format!("Bearer {SECRET}x")))));
        assert!(!token.admits(Some(&header(&format!("Basic {SECRET}")))));
        assert!(!token.admits(Some(&header(SECRET))));
        assert!(!token.admits(Some(&header("Bearer "))));
        assert!(!token.admits(None));
    }

    #[test]
    fn short_tokens_are_refused() {
        let err = BearerToken::new("  hunter2 \n", "MEMPALACE_MCP_HTTP_TOKEN").unwrap_err();
        assert!(err.to_string().contains("7 characters"), "{err}");
        assert!(BearerToken::new("", "x").is_err());
    }

    #[test]
    fn a_token_file_is_read_without_its_newline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, format!("{SECRET}\n")).unwrap();
        let token = BearerToken::from_file(&path).unwrap();
        let header = HeaderValue::from_str(&format!("Bearer {SECRET}")).unwrap();
        assert!(token.admits(Some(&header)));
        let missing = BearerToken::from_file(&dir.path().join("absent")).unwrap_err();
        assert!(missing.to_string().contains("absent"), "{missing}");
    }
}
