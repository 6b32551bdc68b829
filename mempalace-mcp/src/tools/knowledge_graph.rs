//! The knowledge graph: facts with time validity.

use mempalace_core::knowledge_graph::Supersede;
use mempalace_core::{Direction, NewTriple, Page};
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::MemPalaceServer;
use crate::answer::{ToolAnswer, read, write};
use crate::parameters::{NoArgs, Parameters};

/// `mempalace_kg_query`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KgQueryArgs {
    /// Entity to query (e.g. 'Max', 'MyProject', 'Alice'); case-insensitive.
    pub entity: String,
    /// Date filter: only facts valid at this instant (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ).
    #[serde(default)]
    pub as_of: Option<String>,
    /// "outgoing" (entity→?), "incoming" (?→entity) or "both" (default).
    #[serde(default)]
    pub direction: Option<String>,
}

fn default_confidence() -> f64 {
    1.0
}

/// `mempalace_kg_add`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KgAddArgs {
    /// The entity doing/being something.
    pub subject: String,
    /// The relationship type (e.g. 'loves', 'works_on', 'daughter_of').
    pub predicate: String,
    /// The entity being connected to.
    pub object: String,
    /// When this became true (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, optional).
    #[serde(default)]
    pub valid_from: Option<String>,
    /// When it stopped being true, same forms (omit for a current fact).
    #[serde(default)]
    pub valid_to: Option<String>,
    /// Confidence in [0, 1] (default 1.0).
    #[serde(default = "default_confidence")]
    pub confidence: f64,
    /// Closet or drawer id where this fact appears (optional).
    #[serde(default)]
    pub source_closet: Option<String>,
    /// The source file the fact was extracted from (optional).
    #[serde(default)]
    pub source_file: Option<String>,
    /// The drawer id the fact was extracted from (optional provenance).
    #[serde(default)]
    pub source_drawer_id: Option<String>,
}

/// `mempalace_kg_invalidate`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KgInvalidateArgs {
    /// Entity.
    pub subject: String,
    /// Relationship.
    pub predicate: String,
    /// Connected entity.
    pub object: String,
    /// When it stopped being true (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, default today).
    #[serde(default)]
    pub ended: Option<String>,
}

/// `mempalace_kg_supersede`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KgSupersedeArgs {
    /// The entity whose fact is changing.
    pub subject: String,
    /// The single-valued relationship that changes.
    pub predicate: String,
    /// The value being replaced.
    pub old_object: String,
    /// The new value.
    pub new_object: String,
    /// When the change happens, one instant for both facts: YYYY-MM-DD (its first second)
    /// or YYYY-MM-DDTHH:MM:SSZ (default now).
    #[serde(default)]
    pub at: Option<String>,
    /// Confidence of the new fact (default 1.0).
    #[serde(default = "default_confidence")]
    pub confidence: f64,
    /// The drawer id the change was learnt from.
    #[serde(default)]
    pub source_closet: Option<String>,
}

fn default_timeline_limit() -> u32 {
    100
}

/// `mempalace_kg_timeline`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KgTimelineArgs {
    /// Entity to get the timeline for (all facts when omitted).
    #[serde(default)]
    pub entity: Option<String>,
    /// Most facts to return (default 100).
    #[serde(default = "default_timeline_limit")]
    pub limit: u32,
    /// Facts to skip (default 0).
    #[serde(default)]
    pub offset: u32,
}

#[tool_router(router = knowledge_graph_tools, vis = "pub(crate)")]
impl MemPalaceServer {
    /// Query the knowledge graph for an entity's relationships. Returns typed facts with temporal validity. E.g. 'Max' → child_of Alice, loves chess, does swimming. Filter by date with as_of to see what was true at a point in time.
    #[tool(name = "mempalace_kg_query", annotations(read_only_hint = true))]
    async fn kg_query(&self, Parameters(a): Parameters<KgQueryArgs>) -> ToolAnswer {
        let direction = match a.direction.as_deref() {
            None => Direction::Both,
            Some(d) => match d.parse() {
                Ok(d) => d,
                Err(e) => return read::<()>(Err(e)),
            },
        };
        read(
            self.palace
                .kg_query(&a.entity, a.as_of.as_deref(), direction)
                .await,
        )
    }

    /// Add a fact to the knowledge graph. Subject → predicate → object with optional time window. E.g. ('Max', 'started_school', 'Year 7', valid_from='2026-09-01').
    #[tool(name = "mempalace_kg_add")]
    async fn kg_add(&self, Parameters(a): Parameters<KgAddArgs>) -> ToolAnswer {
        let mut t = NewTriple::new(a.subject, a.predicate, a.object);
        t.valid_from = a.valid_from;
        t.valid_to = a.valid_to;
        t.confidence = a.confidence;
        t.source_closet = a.source_closet;
        t.source_file = a.source_file;
        t.source_drawer_id = a.source_drawer_id;
        write(self.palace.kg_add(t).await)
    }

    /// Mark a fact as no longer true. E.g. ankle injury resolved, job ended, moved house. The fact is kept as history, never deleted.
    #[tool(name = "mempalace_kg_invalidate")]
    async fn kg_invalidate(&self, Parameters(a): Parameters<KgInvalidateArgs>) -> ToolAnswer {
        write(
            self.palace
                .kg_invalidate(&a.subject, &a.predicate, &a.object, a.ended.as_deref())
                .await,
        )
    }

    /// Replace a single-valued fact in one step: the old value ends and the new one starts at the same instant (e.g. a person's employer or a project's status changes).
    #[tool(name = "mempalace_kg_supersede")]
    async fn kg_supersede(&self, Parameters(a): Parameters<KgSupersedeArgs>) -> ToolAnswer {
        write(
            self.palace
                .kg_supersede(Supersede {
                    subject: a.subject,
                    predicate: a.predicate,
                    old_object: a.old_object,
                    new_object: a.new_object,
                    at: a.at,
                    confidence: a.confidence,
                    source_closet: a.source_closet,
                })
                .await,
        )
    }

    /// Chronological timeline of facts, of one entity or of all, a page at a time (with the total).
    #[tool(name = "mempalace_kg_timeline", annotations(read_only_hint = true))]
    async fn kg_timeline(&self, Parameters(a): Parameters<KgTimelineArgs>) -> ToolAnswer {
        read(
            self.palace
                .kg_timeline(
                    a.entity.as_deref(),
                    Page {
                        offset: a.offset as usize,
                        limit: a.limit as usize,
                    },
                )
                .await,
        )
    }

    /// Knowledge graph overview: entities, triples, current vs expired facts, relationship types.
    #[tool(name = "mempalace_kg_stats", annotations(read_only_hint = true))]
    async fn kg_stats(&self, Parameters(_): Parameters<NoArgs>) -> ToolAnswer {
        read(self.palace.kg_stats().await)
    }
}
