//! `PostgresWriteLock`: the palace write lock of a fleet, an advisory lock on the server that
//! every host of the palace takes, as the lock file serialises the processes of one host.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use mempalace_core::{FileWriteLock, PalaceError, Result, WriteGuard, WriteLock};
use sha2::{Digest, Sha256};
use tokio::sync::{Mutex, OwnedMutexGuard};
use tokio_postgres::Client;
use tokio_postgres::error::SqlState;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::PostgresKnowledgeGraph;
use crate::connection::{config, detail};

/// How a lock session asks the server to notice a silent client (a host cut off or powered
/// off while holding the lock): TCP keepalive probes after 5 s idle, every 2 s, 3 lost probes
/// end the session (and release its lock), as does 10 s of unacknowledged data. The session
/// is also exempt from the server's statement and idle timeouts, which would otherwise end it
/// (and free the lock) while its holder is writing elsewhere. Set through `pg_settings`, so a
/// server too old for one of them skips it instead of refusing the session.
const SESSION_SETTINGS: &str = "SELECT set_config(s.name, s.value, false) \
     FROM (VALUES ('tcp_keepalives_idle', '5'), ('tcp_keepalives_interval', '2'), \
     ('tcp_keepalives_count', '3'), ('tcp_user_timeout', '10000'), ('statement_timeout', '0'), \
     ('idle_session_timeout', '0'), ('idle_in_transaction_session_timeout', '0'), \
     ('application_name', 'mempalace write lock')) AS s(name, value) \
     JOIN pg_settings p ON p.name = s.name";

/// The longest lock wait the server is asked for (its `lock_timeout` caps near 24 days).
const MAX_WAIT: Duration = Duration::from_secs(24 * 3600);

/// How long a release may take before its session is closed instead (which releases too).
const UNLOCK_BOUND: Duration = Duration::from_secs(5);

/// How long past the lock wait a silent server is given before the lock gives up on it.
const SERVER_SILENCE: Duration = Duration::from_secs(5);

/// One connection used only for the lock, and the task driving it.
struct LockSession {
    client: Client,
}

/// The palace write lock across every host of a fleet: a session-level advisory lock
/// (`pg_advisory_lock`) on a key derived from the palace id, taken on a connection of its own.
///
/// - Tasks of one process queue in the process first, so one connection serves them all.
/// - The server grants the lock to waiting hosts in turn; a wait longer than the timeout
///   (default 30 s) is [`PalaceError::PalaceBusy`].
/// - A holder that dies releases the lock with its session: at once when the process is
///   killed (its connection closes), within about 20 s when its host goes silent (the
///   session's TCP keepalives, when the host connects to the server directly rather than
///   through a pooler), so no lock is ever left stale.
/// - The lock lasts as long as its session: a server restart while a write is under way
///   ends it early (the release then logs a warning), and another host may start its write
///   before this one ends.
///
/// The guard releases the lock when dropped (on tokio; the unlock runs as a task, and the
/// next task of this process waits for it).
#[derive(Clone)]
pub struct PostgresWriteLock {
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    key: i64,
    label: Arc<str>,
    timeout: Duration,
    session: Arc<Mutex<Option<LockSession>>>,
}

/// The advisory-lock key of a palace id: the first 8 bytes of SHA-256 of a tagged id, so
/// palaces sharing a server never share a lock.
fn lock_key(palace_id: &str) -> i64 {
    let digest = Sha256::digest(format!("mempalace-write-lock:{palace_id}").as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(bytes)
}

impl PostgresWriteLock {
    /// The write lock of the palace `palace_id`, on the server of `graph` (with its TLS).
    pub fn new(graph: &PostgresKnowledgeGraph, palace_id: &str) -> Result<Self> {
        Ok(PostgresWriteLock {
            config: config(&graph.db.url)?,
            tls: graph.db.tls.connector()?,
            key: lock_key(palace_id),
            label: Arc::from(format!("postgres:{}", graph.db.schema.as_str())),
            timeout: FileWriteLock::DEFAULT_TIMEOUT,
            session: Default::default(),
        })
    }

    /// Sets how long `acquire` waits before reporting the palace busy.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    fn busy(&self, started: Instant) -> PalaceError {
        PalaceError::PalaceBusy {
            path: PathBuf::from(&*self.label),
            waited_ms: started.elapsed().as_millis() as u64,
        }
    }

    fn failure(&self, message: String) -> PalaceError {
        PalaceError::store("postgres", "write lock", message)
    }

    /// Opens the lock's own connection.
    async fn open_session(&self) -> Result<LockSession> {
        let (client, connection) = self
            .config
            .connect(self.tls.clone())
            .await
            .map_err(|e| self.failure(format!("connecting to PostgreSQL: {}", detail(&e))))?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "write lock connection ended");
            }
        });
        client
            .batch_execute(SESSION_SETTINGS)
            .await
            .map_err(|e| self.failure(detail(&e)))?;
        Ok(LockSession { client })
    }

    /// Takes the server lock on `session`, waiting at most `wait`.
    async fn lock_on(
        &self,
        session: &LockSession,
        wait: Duration,
    ) -> std::result::Result<(), tokio_postgres::Error> {
        let ms = wait.as_millis().max(1);
        session
            .client
            .batch_execute(&format!("SET lock_timeout = {ms}"))
            .await?;
        session
            .client
            .execute("SELECT pg_advisory_lock($1)", &[&self.key])
            .await?;
        Ok(())
    }
}

/// What a [`WriteGuard`] of [`PostgresWriteLock`] holds: this process's turn and the session
/// that holds the server lock.
struct ServerLockHeld {
    turn: Option<OwnedMutexGuard<Option<LockSession>>>,
    key: i64,
}

impl Drop for ServerLockHeld {
    fn drop(&mut self) {
        let Some(mut turn) = self.turn.take() else {
            return;
        };
        let key = self.key;
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    let released = match turn.as_ref() {
                        Some(session) => tokio::time::timeout(
                            UNLOCK_BOUND,
                            session
                                .client
                                .query_one("SELECT pg_advisory_unlock($1)", &[&key]),
                        )
                        .await
                        .map(|answer| answer.map(|row| row.get::<_, bool>(0))),
                        None => return,
                    };
                    match released {
                        Ok(Ok(true)) => {}
                        Ok(Ok(false)) => {
                            tracing::warn!("the fleet write lock was not held at release (the server had ended its session)");
                        }
                        // Closing the session releases whatever it held.
                        Ok(Err(e)) => {
                            tracing::warn!(error = %e, "the fleet write lock's session failed while held; closing it");
                            *turn = None;
                        }
                        Err(_) => {
                            tracing::warn!("PostgreSQL did not answer the release of the fleet write lock; closing its session");
                            *turn = None;
                        }
                    }
                });
            }
            // No runtime to unlock on: closing the session releases the lock.
            Err(_) => *turn = None,
        }
    }
}

#[async_trait]
impl WriteLock for PostgresWriteLock {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn acquire(&self) -> Result<WriteGuard> {
        let started = Instant::now();
        let mut turn = tokio::time::timeout(self.timeout, Arc::clone(&self.session).lock_owned())
            .await
            .map_err(|_| self.busy(started))?;
        // A kept session may have died (server restart, network): one fresh try then.
        for attempt in 0..2 {
            let session = match turn.take() {
                Some(s) if !s.client.is_closed() => s,
                _ => {
                    let bound = self.timeout.min(MAX_WAIT) + SERVER_SILENCE;
                    tokio::time::timeout(bound, self.open_session())
                        .await
                        .map_err(|_| {
                            self.failure(format!(
                                "PostgreSQL did not accept a session within {} ms",
                                bound.as_millis()
                            ))
                        })??
                }
            };
            let wait = self.timeout.min(MAX_WAIT).saturating_sub(started.elapsed());
            // The server bounds the wait (lock_timeout); this bounds a server or network that
            // stopped answering (the session is dropped, so a late grant dies with it).
            let answered =
                tokio::time::timeout(wait + SERVER_SILENCE, self.lock_on(&session, wait)).await;
            let Ok(outcome) = answered else {
                return Err(self.failure(format!(
                    "PostgreSQL did not answer within {} ms",
                    (wait + SERVER_SILENCE).as_millis()
                )));
            };
            match outcome {
                Ok(()) => {
                    *turn = Some(session);
                    return Ok(WriteGuard::holding(ServerLockHeld {
                        turn: Some(turn),
                        key: self.key,
                    }));
                }
                Err(e) if e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) => {
                    *turn = Some(session);
                    return Err(self.busy(started));
                }
                Err(e) if attempt == 0 && session.client.is_closed() => {
                    tracing::debug!(error = %e, "write lock session lost; reconnecting");
                }
                Err(e) => return Err(self.failure(detail(&e))),
            }
        }
        Err(self.failure("the lock's connection kept closing".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palaces_get_distinct_stable_keys() {
        assert_eq!(lock_key("a"), lock_key("a"));
        assert_ne!(lock_key("a"), lock_key("b"));
    }
}
