//! Settings an opened palace takes from the environment when the caller does not set them, as
//! the `mempalace` CLI and MemPalace 3.11 read them.

use std::time::Duration;

use mempalace_core::Fusion;

use crate::error::OpenError;

/// How long `add_drawer` on a shared (Qdrant) store waits before its second duplicate
/// look, in milliseconds (default 300, at least 50; see `Palace::with_cross_host_dedup`).
pub const DEDUP_SETTLE_ENV: &str = "MEMPALACE_DEDUP_SETTLE_MS";

/// MemPalace 3.11's variables for the hybrid weights.
pub const VECTOR_WEIGHT_ENV: &str = "MEMPALACE_HYBRID_VECTOR_WEIGHT";
/// See [`VECTOR_WEIGHT_ENV`].
pub const LEXICAL_WEIGHT_ENV: &str = "MEMPALACE_HYBRID_BM25_WEIGHT";

/// Selects a ranking by name: `default`, or `mempalace-3.11` for [`Fusion::mempalace_3_11`].
pub const RANKING_ENV: &str = "MEMPALACE_RANKING";

/// The settle time in [`DEDUP_SETTLE_ENV`], else the default.
pub fn dedup_settle_from_env() -> Result<Duration, OpenError> {
    match std::env::var(DEDUP_SETTLE_ENV) {
        Err(_) => Ok(mempalace_core::palace::DEFAULT_SETTLE),
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(ms) if (50..=60_000).contains(&ms) => Ok(Duration::from_millis(ms)),
            _ => Err(OpenError::Setting {
                variable: DEDUP_SETTLE_ENV,
                value: v,
                problem: "is not a number of milliseconds from 50 to 60000".into(),
            }),
        },
    }
}

/// The hybrid ranking: [`Fusion::default`] or the one `MEMPALACE_RANKING` names, with the
/// weights set in `MEMPALACE_HYBRID_VECTOR_WEIGHT` / `MEMPALACE_HYBRID_BM25_WEIGHT` (as
/// MemPalace 3.11 reads them; non-negative numbers, not both zero).
pub fn fusion_from_env() -> Result<Fusion, OpenError> {
    let mut fusion = match std::env::var(RANKING_ENV) {
        Err(_) => Fusion::default(),
        Ok(v) => match v.trim() {
            "" | "default" => Fusion::default(),
            "mempalace-3.11" => Fusion::mempalace_3_11(),
            _ => {
                return Err(OpenError::Setting {
                    variable: RANKING_ENV,
                    value: v,
                    problem: "is not a ranking (default or mempalace-3.11)".into(),
                });
            }
        },
    };
    let read = |variable: &'static str| -> Result<Option<f64>, OpenError> {
        match std::env::var(variable) {
            Ok(v) if !v.trim().is_empty() => match v.trim().parse::<f64>() {
                Ok(w) if w.is_finite() && w >= 0.0 => Ok(Some(w)),
                _ => Err(OpenError::Setting {
                    variable,
                    value: v,
                    problem: "must be a non-negative number".into(),
                }),
            },
            _ => Ok(None),
        }
    };
    if let Some(w) = read(VECTOR_WEIGHT_ENV)? {
        fusion.vector_weight = w;
    }
    if let Some(w) = read(LEXICAL_WEIGHT_ENV)? {
        fusion.lexical_weight = w;
    }
    if fusion.vector_weight + fusion.lexical_weight <= 0.0 {
        return Err(OpenError::Setting {
            variable: VECTOR_WEIGHT_ENV,
            value: fusion.vector_weight.to_string(),
            problem: format!("and {LEXICAL_WEIGHT_ENV} must not both be 0"),
        });
    }
    Ok(fusion)
}
