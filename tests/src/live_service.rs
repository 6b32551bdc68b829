//! Gating tests that need a running server (Qdrant, PostgreSQL, …) on its address at run
//! time: without it a test says SKIPPED and why, and where skips are not allowed (CI) it fails.

/// The variable that turns a skip into a failure: set to `1` where every service is expected.
pub const REQUIRE_VAR: &str = "MEMPALACE_REQUIRE_LIVE_SERVICES";

/// The address of the service in `var` (e.g. `QDRANT_URL`) for the test `test`, or `None`
/// after printing `SKIPPED` with the reason when it is unset or empty.
///
/// # Panics
/// When the service is missing and [`REQUIRE_VAR`] is `1`: there a skip is a failure.
pub fn service_address(var: &str, test: &str) -> Option<String> {
    if let Some(address) = std::env::var(var).ok().filter(|v| !v.trim().is_empty()) {
        return Some(address);
    }
    let reason = format!("SKIPPED {test}: {var} is not set, so there is no server to test against");
    if skips_fail() {
        panic!("{reason}; {REQUIRE_VAR}=1 makes a skipped test a failure");
    }
    eprintln!("{reason}");
    None
}

/// Whether skipped live tests fail this run ([`REQUIRE_VAR`] is `1`).
pub fn skips_fail() -> bool {
    std::env::var(REQUIRE_VAR).is_ok_and(|v| v.trim() == "1")
}

/// The PostgreSQL URL (`MEMPALACE_TEST_POSTGRES_URL`, set by `scripts/postgres/start.sh`) for
/// `test`, or `None` after reporting the skip.
pub fn postgres_url(test: &str) -> Option<String> {
    service_address("MEMPALACE_TEST_POSTGRES_URL", test)
}

/// The Qdrant URL (`QDRANT_URL`) for `test`, or `None` after reporting the skip.
pub fn qdrant_url(test: &str) -> Option<String> {
    service_address("QDRANT_URL", test)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The environment is process-wide: one test touches it, in sequence.
    #[test]
    fn set_address_is_returned_and_a_missing_one_skips_or_fails() {
        let var = "MEMPALACE_TEST_LIVE_SERVICE_ADDRESS";
        // SAFETY: no other test of this crate reads or writes these variables.
        unsafe {
            std::env::set_var(var, "http://127.0.0.1:1");
            std::env::remove_var(REQUIRE_VAR);
        }
        assert_eq!(
            service_address(var, "t").as_deref(),
            Some("http://127.0.0.1:1")
        );
        unsafe { std::env::set_var(var, " ") };
        assert_eq!(service_address(var, "t"), None);
        unsafe { std::env::set_var(REQUIRE_VAR, "1") };
        let failed = std::panic::catch_unwind(|| service_address(var, "t"));
        unsafe {
            std::env::remove_var(REQUIRE_VAR);
            std::env::remove_var(var);
        }
        let message = *failed.unwrap_err().downcast::<String>().unwrap();
        assert!(
            message.starts_with("SKIPPED t: MEMPALACE_TEST_LIVE_SERVICE_ADDRESS"),
            "{message}"
        );
    }
}
