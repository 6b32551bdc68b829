//! Filing conversations through the Palace: only new turns are filed when a transcript grows,
//! drawers remember who spoke when, `--extract general` files memories in rooms of their kind,
//! and search's since/before bounds read when the words were written.

use std::sync::Arc;

use mempalace_conformance::HashingEmbedder;
use mempalace_core::conversations::conversation_drawers::ConversationFiling;
use mempalace_core::conversations::{Conversation, ExtractMode, Role, Turn};
use mempalace_core::{DrawerFilter, MemoryStore, Page, Palace, SearchRequest};
use mempalace_kg_sqlite::SqliteKnowledgeGraph;

const DIM: usize = 384;

fn palace() -> (Arc<Palace>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("palace");
    let palace = Palace::new(
        &path,
        Arc::new(HashingEmbedder::new(DIM)),
        Arc::new(MemoryStore::new(DIM)),
        Arc::new(SqliteKnowledgeGraph::in_palace(&path)),
    )
    .unwrap();
    (Arc::new(palace), dir)
}

fn turn(role: Role, text: &str, at: &str) -> Turn {
    Turn {
        role,
        text: text.to_string(),
        authored_at: Some(at.to_string()),
    }
}

/// A conversation with `exchanges` question-and-answer pairs on `day` (`2025-01-DD`).
fn conversation(id: &str, day: u32, exchanges: usize) -> Conversation {
    let mut turns = Vec::new();
    for i in 0..exchanges {
        let at = |m: usize| format!("2025-01-{day:02}T10:{:02}:00", m);
        turns.push(turn(
            Role::User,
            &format!("Question {i} about the database schema migration for day {day}?"),
            &at(2 * i),
        ));
        turns.push(turn(
            Role::Assistant,
            &format!(
                "Answer {i}: run the migration in a transaction, then verify the row counts. {}",
                "Details follow. ".repeat(30)
            ),
            &at(2 * i + 1),
        ));
    }
    Conversation {
        id: id.to_string(),
        title: Some(format!("Migrations, day {day}")),
        turns,
    }
}

fn filing(extract: ExtractMode) -> ConversationFiling {
    ConversationFiling {
        wing: "chats".into(),
        source_file: "/exports/session.jsonl".into(),
        extract,
    }
}

#[tokio::test]
async fn a_grown_transcript_files_only_its_new_exchanges() {
    let (p, _dir) = palace();
    let f = filing(ExtractMode::Exchange);
    let first = p
        .file_conversation(&conversation("s1", 5, 2), &f)
        .await
        .unwrap();
    assert_eq!(first.conversations_grown, 1);
    assert_eq!((first.new_turns, first.new_exchanges), (4, 2));
    let all = DrawerFilter::wing("chats");
    let before: Vec<_> = p.store().list(&all, Page::first(100)).await.unwrap();
    assert_eq!(before.len() as u64, first.drawers_filed);

    // The same transcript again: nothing to file.
    let again = p
        .file_conversation(&conversation("s1", 5, 2), &f)
        .await
        .unwrap();
    assert_eq!((again.conversations_unchanged, again.drawers_filed), (1, 0));

    // It grew by one exchange: one exchange filed, the old drawers untouched.
    let grown = p
        .file_conversation(&conversation("s1", 5, 3), &f)
        .await
        .unwrap();
    assert_eq!((grown.new_turns, grown.new_exchanges), (2, 1));
    let after = p.store().list(&all, Page::first(100)).await.unwrap();
    assert_eq!(
        after.len() as u64,
        first.drawers_filed + grown.drawers_filed
    );
    for old in &before {
        let kept = after
            .iter()
            .find(|d| d.id == old.id)
            .expect("old drawer kept");
        assert_eq!(kept, old);
    }
    let new: Vec<_> = after
        .iter()
        .filter(|d| !before.iter().any(|b| b.id == d.id))
        .collect();
    let c = new[0].metadata.conversation.as_ref().unwrap();
    assert_eq!((c.first_turn, c.last_turn), (4, 5));
    assert_eq!(c.speakers, ["user", "assistant"]);
    assert_eq!(c.id, "s1");
    assert_eq!(c.title.as_deref(), Some("Migrations, day 5"));
    assert_eq!(
        new[0].metadata.authored_at.as_deref(),
        Some("2025-01-05T10:04:00")
    );
    assert_eq!(c.authored_until.as_deref(), Some("2025-01-05T10:05:00"));
    // One conversation stays in one room.
    assert!(
        after
            .iter()
            .all(|d| d.metadata.room == before[0].metadata.room)
    );
}

#[tokio::test]
async fn a_question_filed_before_its_reply_is_filed_again_with_it() {
    let (p, _dir) = palace();
    let f = filing(ExtractMode::Exchange);
    let mut live = conversation("live", 7, 2);
    let reply = live.turns.pop().unwrap();
    // Mined while the assistant is still answering: the last question stands alone.
    p.file_conversation(&live, &f).await.unwrap();
    let all = DrawerFilter::wing("chats");
    let before = p.store().list(&all, Page::first(100)).await.unwrap();
    assert!(before.iter().any(|d| d.text.ends_with("for day 7?")));
    live.turns.push(reply);
    let grown = p.file_conversation(&live, &f).await.unwrap();
    assert_eq!(grown.new_turns, 1);
    let after = p.store().list(&all, Page::first(100)).await.unwrap();
    let asking: Vec<_> = after
        .iter()
        .filter(|d| d.text.contains("> Question 1"))
        .collect();
    assert_eq!(asking.len(), 1, "the question is filed once: {after:#?}");
    assert!(asking[0].text.contains("Answer 1:"), "{}", asking[0].text);
    assert_eq!(
        asking[0].metadata.conversation.as_ref().unwrap().last_turn,
        3
    );
    assert!(
        after.iter().all(|d| d.text.contains("Answer")),
        "no lone question is left"
    );
    // And again: nothing new.
    let again = p.file_conversation(&live, &f).await.unwrap();
    assert_eq!(again.drawers_filed, 0);
}

#[tokio::test]
async fn an_assistant_turn_that_went_on_after_filing_is_filed_whole() {
    let (p, _dir) = palace();
    let f = filing(ExtractMode::Exchange);
    let mut live = Conversation {
        id: "tool-loop".into(),
        title: None,
        turns: vec![
            turn(
                Role::User,
                "Why is the build failing?",
                "2025-03-01T10:00:00",
            ),
            turn(
                Role::Assistant,
                "Let me look.\n[Bash] cargo build",
                "2025-03-01T10:00:02",
            ),
        ],
    };
    p.file_conversation(&live, &f).await.unwrap();
    // The agent's tool loop went on: the same turn, longer.
    live.turns[1]
        .text
        .push_str("\n→ error[E0432]: unresolved import\nFINAL ANSWER: a missing feature flag.");
    let grown = p.file_conversation(&live, &f).await.unwrap();
    assert_eq!(grown.drawers_filed, 1, "{grown:?}");
    let all = p
        .store()
        .list(&DrawerFilter::wing("chats"), Page::first(10))
        .await
        .unwrap();
    assert_eq!(all.len(), 1, "replaced under the same id");
    assert!(all[0].text.contains("FINAL ANSWER"));
    let again = p.file_conversation(&live, &f).await.unwrap();
    assert_eq!((again.drawers_filed, again.conversations_unchanged), (0, 1));
}

#[tokio::test]
async fn a_turn_of_mostly_white_space_files_and_does_not_stop_the_batch() {
    let (p, _dir) = palace();
    let f = filing(ExtractMode::Exchange);
    let odd = Conversation {
        id: "odd".into(),
        title: None,
        turns: vec![
            turn(Role::User, "Paste?", "2025-03-01T10:00:00"),
            turn(
                Role::Assistant,
                &format!("start{}end", " ".repeat(2000)),
                "2025-03-01T10:00:01",
            ),
        ],
    };
    let mut progress = Default::default();
    let filed = p
        .file_conversations(&[odd, conversation("fine", 2, 1)], &f, &mut progress)
        .await
        .unwrap();
    assert_eq!(filed.conversations_grown, 2);
    let all = p
        .store()
        .list(&DrawerFilter::wing("chats"), Page::first(20))
        .await
        .unwrap();
    assert!(all.iter().all(|d| !d.text.trim().is_empty()));
    assert!(all.iter().any(|d| d.text.contains("end")));
}

#[tokio::test]
async fn two_files_holding_one_conversation_keep_their_own_drawers() {
    let (p, _dir) = palace();
    let f = filing(ExtractMode::Exchange);
    let mut other = f.clone();
    other.source_file = "/downloads/export-2/conversations.json".into();
    // The old download holds a prefix of the conversation the new one holds.
    let old = conversation("chatgpt-1", 9, 2);
    let new = conversation("chatgpt-1", 9, 3);
    for _ in 0..2 {
        p.file_conversation(&old, &f).await.unwrap();
        p.file_conversation(&new, &other).await.unwrap();
    }
    let texts = |source: &str| {
        let source = source.to_string();
        let p = Arc::clone(&p);
        async move {
            p.store()
                .list(
                    &DrawerFilter::wing("chats").with_source_file(source),
                    Page::first(100),
                )
                .await
                .unwrap()
                .into_iter()
                .map(|d| d.text)
                .collect::<Vec<_>>()
        }
    };
    let in_new = texts(&other.source_file).await;
    assert!(
        in_new.iter().any(|t| t.contains("Question 2")),
        "{in_new:#?}"
    );
    let in_old = texts(&f.source_file).await;
    assert!(in_old.iter().all(|t| !t.contains("Question 2")));
    // Mining both again changes nothing.
    assert_eq!(
        p.file_conversation(&old, &f).await.unwrap().drawers_filed,
        0
    );
    assert_eq!(
        p.file_conversation(&new, &other)
            .await
            .unwrap()
            .drawers_filed,
        0
    );
}

#[tokio::test]
async fn an_exchange_that_changes_kind_as_it_grows_leaves_no_stale_memory() {
    let (p, _dir) = palace();
    let f = filing(ExtractMode::General);
    let mut c = Conversation {
        id: "kind".into(),
        title: None,
        turns: vec![
            turn(
                Role::User,
                "The deploy keeps failing with a crash in the worker, any idea?",
                "2025-03-01T10:00:00",
            ),
            turn(
                Role::Assistant,
                "The bug is an error in the pool: the worker crashes when the broken connection fails.",
                "2025-03-01T10:00:05",
            ),
        ],
    };
    p.file_conversation(&c, &f).await.unwrap();
    let rooms = |p: Arc<Palace>| async move {
        p.store()
            .list(&DrawerFilter::wing("chats"), Page::first(10))
            .await
            .unwrap()
            .into_iter()
            .map(|d| d.metadata.room)
            .collect::<Vec<_>>()
    };
    assert_eq!(rooms(Arc::clone(&p)).await, ["problem"]);
    c.turns[1].text.push_str(" Fixed it: it works now, finally solved, I am so happy and proud, amazing, wonderful, we love it.");
    p.file_conversation(&c, &f).await.unwrap();
    let after = rooms(Arc::clone(&p)).await;
    assert_eq!(after.len(), 1, "the old kind's drawer is gone: {after:?}");
    assert_ne!(after[0], "problem");
}

#[tokio::test]
async fn since_and_before_read_when_the_words_were_written() {
    let (p, _dir) = palace();
    let f = filing(ExtractMode::Exchange);
    for (id, day) in [("a", 3), ("b", 10), ("c", 20)] {
        let mut f = f.clone();
        f.source_file = format!("/exports/{id}.jsonl");
        p.file_conversation(&conversation(id, day, 2), &f)
            .await
            .unwrap();
    }
    let mut request = SearchRequest::new("database schema migration").limit(20);
    request.since = Some("2025-01-08".into());
    request.before = Some("2025-01-15".into());
    let hits = p.search_with(&request).await.unwrap().results;
    assert!(!hits.is_empty());
    for h in &hits {
        let at = h.authored_at.as_deref().unwrap();
        assert!(at.starts_with("2025-01-10"), "{at}");
        assert_eq!(h.conversation.as_ref().unwrap().id, "b");
    }
    // Without bounds all three days are found; filing time (today) alone would match none of
    // a January window.
    let mut all = SearchRequest::new("database schema migration").limit(50);
    all.since = Some("2025-01-01".into());
    let days: std::collections::BTreeSet<String> = p
        .search_with(&all)
        .await
        .unwrap()
        .results
        .iter()
        .map(|h| h.authored_at.clone().unwrap()[..10].to_string())
        .collect();
    assert_eq!(days.len(), 3);
}

#[tokio::test]
async fn general_extraction_files_decisions_in_their_own_room() {
    let (p, _dir) = palace();
    let f = filing(ExtractMode::General);
    let c = Conversation {
        id: "g".into(),
        title: None,
        turns: vec![
            turn(
                Role::User,
                "Should the queue live in Postgres or Redis?",
                "2025-02-01T09:00:00",
            ),
            turn(
                Role::Assistant,
                "We decided to go with Postgres because the team knows it and the trade-off on write speed is fine.",
                "2025-02-01T09:00:10",
            ),
            turn(Role::User, "Thanks, see you.", "2025-02-01T09:01:00"),
            turn(Role::Assistant, "Bye.", "2025-02-01T09:01:05"),
        ],
    };
    let filed = p.file_conversation(&c, &f).await.unwrap();
    assert_eq!(filed.drawers_filed, 1, "the small talk is no memory");
    let drawers = p
        .store()
        .list(&DrawerFilter::wing("chats"), Page::first(10))
        .await
        .unwrap();
    assert_eq!(drawers[0].metadata.room, "decision");
    assert!(drawers[0].text.contains("We decided to go with Postgres"));
    let r = drawers[0].metadata.conversation.as_ref().unwrap();
    assert_eq!(
        (r.first_turn, r.last_turn, r.extract),
        (0, 1, ExtractMode::General)
    );
    // Exchange mode on the same source is tracked apart.
    let exchange = p
        .file_conversation(&c, &filing(ExtractMode::Exchange))
        .await
        .unwrap();
    assert_eq!(exchange.new_turns, 4);
}

#[tokio::test]
async fn a_bad_wing_files_nothing() {
    let (p, _dir) = palace();
    let mut f = filing(ExtractMode::Exchange);
    f.wing = "bad\u{0}wing".into();
    assert!(
        p.file_conversation(&conversation("x", 1, 1), &f)
            .await
            .is_err()
    );
    assert_eq!(p.store().count(&DrawerFilter::all()).await.unwrap(), 0);
}
