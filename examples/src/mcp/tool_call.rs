//! Parsing a `tools/call` (name + JSON arguments) into a typed call, without touching the palace.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::tool_args::*;

/// A parsed tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCall {
    /// mempalace_status
    Status,
    /// mempalace_list_wings
    ListWings,
    /// mempalace_list_rooms
    ListRooms(ListRoomsArgs),
    /// mempalace_get_taxonomy
    GetTaxonomy,
    /// mempalace_get_aaak_spec
    GetAaakSpec,
    /// mempalace_search
    Search(SearchArgs),
    /// mempalace_check_duplicate
    CheckDuplicate(CheckDuplicateArgs),
    /// mempalace_add_drawer
    AddDrawer(AddDrawerArgs),
    /// mempalace_get_drawer
    GetDrawer(DrawerIdArgs),
    /// mempalace_list_drawers
    ListDrawers(ListDrawersArgs),
    /// mempalace_delete_drawer
    DeleteDrawer(DrawerIdArgs),
    /// mempalace_kg_query
    KgQuery(KgQueryArgs),
    /// mempalace_kg_add
    KgAdd(KgAddArgs),
    /// mempalace_kg_invalidate
    KgInvalidate(KgInvalidateArgs),
    /// mempalace_kg_supersede
    KgSupersede(KgSupersedeArgs),
    /// mempalace_kg_timeline
    KgTimeline(KgTimelineArgs),
    /// mempalace_kg_stats
    KgStats,
    /// mempalace_diary_write
    DiaryWrite(DiaryWriteArgs),
    /// mempalace_diary_read
    DiaryRead(DiaryReadArgs),
}

/// Why a call could not be parsed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolCallError {
    /// No tool has this name.
    #[error("Unknown tool: {0}")]
    UnknownTool(String),
    /// The arguments do not fit the tool's schema.
    #[error("Invalid arguments for {tool}: {message}")]
    BadArguments {
        /// The tool.
        tool: String,
        /// What is wrong.
        message: String,
    },
}

fn args<T: DeserializeOwned>(
    tool: &str,
    arguments: Option<Map<String, Value>>,
) -> Result<T, ToolCallError> {
    serde_json::from_value(Value::Object(arguments.unwrap_or_default())).map_err(|e| {
        ToolCallError::BadArguments {
            tool: tool.to_string(),
            message: e.to_string(),
        }
    })
}

impl ToolCall {
    /// Parses a call of tool `name` with `arguments` (absent arguments count as `{}`).
    pub fn parse(
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<ToolCall, ToolCallError> {
        let a = arguments;
        Ok(match name {
            "mempalace_status" => {
                args::<NoArgs>(name, a)?;
                ToolCall::Status
            }
            "mempalace_list_wings" => {
                args::<NoArgs>(name, a)?;
                ToolCall::ListWings
            }
            "mempalace_list_rooms" => ToolCall::ListRooms(args(name, a)?),
            "mempalace_get_taxonomy" => {
                args::<NoArgs>(name, a)?;
                ToolCall::GetTaxonomy
            }
            "mempalace_get_aaak_spec" => {
                args::<NoArgs>(name, a)?;
                ToolCall::GetAaakSpec
            }
            "mempalace_search" => ToolCall::Search(args(name, a)?),
            "mempalace_check_duplicate" => ToolCall::CheckDuplicate(args(name, a)?),
            "mempalace_add_drawer" => ToolCall::AddDrawer(args(name, a)?),
            "mempalace_get_drawer" => ToolCall::GetDrawer(args(name, a)?),
            "mempalace_list_drawers" => ToolCall::ListDrawers(args(name, a)?),
            "mempalace_delete_drawer" => ToolCall::DeleteDrawer(args(name, a)?),
            "mempalace_kg_query" => ToolCall::KgQuery(args(name, a)?),
            "mempalace_kg_add" => ToolCall::KgAdd(args(name, a)?),
            "mempalace_kg_invalidate" => ToolCall::KgInvalidate(args(name, a)?),
            "mempalace_kg_supersede" => ToolCall::KgSupersede(args(name, a)?),
            "mempalace_kg_timeline" => ToolCall::KgTimeline(args(name, a)?),
            "mempalace_kg_stats" => {
                args::<NoArgs>(name, a)?;
                ToolCall::KgStats
            }
            "mempalace_diary_write" => ToolCall::DiaryWrite(args(name, a)?),
            "mempalace_diary_read" => ToolCall::DiaryRead(args(name, a)?),
            other => {
                return Err(ToolCallError::UnknownTool(
                    other.chars().take(200).collect(),
                ));
            }
        })
    }

    /// Whether the call changes the palace.
    pub fn is_write(&self) -> bool {
        matches!(
            self,
            ToolCall::AddDrawer(_)
                | ToolCall::DeleteDrawer(_)
                | ToolCall::KgAdd(_)
                | ToolCall::KgInvalidate(_)
                | ToolCall::KgSupersede(_)
                | ToolCall::DiaryWrite(_)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Option<Map<String, Value>> {
        v.as_object().cloned()
    }

    #[test]
    fn parses_defaults_and_rejects_bad_types() {
        match ToolCall::parse("mempalace_search", obj(json!({"query": "q"}))).unwrap() {
            ToolCall::Search(s) => assert_eq!((s.limit, s.wing), (5, None)),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            ToolCall::parse("mempalace_status", None),
            Ok(ToolCall::Status)
        ));
        for bad in [
            json!({}),
            json!({"query": 5}),
            json!({"query": "q", "limit": -1}),
            json!({"query": "q", "limit": 1e20}),
        ] {
            assert!(
                matches!(
                    ToolCall::parse("mempalace_search", obj(bad.clone())),
                    Err(ToolCallError::BadArguments { .. })
                ),
                "{bad}"
            );
        }
        match ToolCall::parse(
            "mempalace_search",
            obj(json!({"query": "fox", "wnig": "nope"})),
        ) {
            Err(e @ ToolCallError::BadArguments { .. }) => {
                assert!(e.to_string().contains("wnig"), "{e}")
            }
            other => panic!("a misspelt argument must be refused: {other:?}"),
        }
        assert!(ToolCall::parse("mempalace_status", obj(json!({"verbose": true}))).is_err());
        assert!(matches!(
            ToolCall::parse("nope", None),
            Err(ToolCallError::UnknownTool(_))
        ));
    }
}
