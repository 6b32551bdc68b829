//! How an agent files its own conversation as it goes: after every exchange it hands the
//! whole transcript to `Palace::file_conversation`, which files only the turns not filed yet
//! (one drawer per exchange, with who spoke and when); later it asks what was said in a
//! period. Reading an export instead: `conversations::formats::read_conversations`.
//!
//! Run: `cargo run -p mempalace-agent-embedded --bin agent_transcript [PALACE]` (after
//! `scripts/fetch-model.sh`); without PALACE it uses a temporary folder.

use mempalace::core::conversations::conversation_drawers::ConversationFiling;
use mempalace::core::conversations::{Conversation, ExtractMode, Role, Turn};
use mempalace::core::temporal::{now_iso, today};
use mempalace::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let temporary = std::env::temp_dir().join(format!("agent-transcript-{}", std::process::id()));
    let folder = std::env::args().nth(1).map(Into::into).unwrap_or(temporary);
    let palace = mempalace::open(&folder).await?;

    let filing = ConversationFiling {
        wing: "wing_agent".into(),
        source_file: "session-2026-12-04".into(),
        extract: ExtractMode::Exchange,
    };
    let mut transcript = Conversation {
        id: "session-2026-12-04".into(),
        title: Some("Release planning".into()),
        turns: Vec::new(),
    };
    let now = || Some(now_iso());
    for (question, answer) in [
        (
            "Which database should the release use for the job queue?",
            "Postgres with SKIP LOCKED: the team already runs it, and 50k jobs a day is small.",
        ),
        (
            "And the retry policy?",
            "Exponential backoff with full jitter, capped at one hour, five attempts.",
        ),
    ] {
        transcript.turns.push(Turn {
            role: Role::User,
            text: question.into(),
            authored_at: now(),
        });
        transcript.turns.push(Turn {
            role: Role::Assistant,
            text: answer.into(),
            authored_at: now(),
        });
        // After each exchange: only the new turns are filed.
        let filed = palace.file_conversation(&transcript, &filing).await?;
        println!("filed: {}", serde_json::to_string(&filed)?);
    }

    let mut request = SearchRequest::new("what did we decide about the queue?").limit(1);
    request.wing = Some("wing_agent".into());
    request.since = Some(today());
    for hit in palace.search_with(&request).await?.results {
        let who = hit
            .conversation
            .map(|c| c.speakers.join(", "))
            .unwrap_or_default();
        println!(
            "{} ({who}):\n{}",
            hit.authored_at.unwrap_or_default(),
            hit.text
        );
    }
    Ok(())
}
