//! `mempalace`: file a project's memories, search them by meaning, keep facts in time, and
//! serve it all to an AI client over MCP.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use mempalace::core::conversations::ExtractMode;
use mempalace::core::knowledge_graph::Supersede;
use mempalace::core::reports::{NoPalaceReport, Status};
use mempalace::core::secret_file::read_secret;
use mempalace::core::{
    Cancellation, CandidateSource, Direction, NewTriple, Page, Palace, PalaceError, SearchMode,
    SearchRequest,
};
use mempalace::ingest::hooks::{
    DetachedFiling, Harness, Hook, HookAnswer, HookSettings, HookState, finish_detached,
    plan_session_end, run_hook,
};
use mempalace::ingest::project::{ProjectConfig, init_project};
use mempalace::ingest::project_mine::Chunking;
use mempalace::ingest::{MineMode, MineOutcome, MineRequest};
use mempalace::{BackendKind, PalaceBuilder, mcp};
use mempalace_cli::coordination_commands::{self, ArtifactCommand, LogstreamCommand, TaskCommand};
use mempalace_cli::palace_links_commands::{self, TunnelsCommand};
use mempalace_cli::palace_transfer_commands;
use mempalace_cli::progress_bars::TerminalProgress;
use mempalace_cli::render;
use mempalace_cli::wing_commands::{self, RoomsCommand, WingsCommand};

/// MemPalace: a memory palace for AI agents.
///
/// Drawers (verbatim text chunks) are filed under wings and rooms and found again by meaning;
/// facts with time validity live in a knowledge graph. Start with `mempalace init <dir>` and
/// `mempalace mine <dir>`, then `mempalace search "..."`, or register `mempalace mcp` with
/// your AI client.
/// `mempalace --version`: the version, then what this binary was built with.
macro_rules! version_text {
    ($kernels:literal) => {
        concat!(
            env!("CARGO_PKG_VERSION"),
            "\nvector stores: lancedb (embedded, default), qdrant (gRPC)",
            "\nknowledge graph: sqlite (MemPalace 3.11's file format), postgres (shared by a fleet)",
            "\nembedder: all-MiniLM-L6-v2 on candle (",
            $kernels,
            ")\nMCP transports: stdio, streamable HTTP (TLS: rustls)",
            "\nimports: MemPalace 3.11 palaces (ChromaDB)"
        )
    };
}
#[cfg(feature = "openblas")]
const VERSION: &str = version_text!("OpenBLAS kernels");
#[cfg(not(feature = "openblas"))]
const VERSION: &str = version_text!("pure-Rust kernels");

#[derive(Parser)]
#[command(name = "mempalace", version = VERSION, about, long_about)]
struct Cli {
    #[command(flatten)]
    stack: StackArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args)]
struct StackArgs {
    /// The palace folder (default: $MEMPALACE_PALACE_PATH, else config.json's palace_path,
    /// else ~/.mempalace/palace for an existing install, else ~/.config/mempalace/palace).
    #[arg(long, global = true, value_name = "PATH")]
    palace: Option<PathBuf>,
    /// Vector store for drawers [default: the palace's own, else lancedb].
    #[arg(long, global = true, value_enum)]
    backend: Option<BackendArg>,
    /// Qdrant URL for --backend qdrant.
    #[arg(long, global = true, env = "QDRANT_URL", value_name = "URL")]
    qdrant_url: Option<String>,
    /// Qdrant API key.
    #[arg(long, global = true, env = "QDRANT_API_KEY", hide_env_values = true)]
    qdrant_api_key: Option<String>,
    /// PostgreSQL URL of a knowledge graph shared by several hosts (a new palace keeps its
    /// graph there, in a schema named for the palace; give it in the environment rather than
    /// on the command line when it holds a password).
    #[arg(
        long,
        global = true,
        env = "MEMPALACE_KG_POSTGRES_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    kg_postgres_url: Option<String>,
    /// File holding the PostgreSQL URL (instead of --kg-postgres-url).
    #[arg(
        long,
        global = true,
        env = "MEMPALACE_KG_POSTGRES_URL_FILE",
        value_name = "PATH",
        conflicts_with = "kg_postgres_url"
    )]
    kg_postgres_url_file: Option<PathBuf>,
    /// PEM file of certificates to trust for TLS to PostgreSQL besides the system's (a private CA or a self-signed server); the server is always verified.
    #[arg(
        long,
        global = true,
        env = "MEMPALACE_KG_POSTGRES_CA_FILE",
        value_name = "PATH"
    )]
    kg_postgres_ca_file: Option<PathBuf>,
    /// File holding the Qdrant API key (instead of --qdrant-api-key).
    #[arg(
        long,
        global = true,
        env = "QDRANT_API_KEY_FILE",
        value_name = "PATH",
        conflicts_with = "qdrant_api_key"
    )]
    qdrant_api_key_file: Option<PathBuf>,
    /// LanceDB table / Qdrant collection of a new palace (default: `mempalace_drawers` for LanceDB, `mempalace_<palace id>` for Qdrant).
    #[arg(long, global = true, value_name = "NAME")]
    collection: Option<String>,
    /// Folder holding all-MiniLM-L6-v2 [default: $MEMPALACE_MODEL_DIR, else ~/.cache/mempalace/models/all-MiniLM-L6-v2].
    #[arg(long, global = true, value_name = "PATH")]
    model_dir: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Create the palace and write DIR/mempalace.yaml with the project's wing and rooms.
    Init {
        /// The project folder.
        dir: PathBuf,
        /// Wing name [default: the folder's name].
        #[arg(long)]
        wing: Option<String>,
    },
    /// File a project's text files as drawers (re-mining files only what changed).
    Mine {
        /// The project folder.
        dir: PathBuf,
        /// Wing to file under [default: mempalace.yaml's, else the folder's name].
        #[arg(long)]
        wing: Option<String>,
        /// Chunks per embedding batch.
        #[arg(long, default_value_t = 64)]
        batch_size: usize,
        /// Skip files larger than this many bytes.
        #[arg(long, default_value_t = mempalace::ingest::walk::DEFAULT_MAX_FILE_BYTES)]
        max_file_size: u64,
        /// No progress output.
        #[arg(long)]
        quiet: bool,
        /// How files are cut into drawers.
        #[arg(long, value_enum, default_value_t = ChunkingArg::Context)]
        chunking: ChunkingArg,
        /// What the folder holds: a project's files, or chat exports and transcripts (Claude
        /// Code, Codex, Gemini CLI, ChatGPT, Claude.ai, Slack, plain text; any mix).
        #[arg(long, value_enum, default_value_t = MineModeArg::Projects)]
        mode: MineModeArg,
        /// With `--mode convos`: file whole exchanges, or 3.11's extracted decisions,
        /// preferences, milestones, problems and emotional moments in rooms of their kind.
        #[arg(long, value_enum, default_value_t = Extract::Exchange)]
        extract: Extract,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Search drawers by meaning.
    Search {
        /// What to look for.
        query: String,
        /// Only this wing.
        #[arg(long)]
        wing: Option<String>,
        /// Only this room.
        #[arg(long)]
        room: Option<String>,
        /// Most results.
        #[arg(long, default_value_t = 5)]
        limit: usize,
        /// Channels: hybrid (meaning and words, fused), vector (meaning) or lexical (words).
        #[arg(long, value_enum, default_value_t = ModeArg::Hybrid)]
        mode: ModeArg,
        /// Hybrid candidates: union (nearest by meaning and best by words) or vector (nearest
        /// by meaning only, as MemPalace 3.11); default: the palace's ranking.
        #[arg(long, value_enum)]
        candidates: Option<CandidatesArg>,
        /// Only drawers filed at or after this ISO date or date-time.
        #[arg(long)]
        since: Option<String>,
        /// Only drawers filed before this ISO date or date-time.
        #[arg(long)]
        before: Option<String>,
        /// Print the exact search payload as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Find drawers whose source file is gone (deleted or moved) or, given the project
    /// folder, now excluded by its .gitignore, and with --apply delete them (MemPalace 3.11's
    /// `sync`; a report only by default).
    Sync {
        /// Only drawers mined from files under this folder [default: every mined drawer].
        dir: Option<PathBuf>,
        /// Only this wing.
        #[arg(long)]
        wing: Option<String>,
        /// Delete the stale drawers (needs DIR or --wing; without it: a dry run).
        #[arg(long)]
        apply: bool,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Drawer counts per wing and room.
    Status {
        /// Print the status payload as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The wake-up context for a new agent session: L0 (identity.txt) + L1 (the palace's
    /// essential story), within a token budget counted by the model's tokenizer.
    WakeUp {
        /// Only this wing's drawers (a project-specific wake-up).
        #[arg(long)]
        wing: Option<String>,
        /// Most tokens the essential story may take.
        #[arg(long, default_value_t = mempalace::core::wake_up::DEFAULT_L1_TOKENS)]
        tokens: usize,
        /// The identity file [default: the palace's identity.txt, else ~/.mempalace/identity.txt].
        #[arg(long)]
        identity: Option<PathBuf>,
        /// Print the result (text, token counts, drawer ids) as JSON.
        #[arg(long)]
        json: bool,
    },
    /// AAAK summaries of a wing's or room's drawers (MemPalace 3.11's dialect), with the
    /// tokens they save; entity codes from the palace's entities.json when present.
    Compress {
        /// Only this wing.
        #[arg(long)]
        wing: Option<String>,
        /// Only this room.
        #[arg(long)]
        room: Option<String>,
        /// Most drawers to summarise.
        #[arg(long, default_value_t = 1000)]
        limit: usize,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The knowledge graph.
    #[command(subcommand)]
    Kg(KgCommand),
    /// Serve the palace to AI clients over MCP: stdio (one client) or streamable HTTP at
    /// /mcp (many clients; bearer token from MEMPALACE_MCP_HTTP_TOKEN or a file).
    Mcp(McpArgs),
    /// Agent harness hooks (Claude Code, Codex): file each session as it goes, and give a new
    /// session the project's memory.
    #[command(subcommand)]
    Hook(HookCommand),
    /// File what the hooks and the miner missed in agent transcripts (a .jsonl file, or every
    /// one under a folder): each into its project's wing, only the turns not filed before
    /// (MemPalace 3.11's `sweep`; ours files exchanges, as `mine --mode convos` does).
    Sweep {
        /// A transcript, or a folder searched for *.jsonl.
        target: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Split terminal transcripts holding several Claude Code sessions (DIR's *.txt) into one
    /// file per session; each original is kept as *.mega_backup.
    Split {
        /// The folder holding the transcripts.
        dir: PathBuf,
        /// Where the session files go [default: beside each original].
        #[arg(long)]
        output_dir: Option<PathBuf>,
        /// Show what would be written; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Only files with at least this many sessions.
        #[arg(long, default_value_t = 2)]
        min_sessions: usize,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Agent coordination events: delegate work, wait for replies, watch for mail (MemPalace
    /// 3.11's logstream; its `sync` with peer replicas is not offered: hosts share one palace).
    #[command(subcommand)]
    Logstream(LogstreamCommand),
    /// Create agent tasks over the logstream.
    #[command(subcommand)]
    Task(TaskCommand),
    /// Exact artifact exchange for agent handoffs.
    #[command(subcommand)]
    Artifact(ArtifactCommand),
    /// Print the skill instructions an agent follows for a task (MemPalace 3.11's texts).
    Instructions {
        /// Which instructions.
        #[arg(value_parser = clap::builder::PossibleValuesParser::new(
            mempalace::core::agent_instructions::instruction_names()
        ))]
        name: String,
    },
    /// Print the shared-brain rules block for the agent identity HOST:HARNESS:PROJECT, to
    /// paste into an agent's system prompt (re-rendering replaces it between its markers).
    Rules {
        /// This machine, e.g. mac.
        #[arg(long)]
        host: String,
        /// The agent harness, e.g. claude.
        #[arg(long)]
        harness: String,
        /// The project, e.g. mempalace.
        #[arg(long)]
        project: String,
        /// Tool names of the full MCP server (3.11's three-tool light server is not offered).
        #[arg(long, value_enum, default_value = "full")]
        mcp: RulesMcpArg,
    },
    /// Hallways: entity co-occurrence links within a wing, strongest first; with --rebuild,
    /// rebuilt from the drawers' names (as `mine` does); with --prune-spellings, the
    /// spelling artifacts among them.
    Hallways {
        /// Only this wing (with --rebuild: rebuild only this wing).
        #[arg(long)]
        wing: Option<String>,
        /// Rebuild hallways from the names the drawers mention (pairs in at least
        /// MEMPALACE_KG_HALLWAY_MIN_COUNT drawers, default 2), every wing or --wing.
        #[arg(long, conflicts_with = "prune_spellings")]
        rebuild: bool,
        /// Report hallways joining two spellings of one entity and weaker spellings of one
        /// association (removed with --yes).
        #[arg(long)]
        prune_spellings: bool,
        /// With --prune-spellings: remove them.
        #[arg(long, requires = "prune_spellings")]
        yes: bool,
        /// Most hallways shown (1 to 500).
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Print the page as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Tunnels: explicit links between rooms of different wings (the MCP tools' operations
    /// and `prune`; 3.11's `propose` is not offered: it ranks entities our miner does not
    /// record).
    #[command(subcommand)]
    Tunnels(TunnelsCommand),
    /// Score how well the palace is organised, read-only (MemPalace 3.11's `audit`): rooms,
    /// naming, tunnels, hallways and the knowledge graph, each 0-100, with findings.
    Audit {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// No progress lines (there are none: the report is fast).
        #[arg(long)]
        quiet: bool,
        /// Exit with status 2 when the overall score is below SCORE.
        #[arg(long, value_name = "SCORE")]
        fail_under: Option<i64>,
    },
    /// Re-key wings named before 3.11's spelling rule (`_home_me_app`, `-app-`) to their
    /// normalised spelling, merging into an existing wing of that name; drawers keep their ids
    /// and vectors, closets follow. Asks first unless --yes.
    MigrateWings {
        /// Show the plan only.
        #[arg(long)]
        dry_run: bool,
        /// Apply without asking.
        #[arg(long)]
        yes: bool,
        /// Print the plan or the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Room maintenance: `rooms apply` moves a wing's drawers to the nearest room of its room
    /// set (3.11's `rooms propose` needs an LLM and is not offered).
    #[command(subcommand)]
    Rooms(RoomsCommand),
    /// Wing maintenance: `wings split` re-keys a wing of many projects' transcripts into one
    /// wing per project.
    #[command(subcommand)]
    Wings(WingsCommand),
    /// Counts and index health, read-only: the store's rows, each index and the rows it does
    /// not cover yet, the knowledge graph's size, and what needs a look (MemPalace 3.11's
    /// `repair-status`).
    RepairStatus {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write the whole palace as MemPalace's export format (JSON Lines, versioned): drawers
    /// with their vectors, closets, the knowledge graph with its intervals, tunnels, hallways
    /// and the coordination log. Any backend and any later release imports it.
    Export {
        /// The file to write (replaced when complete), or `-` for stdout.
        file: PathBuf,
        /// Leave the vectors out (several times smaller; the import embeds the drawers).
        #[arg(long)]
        no_vectors: bool,
        /// Print the counts as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Read an export into this palace (created when missing). Records already here (same
    /// id) are left as they are: importing twice adds nothing, and re-running an interrupted
    /// import completes it.
    Import {
        /// The export file, or `-` for stdin.
        file: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Copy the palace into a new folder while it keeps serving: drawers, knowledge graph and
    /// closets as of one instant, then the coordination log and link files. The folder is a
    /// palace of its own: `--palace DEST verify`, then put it in place of a lost one. LanceDB
    /// and SQLite parts only (a Qdrant or PostgreSQL palace is copied with `export`).
    Backup {
        /// The new folder (must not exist).
        dest: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check the palace, reading only: the store and its indexes answer, every drawer has a
    /// usable vector, the vectors are this embedder's, chunked drawers are whole, the
    /// knowledge graph passes its integrity check, closets point at stored drawers. Exits 1
    /// when a problem is found.
    Verify {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Rebuild what can be rebuilt from the palace's own data (the store's indexes, closets of
    /// gone drawers), say what could not be and how to mend it, and verify again. Exits 1
    /// when problems remain. (MemPalace 3.11's `repair` rebuilds ChromaDB's index.)
    Repair {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Bring a MemPalace 3.11 (Python, ChromaDB) palace into this one (--palace): drawers
    /// keep their ids and metadata and are embedded again; the knowledge graph is copied.
    /// Re-running finishes an interrupted migration without duplicates.
    Migrate {
        /// The 3.11 palace folder (the one holding chroma.sqlite3).
        from: PathBuf,
        /// No progress output.
        #[arg(long)]
        quiet: bool,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Exit with an error when any record was skipped (the rest is still migrated).
        #[arg(long)]
        strict: bool,
    },
}

/// `--mcp` of `rules`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum RulesMcpArg {
    /// The full server's tool names (mempalace_search, …).
    Full,
    /// 3.11's light server's names: refused, that server is not offered.
    Light,
}

/// `mempalace hook …`.
#[derive(Subcommand)]
enum HookCommand {
    /// Run a hook: reads the harness's JSON on stdin, prints the answer as JSON on stdout,
    /// exits 0 whatever it is sent (MemPalace 3.11's `hook run`). session-start adds the
    /// project's wake-up text to the agent's context; stop, precompact and session-end file
    /// the session's new turns; every 15 user messages a checkpoint goes to the diary.
    Run {
        /// The hook.
        #[arg(long, value_enum)]
        hook: HookArg,
        /// The harness calling it.
        #[arg(long, value_enum)]
        harness: HarnessArg,
    },
    /// Add our hooks to the harness's settings (~/.claude/settings.json, ~/.codex/hooks.json),
    /// keeping the user's other hooks; running it again changes nothing.
    Install {
        /// The harness.
        #[arg(long, value_enum)]
        harness: HarnessArg,
        /// Show the change; write nothing.
        #[arg(long)]
        dry_run: bool,
        /// The program the hooks run [default: this binary's path].
        #[arg(long, value_name = "PATH")]
        command: Option<String>,
    },
    /// The detached half of a session-end hook (started by `hook run`).
    #[command(hide = true)]
    Finish {
        /// The work, as JSON.
        work: String,
    },
}

/// A hook's name on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum HookArg {
    /// A session starts.
    SessionStart,
    /// The agent finished a turn.
    Stop,
    /// The session ends.
    SessionEnd,
    /// The context is about to be compacted.
    Precompact,
}

impl From<HookArg> for Hook {
    fn from(h: HookArg) -> Self {
        match h {
            HookArg::SessionStart => Hook::SessionStart,
            HookArg::Stop => Hook::Stop,
            HookArg::SessionEnd => Hook::SessionEnd,
            HookArg::Precompact => Hook::Precompact,
        }
    }
}

/// A harness's name on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum HarnessArg {
    /// Anthropic's Claude Code.
    ClaudeCode,
    /// OpenAI's Codex CLI.
    Codex,
    /// The DeepSeek harness.
    Dsh,
}

impl From<HarnessArg> for Harness {
    fn from(h: HarnessArg) -> Self {
        match h {
            HarnessArg::ClaudeCode => Harness::ClaudeCode,
            HarnessArg::Codex => Harness::Codex,
            HarnessArg::Dsh => Harness::Dsh,
        }
    }
}

/// How `mcp` talks to its clients.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Transport {
    /// JSON-RPC over stdin/stdout: the AI client starts the server.
    Stdio,
    /// MCP streamable HTTP at /mcp: clients connect to a running server.
    Http,
}

/// The options of `mcp` (3.11's names where 3.11 has them).
#[derive(Args)]
struct McpArgs {
    /// stdio (one client that starts the server) or http (a shared server).
    #[arg(long, value_enum, default_value = "stdio")]
    transport: Transport,
    /// Address to bind with --transport http; anything but loopback requires a token.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port to bind with --transport http (0: any free port).
    #[arg(long, default_value_t = 8765)]
    port: u16,
    /// File holding the bearer token clients must send (else $MEMPALACE_MCP_HTTP_TOKEN_FILE,
    /// else $MEMPALACE_MCP_HTTP_TOKEN). Never pass the token itself on the command line.
    #[arg(long, value_name = "PATH")]
    token_file: Option<PathBuf>,
    /// PEM certificate to serve HTTPS with (needs --tls-key).
    #[arg(
        long,
        env = "MEMPALACE_MCP_TLS_CERT",
        value_name = "PATH",
        requires = "tls_key"
    )]
    tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(
        long,
        env = "MEMPALACE_MCP_TLS_KEY",
        value_name = "PATH",
        requires = "tls_cert"
    )]
    tls_key: Option<PathBuf>,
    /// Serve recall only: tools that change state are not listed and are refused.
    #[arg(
        long,
        env = "MEMPALACE_MCP_READ_ONLY",
        action = clap::ArgAction::SetTrue,
        value_parser = clap::builder::FalseyValueParser::new()
    )]
    read_only: bool,
    /// A Host header value to accept (repeatable); default: loopback names on loopback, any
    /// host elsewhere (the token guards).
    #[arg(long = "allowed-host", value_name = "HOST")]
    allowed_hosts: Vec<String>,
    /// A browser origin to accept besides the server's own (repeatable;
    /// `scheme://host[:port]`, `:*` for any port). Requests from any other `Origin` get 403;
    /// requests without one (non-browser clients) pass.
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    allowed_origins: Vec<String>,
    /// Largest request body in bytes (413 beyond).
    #[arg(long, default_value_t = 16 * 1024 * 1024)]
    max_body_bytes: usize,
    /// Most HTTP requests handled at once (503 beyond).
    #[arg(long, default_value_t = 256)]
    max_requests_in_flight: usize,
    /// Seconds a read tool may run, and a request body may take to arrive.
    #[arg(long, default_value_t = 120)]
    request_timeout: u64,
    /// Seconds a client has to send its request headers (and finish a TLS handshake).
    #[arg(long, default_value_t = 10)]
    header_timeout: u64,
    /// Seconds after which an idle MCP session is closed.
    #[arg(long, default_value_t = 300)]
    session_idle: u64,
}

impl McpArgs {
    /// The HTTP server's options, with the token from a file or the environment.
    async fn http_options(&self) -> Result<mcp::HttpOptions> {
        let bind = tokio::net::lookup_host((self.host.as_str(), self.port))
            .await
            .with_context(|| format!("cannot resolve --host {}", self.host))?
            .next()
            .with_context(|| format!("--host {} has no address", self.host))?;
        Ok(mcp::HttpOptions {
            bind,
            token: mcp::http::BearerToken::configured(self.token_file.as_deref())?,
            tls: match (&self.tls_cert, &self.tls_key) {
                (Some(cert), Some(key)) => Some(mcp::http::TlsFiles {
                    cert: cert.clone(),
                    key: key.clone(),
                }),
                _ => None,
            },
            allowed_hosts: self.allowed_hosts.clone(),
            allowed_origins: self.allowed_origins.clone(),
            limits: mcp::HttpLimits {
                max_body_bytes: self.max_body_bytes,
                max_requests_in_flight: self.max_requests_in_flight,
                request_timeout: std::time::Duration::from_secs(self.request_timeout.max(1)),
                header_read_timeout: std::time::Duration::from_secs(self.header_timeout.max(1)),
                session_idle: std::time::Duration::from_secs(self.session_idle.max(1)),
                ..mcp::HttpLimits::default()
            },
        })
    }
}

/// `--mode` of `search`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum ModeArg {
    /// Meaning and words, fused.
    Hybrid,
    /// Meaning only.
    Vector,
    /// Words only.
    Lexical,
}

/// `--candidates` of `search`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum CandidatesArg {
    /// The nearest drawers by meaning and the best by words.
    Union,
    /// The nearest drawers by meaning only.
    Vector,
}

impl From<CandidatesArg> for CandidateSource {
    fn from(c: CandidatesArg) -> Self {
        match c {
            CandidatesArg::Union => CandidateSource::Union,
            CandidatesArg::Vector => CandidateSource::Vector,
        }
    }
}

impl From<ModeArg> for SearchMode {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::Hybrid => SearchMode::Hybrid,
            ModeArg::Vector => SearchMode::Vector,
            ModeArg::Lexical => SearchMode::Lexical,
        }
    }
}

#[derive(Subcommand)]
enum KgCommand {
    /// Facts about an entity.
    Query {
        /// Entity name.
        entity: String,
        /// Only facts valid at this date.
        #[arg(long)]
        as_of: Option<String>,
        /// outgoing, incoming or both.
        #[arg(long, default_value = "both")]
        direction: String,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Add a fact: SUBJECT PREDICATE OBJECT.
    Add {
        subject: String,
        predicate: String,
        object: String,
        /// When it became true.
        #[arg(long)]
        valid_from: Option<String>,
        /// When it stopped being true.
        #[arg(long)]
        valid_to: Option<String>,
        /// Confidence in [0, 1].
        #[arg(long, default_value_t = 1.0)]
        confidence: f64,
        /// Drawer id the fact came from.
        #[arg(long)]
        source_closet: Option<String>,
    },
    /// End a current fact (kept as history).
    Invalidate {
        subject: String,
        predicate: String,
        object: String,
        /// End date [default: today].
        #[arg(long)]
        ended: Option<String>,
    },
    /// Replace a single-valued fact: SUBJECT PREDICATE OLD NEW.
    Supersede {
        subject: String,
        predicate: String,
        old_object: String,
        new_object: String,
        /// When the change happens (a date or UTC timestamp) [default: now].
        #[arg(long)]
        at: Option<String>,
    },
    /// Facts in chronological order.
    Timeline {
        /// One entity [default: all].
        entity: Option<String>,
        /// Most facts.
        #[arg(long, default_value_t = 100)]
        limit: usize,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Graph size.
    Stats,
}

fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

fn main() {
    // First, while this is the only thread: OpenBLAS on the best kernels this CPU has (an
    // OpenBLAS older than the CPU falls back to its slowest ones).
    #[cfg(feature = "openblas")]
    // SAFETY: no other thread exists yet to touch the environment, and no product runs.
    let blas_core = Some(unsafe { mempalace::minilm_embedder::openblas_core::select_best_core() });
    #[cfg(not(feature = "openblas"))]
    let blas_core: Option<()> = None;
    let cli = Cli::parse();
    mempalace_cli::malloc_tuning::limit_arenas();
    if matches!(cli.command, Command::Mine { .. } | Command::Migrate { .. }) {
        mempalace_cli::malloc_tuning::keep_freed_memory_for_bulk_work();
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    runtime.block_on(async_main(cli, blas_core.map(|c| format!("{c:?}"))));
}

/// Runs the command, with logging set up; `blas_core` says what became of OpenBLAS's kernels.
async fn async_main(cli: Cli, blas_core: Option<String>) {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Colour only for a person at a terminal: a log file or a supervisor's pipe gets
        // plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        // Each span enabled by MEMPALACE_LOG (e.g. `mempalace_core=debug`) logs its time when
        // it closes: a per-call profile of the tool, the palace, the store and the embedder.
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("MEMPALACE_LOG")
                // Lance warns once per process about a future change to its index
                // statistics, which we do not read: not a user's concern.
                .unwrap_or_else(|_| {
                    "warn,lance::index::vector::ivf=error,mempalace::http::access=info".into()
                }),
        )
        .init();
    if let Some(core) = blas_core {
        tracing::debug!(core, "OpenBLAS core");
    }
    let read = ReadCommand::of(&cli.command);
    let hook_run = matches!(cli.command, Command::Hook(HookCommand::Run { .. }));
    if let Err(e) = run(cli).await {
        // A hook answers whatever happens: the harness must never see it fail.
        if hook_run {
            eprintln!("warning: {e:#}");
            mempalace_cli::hook_command::print_answer(&HookAnswer::Nothing);
            return;
        }
        // One rule for every read of a folder with no palace: say so, with the hint, and
        // exit 0 (nothing stored is not a failure; nothing is created).
        if let (Some(read), Some(PalaceError::NoPalace { palace_path })) =
            (read, e.downcast_ref::<PalaceError>())
        {
            let report = NoPalaceReport::new(palace_path);
            if read.json {
                if let Err(e) = print_json(&report) {
                    eprintln!("error: {e:#}");
                    std::process::exit(1);
                }
            } else {
                print!(
                    "{}",
                    render::status(&Status::NoPalace(report), &Default::default())
                );
            }
            return;
        }
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

/// A command that only reads the palace, and whether it prints JSON.
#[derive(Clone, Copy)]
struct ReadCommand {
    json: bool,
}

impl ReadCommand {
    /// `Some` for the read commands (status, search, wake-up, compress, sync, kg query /
    /// timeline / stats).
    fn of(command: &Command) -> Option<Self> {
        let json = match command {
            Command::Status { json }
            | Command::Search { json, .. }
            | Command::WakeUp { json, .. }
            | Command::Compress { json, .. }
            | Command::Sync { json, .. }
            | Command::RepairStatus { json }
            | Command::Verify { json }
            | Command::Hallways { json, .. }
            | Command::Kg(KgCommand::Query { json, .. })
            | Command::Kg(KgCommand::Timeline { json, .. }) => *json,
            Command::Kg(KgCommand::Stats) => true,
            _ => return None,
        };
        Some(ReadCommand { json })
    }
}

async fn run(cli: Cli) -> Result<()> {
    // `mempalace mcp` typed at a terminal is someone setting up a client (3.11's `mcp` prints
    // these lines): show them instead of waiting for JSON-RPC that will never come.
    if let Command::Mcp(args) = &cli.command
        && args.transport == Transport::Stdio
        && std::io::IsTerminal::is_terminal(&std::io::stdin())
    {
        let program = std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "mempalace".to_string());
        // The server as it was asked for here: the same palace (absolute), store and mode.
        let mut server_args = vec!["mcp".to_string()];
        if let Some(p) = &cli.stack.palace {
            let p = std::path::absolute(p).unwrap_or_else(|_| p.clone());
            server_args.extend(["--palace".to_string(), p.display().to_string()]);
        }
        if let Some(b) = cli.stack.backend {
            server_args.extend(["--backend".to_string(), b.flag_value().to_string()]);
        }
        if let Some(c) = &cli.stack.collection {
            server_args.extend(["--collection".to_string(), c.clone()]);
        }
        if args.read_only {
            server_args.push("--read-only".to_string());
        }
        print!("{}", render::mcp_client_setup(&program, &server_args));
        return Ok(());
    }
    // Texts that need no palace.
    match &cli.command {
        Command::Split {
            dir,
            output_dir,
            dry_run,
            min_sessions,
            json,
        } => {
            let mut request = mempalace::ingest::split::SplitRequest::new(dir);
            request.output_dir = output_dir.clone();
            request.dry_run = *dry_run;
            request.min_sessions = *min_sessions;
            request.known_names = mempalace::ingest::split::KnownNames::load(
                &mempalace::core::locations::expand_home("~/.mempalace/known_names.json"),
            );
            let report = mempalace::ingest::split::split_mega_files(&request)?;
            if *json {
                print_json(&report)?;
            } else {
                print!("{}", render::split(&report));
            }
            return Ok(());
        }
        Command::Instructions { name } => {
            let text = mempalace::core::agent_instructions::instructions(name)
                .with_context(|| format!("unknown instructions: {name}"))?;
            println!("{text}");
            return Ok(());
        }
        Command::Rules {
            host,
            harness,
            project,
            mcp,
        } => {
            if *mcp == RulesMcpArg::Light {
                anyhow::bail!(
                    "--mcp light names the tools of MemPalace 3.11's three-tool light server, which this MemPalace does not serve; use --mcp full"
                );
            }
            match mempalace::core::agent_instructions::shared_brain_rules(host, harness, project) {
                Ok(text) => println!("{text}"),
                Err(e) => {
                    eprintln!("{}", mempalace::core::coordination::error_message(&e));
                    std::process::exit(1);
                }
            }
            return Ok(());
        }
        _ => {}
    }
    let palace_path = mempalace::core::locations::palace_path(cli.stack.palace.as_deref());
    let forwarded = forwarded_stack(&cli.stack);
    // session-end's budget is short (Claude Code allows about 1.5 s): it plans the filing for
    // a detached process and answers before any palace is opened.
    if let Command::Hook(HookCommand::Run {
        hook: HookArg::SessionEnd,
        harness,
    }) = &cli.command
    {
        let settings =
            HookSettings::from_env(&palace_path, &mempalace::core::locations::config_dir());
        let payload = mempalace_cli::hook_command::read_payload();
        let run = plan_session_end((*harness).into(), &payload, &settings);
        if let Some(work) = &run.detached {
            start_detached(work, &settings, &forwarded);
        }
        mempalace_cli::hook_command::print_answer(&run.answer);
        return Ok(());
    }
    let mut builder = PalaceBuilder::new(&palace_path).named_explicitly(cli.stack.palace.is_some());
    if let Some(backend) = cli.stack.backend {
        builder = builder.backend(backend.into());
    }
    if let Some(url) = cli.stack.qdrant_url {
        builder = builder.qdrant_url(url);
    }
    let qdrant_api_key = match &cli.stack.qdrant_api_key_file {
        Some(file) => Some(read_secret(file)?),
        None => cli.stack.qdrant_api_key,
    };
    if let Some(key) = qdrant_api_key {
        builder = builder.qdrant_api_key(key);
    }
    let kg_postgres_url = match &cli.stack.kg_postgres_url_file {
        Some(file) => Some(read_secret(file)?),
        None => cli.stack.kg_postgres_url,
    };
    if matches!(cli.command, Command::Migrate { .. }) && kg_postgres_url.is_some() {
        // 3.11's graph is a SQLite file: it is copied into the palace, which must keep it.
        anyhow::bail!(
            "migrate brings MemPalace 3.11's SQLite knowledge graph; run it without MEMPALACE_KG_POSTGRES_URL / --kg-postgres-url"
        );
    }
    if let Some(url) = kg_postgres_url {
        builder = builder.knowledge_graph_postgres(url);
    }
    if let Some(ca_file) = cli.stack.kg_postgres_ca_file {
        builder = builder.postgres_ca_file(ca_file);
    }
    if let Some(collection) = cli.stack.collection {
        builder = builder.collection(collection);
    }
    let embedder = mempalace::minilm(cli.stack.model_dir.clone());
    let palace = Arc::new(builder.embedder(embedder.clone()).open().await?);
    match cli.command {
        Command::Init { dir, wing } => {
            let (config, written) = init_project(&dir, wing.as_deref())?;
            palace.init().await?;
            let rooms: Vec<&str> = config.rooms.iter().map(|r| r.name.as_str()).collect();
            println!("Palace ready at {}", palace_path.display());
            println!("Wing: {}  Rooms: {}", config.wing, rooms.join(", "));
            if written {
                println!(
                    "Wrote {} (edit it, then run: mempalace mine {})",
                    ProjectConfig::path_in(&dir).display(),
                    dir.display()
                );
            } else {
                println!(
                    "Kept the existing {}",
                    ProjectConfig::path_in(&dir).display()
                );
            }
        }
        Command::Mine {
            dir,
            wing,
            batch_size,
            max_file_size,
            quiet,
            chunking,
            mode,
            extract,
            json,
        } => {
            let mut request = match mode {
                MineModeArg::Projects => MineRequest::project(&dir),
                MineModeArg::Convos => MineRequest::conversations(&dir),
            };
            request.wing = wing;
            request.extract = extract.into();
            request.batch_size = batch_size.max(1);
            request.chunking = chunking.into();
            if request.mode == MineMode::Projects {
                request.max_file_bytes = Some(max_file_size);
            }
            let progress = TerminalProgress::new(quiet || json);
            let outcome = mempalace::ingest::mine(
                Arc::clone(&palace),
                &request,
                &progress,
                &ctrl_c_cancels(),
            )
            .await?;
            match &outcome {
                MineOutcome::Conversations(report) => {
                    if json {
                        print_json(report)?;
                    } else {
                        print!("{}", render::conversation_mine(report));
                        if let Some(why) = &report.links.hallway_error {
                            println!("  (hallways skipped: {why})");
                        }
                    }
                    if !report.errors.is_empty() {
                        anyhow::bail!(
                            "{} file(s) broke off (see above); the conversations before each break are filed",
                            report.errors.len()
                        );
                    }
                }
                MineOutcome::Project { report, .. } => {
                    if json {
                        print_json(report)?;
                    } else {
                        println!(
                            "Mined {} file(s) into {} drawer(s) ({} unchanged, {} skipped, {} old chunk(s) removed) in {:.1}s{}",
                            report.files_mined,
                            report.drawers_filed,
                            report.files_unchanged,
                            report.files_skipped,
                            report.drawers_removed,
                            report.wall_seconds,
                            if report.interrupted {
                                " — interrupted, run mine again to finish"
                            } else {
                                ""
                            }
                        );
                        print!("{}", render::wing_links(&report.links));
                    }
                    if let Some(why) = &report.links.hallway_error {
                        eprintln!("  WARNING: hallway computation skipped — {why}");
                    }
                    if let Some(why) = &report.links.tunnel_error {
                        eprintln!("  WARNING: entity tunnel computation skipped — {why}");
                    }
                }
                MineOutcome::DryRun(dry) => print_json(dry)?,
            }
        }
        Command::Search {
            query,
            wing,
            room,
            limit,
            mode,
            candidates,
            since,
            before,
            json,
        } => {
            let mut request = SearchRequest::new(query).limit(limit).mode(mode.into());
            request.candidates = candidates.map(Into::into);
            request.wing = wing;
            request.room = room;
            request.since = since;
            request.before = before;
            let r = palace.search_with(&request).await?;
            if json {
                print_json(&r)?;
            } else {
                print!("{}", render::search(&r));
            }
        }
        Command::Sync {
            dir,
            wing,
            apply,
            json,
        } => {
            if apply && dir.is_none() && wing.is_none() {
                anyhow::bail!(
                    "sync --apply deletes drawers: name the project folder or --wing it applies to"
                );
            }
            let request = mempalace::core::palace::SyncRequest {
                project_dir: dir,
                wing,
                apply,
            };
            let report = mempalace::ingest::sync::sync(&palace, &request).await?;
            if json {
                print_json(&report)?;
            } else {
                print!("{}", render::sync(&report, &palace_path));
            }
        }
        Command::Status { json } => {
            let status = palace.status().await?;
            if json {
                print_json(&status)?;
            } else {
                let taxonomy = match &status {
                    Status::Ready(_) => palace.taxonomy().await?.taxonomy,
                    Status::NoPalace(_) => Default::default(),
                };
                print!("{}", render::status(&status, &taxonomy));
            }
        }
        Command::WakeUp {
            wing,
            tokens,
            identity,
            json,
        } => {
            let request = mempalace::core::wake_up::WakeUpRequest {
                wing: wing.clone(),
                l1_tokens: tokens,
                identity_path: identity,
            };
            let woken = palace.wake_up(&request).await?;
            if json {
                print_json(&woken)?;
            } else {
                println!(
                    "Wake-up text ({} tokens, {}):",
                    woken.tokens, woken.token_counter
                );
                println!("{}", "=".repeat(50));
                println!("{}", render::terminal_safe_block(&woken.text));
            }
        }
        Command::Compress {
            wing,
            room,
            limit,
            json,
        } => {
            let report = palace
                .compress(wing.as_deref(), room.as_deref(), limit)
                .await?;
            if json {
                print_json(&report)?;
            } else {
                for d in &report.drawers {
                    println!("{}", render::terminal_safe_block(&d.aaak));
                }
                println!(
                    "\n{} drawer(s): {} tokens of text → {} tokens of AAAK ({}×, {}; entity codes: {})",
                    report.drawers.len(),
                    report.original_tokens,
                    report.aaak_tokens,
                    report.size_ratio,
                    report.token_counter,
                    render::terminal_safe(&report.entity_codes)
                );
            }
        }
        Command::Kg(cmd) => kg(&palace, cmd).await?,
        Command::Sweep { target, json } => {
            let settings =
                HookSettings::from_env(&palace_path, &mempalace::core::locations::config_dir());
            match mempalace::ingest::hooks::sweep::sweep(&palace, &target, &settings).await {
                Err(e) => {
                    eprintln!("ERROR: {}", render::terminal_safe(&e.to_string()));
                    std::process::exit(1);
                }
                Ok(report) => {
                    if json {
                        print_json(&report)?;
                    } else {
                        print!("{}", render::sweep(&report));
                    }
                    if report.failed > 0 {
                        eprintln!(
                            "WARNING: {} file(s) failed to sweep (see above); sweep again to retry",
                            report.failed
                        );
                        std::process::exit(2);
                    }
                }
            }
        }
        Command::Logstream(cmd) => {
            exit_unless_done(coordination_commands::logstream(&palace, cmd).await)
        }
        Command::Task(cmd) => exit_unless_done(coordination_commands::task(&palace, cmd).await),
        Command::Artifact(cmd) => {
            exit_unless_done(coordination_commands::artifact(&palace, cmd).await)
        }
        Command::Hallways {
            wing,
            rebuild,
            limit,
            json,
            prune_spellings,
            yes,
        } => {
            if rebuild {
                palace_links_commands::rebuild_hallways(&palace, wing.as_deref(), json).await?
            } else if prune_spellings {
                palace_links_commands::prune_hallway_spellings(&palace, yes, json).await?
            } else {
                palace_links_commands::hallways(&palace, wing.as_deref(), limit, json).await?
            }
        }
        Command::Tunnels(cmd) => palace_links_commands::tunnels(&palace, cmd).await?,
        Command::Audit {
            json,
            quiet: _,
            fail_under,
        } => {
            let report = palace.audit().await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", render::audit(&report));
            }
            let overall = mempalace::core::palace_audit::overall_score(&report);
            if let (Some(floor), Some(score)) = (fail_under, overall)
                && score < floor
            {
                std::process::exit(2);
            }
        }
        Command::MigrateWings { dry_run, yes, json } => {
            wing_commands::migrate_wings(&palace, dry_run, yes, json).await?
        }
        Command::Wings(cmd) => exit_unless_done(wing_commands::wings(&palace, cmd).await?),
        Command::Rooms(cmd) => exit_unless_done(wing_commands::rooms(&palace, cmd).await?),
        Command::Export {
            file,
            no_vectors,
            json,
        } => palace_transfer_commands::export(&palace, &file, no_vectors, json).await?,
        Command::Import { file, json } => {
            palace_transfer_commands::import(&palace, &file, json).await?
        }
        Command::Backup { dest, json } => {
            let report = palace.backup(&dest).await?;
            if json {
                print_json(&report)?;
            } else {
                println!(
                    "Backed up to {}: {}",
                    render::terminal_safe(&report.path.display().to_string()),
                    report.parts.join(", ")
                );
            }
        }
        Command::Verify { json } => {
            let report = palace.verify().await?;
            if json {
                print_json(&report)?;
            } else {
                print!("{}", render::verify_report(&report));
            }
            if !report.sound {
                std::process::exit(1);
            }
        }
        Command::Repair { json } => {
            let report = palace.repair().await?;
            if json {
                print_json(&report)?;
            } else {
                print!("{}", render::repair_report(&report));
            }
            if !report.after.sound {
                std::process::exit(1);
            }
        }
        Command::RepairStatus { json } => {
            let report = palace.repair_status().await?;
            if json {
                print_json(&report)?;
            } else {
                print!("{}", render::repair_status(&report));
            }
        }
        Command::Split { .. } | Command::Instructions { .. } | Command::Rules { .. } => {
            // Answered above, before the palace was opened.
        }
        Command::Hook(cmd) => hook(&palace, &palace_path, cmd, &forwarded).await?,
        Command::Migrate {
            from,
            quiet,
            json,
            strict,
        } => {
            let progress = TerminalProgress::new(quiet || json);
            let report =
                mempalace::ingest::migrate::migrate(Arc::clone(&palace), &from, &progress).await?;
            if json {
                print_json(&report)?;
            } else {
                print!("{}", render::migration(&report));
            }
            let skipped = report.skipped.len() + report.closets_skipped.len();
            if strict && skipped > 0 {
                anyhow::bail!(
                    "--strict: {skipped} record(s) were skipped (listed above); everything else was migrated"
                );
            }
        }
        Command::Mcp(args) => {
            let warm = Arc::clone(&embedder);
            let warm_up = move || {
                tokio::spawn(async move {
                    if let Err(e) = warm.warm_up().await {
                        tracing::warn!(error = %e, "model not loaded yet; tools that embed will report it");
                    }
                });
            };
            match args.transport {
                Transport::Stdio => {
                    mcp::serve_stdio(palace, args.read_only, warm_up)
                        .await
                        .context("MCP server")?;
                }
                Transport::Http => {
                    let options = args.http_options().await?;
                    let server = mcp::MemPalaceServer::new(palace).read_only(args.read_only);
                    let mode = if args.read_only { " (read-only)" } else { "" };
                    let report = mcp::serve_http(server, options, |url| {
                        warm_up();
                        // The one line a supervisor or test reads to find the server.
                        eprintln!("MemPalace MCP server listening on {url}{mode}");
                    })
                    .await?;
                    if report.calls_unfinished > 0 {
                        anyhow::bail!(
                            "shut down with {} tool calls unfinished",
                            report.calls_unfinished
                        );
                    }
                    eprintln!("MemPalace MCP server stopped; every tool call finished");
                }
            }
        }
    }
    Ok(())
}

/// What a detached `hook finish` needs to open the same palace: the global flags, and the
/// settings that may hold secrets as environment variables (never on its command line).
fn forwarded_stack(stack: &StackArgs) -> mempalace_cli::hook_command::Forwarded {
    let mut args: Vec<std::ffi::OsString> = Vec::new();
    let mut flag = |name: &str, value: &std::ffi::OsStr| {
        let mut arg = std::ffi::OsString::from(format!("--{name}="));
        arg.push(value);
        args.push(arg);
    };
    if let Some(p) = &stack.palace {
        flag(
            "palace",
            std::path::absolute(p)
                .unwrap_or_else(|_| p.clone())
                .as_os_str(),
        );
    }
    if let Some(m) = &stack.model_dir {
        flag("model-dir", m.as_os_str());
    }
    if let Some(c) = &stack.collection {
        flag("collection", std::ffi::OsStr::new(c));
    }
    if let Some(b) = stack.backend {
        flag("backend", std::ffi::OsStr::new(b.flag_value()));
    }
    let mut env = Vec::new();
    let mut var = |name: &str, value: &Option<String>| {
        if let Some(v) = value {
            env.push((name.to_string(), v.clone()));
        }
    };
    var("QDRANT_URL", &stack.qdrant_url);
    var("QDRANT_API_KEY", &stack.qdrant_api_key);
    var("MEMPALACE_KG_POSTGRES_URL", &stack.kg_postgres_url);
    for (name, path) in [
        ("QDRANT_API_KEY_FILE", &stack.qdrant_api_key_file),
        (
            "MEMPALACE_KG_POSTGRES_URL_FILE",
            &stack.kg_postgres_url_file,
        ),
        ("MEMPALACE_KG_POSTGRES_CA_FILE", &stack.kg_postgres_ca_file),
    ] {
        if let Some(p) = path {
            env.push((name.to_string(), p.display().to_string()));
        }
    }
    mempalace_cli::hook_command::Forwarded { args, env }
}

/// Starts the detached half of a session-end, and logs how that went.
fn start_detached(
    work: &DetachedFiling,
    settings: &HookSettings,
    forwarded: &mempalace_cli::hook_command::Forwarded,
) {
    let state = HookState::new(&settings.state_dir);
    let spawned = std::env::current_exe().and_then(|program| {
        mempalace_cli::hook_command::spawn_detached(&program, forwarded, work, &state)
    });
    match spawned {
        Ok(pid) => state.log(&format!(
            "Transcript filing started (pid {pid}): {}",
            work.transcript.display()
        )),
        Err(e) => state.log(&format!("transcript filing not started: {e}")),
    }
}

async fn hook(
    palace: &Arc<Palace>,
    palace_path: &std::path::Path,
    cmd: HookCommand,
    forwarded: &mempalace_cli::hook_command::Forwarded,
) -> Result<()> {
    let config_dir = mempalace::core::locations::config_dir();
    let settings = HookSettings::from_env(palace_path, &config_dir);
    match cmd {
        HookCommand::Run { hook, harness } => {
            let payload = mempalace_cli::hook_command::read_payload();
            // Whatever happens inside (a panic in a dependency, a hang past the deadline), the
            // harness gets an answer in time.
            let limit = settings.deadline + std::time::Duration::from_secs(10);
            let (palace, task_settings) = (Arc::clone(palace), settings.clone());
            let task = tokio::spawn(async move {
                run_hook(
                    &palace,
                    hook.into(),
                    harness.into(),
                    &payload,
                    &task_settings,
                )
                .await
            });
            let state = HookState::new(&settings.state_dir);
            let answer = match tokio::time::timeout(limit, task).await {
                Ok(Ok(run)) => {
                    if let Some(work) = &run.detached {
                        start_detached(work, &settings, forwarded);
                    }
                    run.answer
                }
                Ok(Err(e)) => {
                    state.log(&format!("hook failed: {e}"));
                    HookAnswer::Nothing
                }
                Err(_) => {
                    state.log(&format!("hook stopped after {} s", limit.as_secs()));
                    HookAnswer::Nothing
                }
            };
            mempalace_cli::hook_command::print_answer(&answer);
        }
        HookCommand::Finish { work } => {
            let work: DetachedFiling =
                serde_json::from_str(&work).context("hook finish: the work is not valid")?;
            let filing = finish_detached(palace, &work, &settings).await;
            print_json(&filing)?;
        }
        HookCommand::Install {
            harness,
            dry_run,
            command,
        } => {
            let program = match command {
                Some(c) => c,
                None => std::env::current_exe()
                    .context("cannot tell this binary's path; give --command")?
                    .display()
                    .to_string(),
            };
            let plan = mempalace::ingest::hooks::install::plan_install(
                harness.into(),
                &settings.home,
                &program,
            )?;
            let file = plan.settings_file.display();
            if !plan.changes() {
                println!("{file} already runs MemPalace's hooks; nothing to change");
            } else if dry_run {
                println!("Would change {file}:");
                print!("{}", plan.diff());
            } else {
                plan.write()?;
                println!("Updated {file}:");
                print!("{}", plan.diff());
            }
            for note in &plan.notes {
                println!("note: {note}");
            }
        }
    }
    Ok(())
}

async fn kg(palace: &Palace, cmd: KgCommand) -> Result<()> {
    match cmd {
        KgCommand::Query {
            entity,
            as_of,
            direction,
            json,
        } => {
            let d: Direction = direction.parse()?;
            let r = palace.kg_query(&entity, as_of.as_deref(), d).await?;
            if json {
                print_json(&r)?;
            } else {
                print!("{}", render::facts(&r.facts));
            }
        }
        KgCommand::Add {
            subject,
            predicate,
            object,
            valid_from,
            valid_to,
            confidence,
            source_closet,
        } => {
            let mut t = NewTriple::new(subject, predicate, object);
            t.valid_from = valid_from;
            t.valid_to = valid_to;
            t.confidence = confidence;
            t.source_closet = source_closet;
            print_json(&palace.kg_add(t).await?)?;
        }
        KgCommand::Invalidate {
            subject,
            predicate,
            object,
            ended,
        } => {
            print_json(
                &palace
                    .kg_invalidate(&subject, &predicate, &object, ended.as_deref())
                    .await?,
            )?;
        }
        KgCommand::Supersede {
            subject,
            predicate,
            old_object,
            new_object,
            at,
        } => {
            print_json(
                &palace
                    .kg_supersede(Supersede {
                        subject,
                        predicate,
                        old_object,
                        new_object,
                        at,
                        confidence: 1.0,
                        source_closet: None,
                    })
                    .await?,
            )?;
        }
        KgCommand::Timeline {
            entity,
            limit,
            json,
        } => {
            let r = palace
                .kg_timeline(entity.as_deref(), Page { offset: 0, limit })
                .await?;
            if json {
                print_json(&r)?;
            } else {
                print!("{}", render::facts(&r.timeline));
            }
        }
        KgCommand::Stats => print_json(&palace.kg_stats().await?)?,
    }
    Ok(())
}

/// A cancellation Ctrl-C raises: long work stops after the step in flight.
/// Ends the process with `code` unless it is 0 (coordination commands answer 2 for a timeout).
fn exit_unless_done(code: mempalace_cli::coordination_commands::ExitCode) {
    if code != 0 {
        std::process::exit(code);
    }
}

fn ctrl_c_cancels() -> Cancellation {
    let cancel = Cancellation::new();
    let raise = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("stopping after the batches in flight…");
            raise.cancel();
        }
    });
    cancel
}

/// What `mine` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum MineModeArg {
    /// A project's text files.
    Projects,
    /// Chat exports and transcripts.
    Convos,
}

/// How conversations become drawers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Extract {
    /// Whole exchanges in topic rooms.
    Exchange,
    /// Extracted memories in rooms of their kind.
    General,
}

impl From<Extract> for ExtractMode {
    fn from(e: Extract) -> Self {
        match e {
            Extract::Exchange => ExtractMode::Exchange,
            Extract::General => ExtractMode::General,
        }
    }
}

/// `--backend`: which vector store holds a new palace's drawers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum BackendArg {
    /// Embedded LanceDB in the palace folder (the default).
    Lancedb,
    /// A Qdrant server.
    Qdrant,
}

impl BackendArg {
    /// The value `--backend` takes for it (as clap spells it).
    fn flag_value(self) -> &'static str {
        match self {
            BackendArg::Lancedb => "lancedb",
            BackendArg::Qdrant => "qdrant",
        }
    }
}

impl From<BackendArg> for BackendKind {
    fn from(b: BackendArg) -> Self {
        match b {
            BackendArg::Lancedb => BackendKind::Lancedb,
            BackendArg::Qdrant => BackendKind::Qdrant,
        }
    }
}

/// `--chunking` of `mine`: how files are cut into drawers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ChunkingArg {
    /// Whole lines and sentences, each chunk headed by the file's title and section (the
    /// default).
    Context,
    /// MemPalace 3.11's plain 800-character windows.
    Plain,
}

impl From<ChunkingArg> for Chunking {
    fn from(c: ChunkingArg) -> Self {
        match c {
            ChunkingArg::Context => Chunking::Context,
            ChunkingArg::Plain => Chunking::Plain,
        }
    }
}
