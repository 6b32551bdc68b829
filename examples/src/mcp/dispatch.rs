//! Running a parsed tool call against the palace: each tool is one Palace method.

use mempalace_core::knowledge_graph::Supersede;
use mempalace_core::palace::NewDrawer;
use mempalace_core::{
    AAAK_SPEC, AddedBy, Direction, NewTriple, Page, Palace, PalaceError, Result, SearchMode,
    SearchRequest,
};
use serde::Serialize;
use serde_json::{Value, json};

use super::tool_call::ToolCall;

fn to_value<T: Serialize>(v: T) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| PalaceError::invalid("result", e.to_string()))
}

fn direction(d: Option<&str>) -> Result<Direction> {
    d.map_or(Ok(Direction::Both), str::parse)
}

/// Runs `call` and returns the method's JSON.
pub async fn dispatch(palace: &Palace, call: ToolCall) -> Result<Value> {
    match call {
        ToolCall::Status => to_value(palace.status().await?),
        ToolCall::ListWings => to_value(palace.list_wings().await?),
        ToolCall::ListRooms(a) => to_value(palace.list_rooms(a.wing.as_deref()).await?),
        ToolCall::GetTaxonomy => to_value(palace.taxonomy().await?),
        ToolCall::GetAaakSpec => Ok(json!({ "aaak_spec": AAAK_SPEC })),
        ToolCall::Search(a) => {
            let request = SearchRequest {
                query: a.query,
                wing: a.wing,
                room: a.room,
                source_file: a.source_file,
                since: a.since,
                before: a.before,
                max_distance: a.max_distance,
                limit: a.limit as usize,
                mode: a
                    .mode
                    .as_deref()
                    .map_or(Ok(SearchMode::Hybrid), str::parse)?,
            };
            to_value(palace.search_with(&request).await?)
        }
        ToolCall::CheckDuplicate(a) => {
            to_value(palace.check_duplicate(&a.content, a.threshold).await?)
        }
        ToolCall::AddDrawer(a) => {
            let mut d = NewDrawer::new(a.wing, a.room, a.content);
            d.source_file = a.source_file;
            d.added_by = a
                .added_by
                .as_deref()
                .map_or(AddedBy::Mcp, AddedBy::parse_lenient);
            to_value(palace.add_drawer(d).await?)
        }
        ToolCall::GetDrawer(a) => to_value(palace.get_drawer(&a.drawer_id).await?),
        ToolCall::ListDrawers(a) => to_value(
            palace
                .list_drawers(
                    a.wing.as_deref(),
                    a.room.as_deref(),
                    Page {
                        offset: a.offset as usize,
                        limit: a.limit as usize,
                    },
                )
                .await?,
        ),
        ToolCall::DeleteDrawer(a) => to_value(palace.delete_drawer(&a.drawer_id).await?),
        ToolCall::KgQuery(a) => {
            let d = direction(a.direction.as_deref())?;
            to_value(palace.kg_query(&a.entity, a.as_of.as_deref(), d).await?)
        }
        ToolCall::KgAdd(a) => {
            let mut t = NewTriple::new(a.subject, a.predicate, a.object);
            t.valid_from = a.valid_from;
            t.valid_to = a.valid_to;
            t.confidence = a.confidence;
            t.source_closet = a.source_closet;
            t.source_file = a.source_file;
            t.source_drawer_id = a.source_drawer_id;
            to_value(palace.kg_add(t).await?)
        }
        ToolCall::KgInvalidate(a) => to_value(
            palace
                .kg_invalidate(&a.subject, &a.predicate, &a.object, a.ended.as_deref())
                .await?,
        ),
        ToolCall::KgSupersede(a) => to_value(
            palace
                .kg_supersede(Supersede {
                    subject: a.subject,
                    predicate: a.predicate,
                    old_object: a.old_object,
                    new_object: a.new_object,
                    at: a.at,
                    confidence: a.confidence,
                    source_closet: a.source_closet,
                })
                .await?,
        ),
        ToolCall::KgTimeline(a) => to_value(
            palace
                .kg_timeline(
                    a.entity.as_deref(),
                    Page {
                        offset: a.offset as usize,
                        limit: a.limit as usize,
                    },
                )
                .await?,
        ),
        ToolCall::KgStats => to_value(palace.kg_stats().await?),
        ToolCall::DiaryWrite(a) => to_value(
            palace
                .diary_write(&a.agent_name, &a.entry, a.topic.as_deref())
                .await?,
        ),
        ToolCall::DiaryRead(a) => {
            to_value(palace.diary_read(&a.agent_name, a.last_n as usize).await?)
        }
    }
}
