//! # mempalace-kg-postgres
//!
//! MemPalace's PostgreSQL adapters, for a fleet: every host that opens the same server and
//! schema shares one palace. The knowledge graph ([`PostgresKnowledgeGraph`]) has the SQLite
//! graph's tables (MemPalace 3.11's columns, text compared byte-wise) and rules, one schema
//! per palace ([`SchemaName::for_palace`]); beside it, in the same schema and over the same
//! connections, the palace's sidecars: the coordination log ([`PostgresCoordinationLog`],
//! appends announced with `NOTIFY` so waiters on every host wake), tunnels and hallways
//! ([`PostgresLinks`]), closets ([`PostgresClosets`]), and the write lock every host takes
//! around a check-then-write ([`PostgresWriteLock`], an advisory lock). The conformance suites
//! of each trait run against them as against the SQLite and JSON adapters.
//!
//! What holds across hosts: writes are transactions; a unique index on open facts means two
//! hosts filing the same current fact at once file it once (the loser gets the winner's id);
//! supersede and invalidate lock the facts they close; log appends take an advisory lock so
//! `seq` follows commit order; link edits lock their row. Reads of a schema that does not
//! exist yet return nothing and create nothing.
//!
//! Connections: a pool of up to 16 per process (tokio-postgres via deadpool), TLS through
//! rustls whenever the server offers it (`sslmode=require` in the URL insists on it), the
//! server always verified against the system's roots and an optional CA file
//! ([`PostgresTls`]).

mod closets;
mod connection;
mod coordination_log;
mod graph;
mod links;
mod palace_schema;
mod schema;
mod write_lock;

pub use closets::PostgresClosets;
pub use connection::PostgresTls;
pub use coordination_log::PostgresCoordinationLog;
pub use graph::PostgresKnowledgeGraph;
pub use links::PostgresLinks;
pub use schema::SchemaName;
pub use write_lock::PostgresWriteLock;
