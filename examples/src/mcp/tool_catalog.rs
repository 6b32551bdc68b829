//! The tool list `tools/list` answers: names, descriptions and input schemas.

use std::sync::Arc;

use rmcp::model::Tool;
use schemars::JsonSchema;
use serde_json::{Map, Value};

use super::tool_args::*;

/// The JSON schema of `T` as a tool input schema (an object schema, no `$schema`/`title`).
fn schema<T: JsonSchema>() -> Arc<Map<String, Value>> {
    let mut value = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    let mut map = value
        .as_object_mut()
        .map(std::mem::take)
        .unwrap_or_default();
    map.remove("$schema");
    map.remove("title");
    map.entry("type").or_insert(Value::String("object".into()));
    map.entry("properties").or_insert(Value::Object(Map::new()));
    Arc::new(map)
}

fn tool<T: JsonSchema>(name: &'static str, description: &'static str) -> Tool {
    Tool::new(name, description, schema::<T>())
}

/// Every tool the server offers.
pub fn tools() -> Vec<Tool> {
    vec![
        tool::<NoArgs>(
            "mempalace_status",
            "Palace overview: total drawers, drawers per wing and room, the memory protocol and the AAAK dialect. Call this on wake-up.",
        ),
        tool::<NoArgs>(
            "mempalace_list_wings",
            "All wings with their drawer counts.",
        ),
        tool::<ListRoomsArgs>(
            "mempalace_list_rooms",
            "Rooms with their drawer counts, in one wing or in all.",
        ),
        tool::<NoArgs>(
            "mempalace_get_taxonomy",
            "The full wing → room → drawer count tree.",
        ),
        tool::<NoArgs>(
            "mempalace_get_aaak_spec",
            "The AAAK compressed memory dialect specification.",
        ),
        tool::<SearchArgs>(
            "mempalace_search",
            "Semantic search over drawers, optionally within a wing and/or room. Returns verbatim text with wing, room, source file and similarity.",
        ),
        tool::<CheckDuplicateArgs>(
            "mempalace_check_duplicate",
            "Whether content is already filed: drawers with similarity at or above the threshold.",
        ),
        tool::<AddDrawerArgs>(
            "mempalace_add_drawer",
            "File verbatim content into a wing and room. Refused (success false, reason duplicate) when a drawer with similarity ≥ 0.9 exists.",
        ),
        tool::<DrawerIdArgs>("mempalace_get_drawer", "One drawer in full, by id."),
        tool::<ListDrawersArgs>(
            "mempalace_list_drawers",
            "Drawers of a wing and/or room, a page at a time, with content previews.",
        ),
        tool::<DrawerIdArgs>("mempalace_delete_drawer", "Delete a drawer by id."),
        tool::<KgQueryArgs>(
            "mempalace_kg_query",
            "Facts about an entity from the knowledge graph, optionally as of a date, outgoing, incoming or both.",
        ),
        tool::<KgAddArgs>(
            "mempalace_kg_add",
            "Add a fact (subject → predicate → object) with optional validity dates, confidence and source drawer.",
        ),
        tool::<KgInvalidateArgs>(
            "mempalace_kg_invalidate",
            "Mark a fact as no longer true from a date (kept as history, never deleted).",
        ),
        tool::<KgSupersedeArgs>(
            "mempalace_kg_supersede",
            "Replace a single-valued fact: the old value ends and the new one starts at the same moment, in one step.",
        ),
        tool::<KgTimelineArgs>(
            "mempalace_kg_timeline",
            "Facts in chronological order, of one entity or of all.",
        ),
        tool::<NoArgs>(
            "mempalace_kg_stats",
            "Knowledge graph size: entities, facts, current and expired, relationship types.",
        ),
        tool::<DiaryWriteArgs>(
            "mempalace_diary_write",
            "Write an entry in the agent's diary (wing_<agent>/diary).",
        ),
        tool::<DiaryReadArgs>("mempalace_diary_read", "The agent's newest diary entries."),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_parses_and_has_an_object_schema() {
        let tools = tools();
        assert_eq!(tools.len(), 19);
        for t in &tools {
            assert_eq!(
                t.input_schema.get("type").and_then(|v| v.as_str()),
                Some("object"),
                "{}",
                t.name
            );
            // Every listed tool is known to the parser (it may reject empty arguments, not the name).
            let parsed = super::super::tool_call::ToolCall::parse(&t.name, None);
            assert!(
                !matches!(parsed, Err(super::super::ToolCallError::UnknownTool(_))),
                "{}",
                t.name
            );
        }
        let search = tools.iter().find(|t| t.name == "mempalace_search").unwrap();
        let props = search.input_schema["properties"].as_object().unwrap();
        for field in ["query", "limit", "wing", "room"] {
            assert!(props.contains_key(field), "{field}");
        }
        assert_eq!(
            search.input_schema["required"],
            serde_json::json!(["query"])
        );
    }
}
