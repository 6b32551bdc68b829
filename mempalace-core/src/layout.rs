//! Every file and folder a palace keeps in its folder, named once. Adapters and openers take
//! their names from here, so the palace's layout is one fact in one place.
//!
//! | name | what |
//! | --- | --- |
//! | `palace.json` | how the palace was assembled (backend, collection, model, graph) |
//! | `lance/` | the embedded LanceDB database (the default vector store) |
//! | `knowledge_graph.sqlite3` | the knowledge graph (MemPalace 3.11's file) |
//! | `logstream.sqlite3`, `replica.json` | the agents' coordination log and its replica id (3.11's) |
//! | `tunnels.json`, `hallways.json` | explicit tunnels and hallways (3.11's formats) |
//! | `closets.sqlite3` | 3.11's closets, brought by a migration |
//! | `write.lock` | the cross-process write lock |
//! | `identity.txt` | the wake-up's L0 identity |
//! | `entities.json` | AAAK entity codes |
//! | `tunnels/proposal.json` | `tunnels propose`'s plan, for review (3.11's file) |

use std::path::{Path, PathBuf};

/// A palace folder and the paths of everything in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PalaceLayout {
    root: PathBuf,
}

impl PalaceLayout {
    /// The palace's record of how it was assembled.
    pub const CONFIG: &'static str = "palace.json";
    /// The embedded LanceDB database (a folder).
    pub const LANCE_DIR: &'static str = "lance";
    /// The SQLite knowledge graph, MemPalace 3.11's file.
    pub const KNOWLEDGE_GRAPH: &'static str = "knowledge_graph.sqlite3";
    /// The agents' coordination log, MemPalace 3.11's file.
    pub const COORDINATION_LOG: &'static str = "logstream.sqlite3";
    /// The coordination log's replica id (3.11's file).
    pub const REPLICA: &'static str = "replica.json";
    /// Explicit tunnels (3.11's file).
    pub const TUNNELS: &'static str = "tunnels.json";
    /// Hallways (3.11's file).
    pub const HALLWAYS: &'static str = "hallways.json";
    /// 3.11's closets, brought by a migration.
    pub const CLOSETS: &'static str = "closets.sqlite3";
    /// The cross-process write lock.
    pub const WRITE_LOCK: &'static str = "write.lock";
    /// The wake-up's L0 identity text.
    pub const IDENTITY: &'static str = "identity.txt";
    /// AAAK entity codes.
    pub const ENTITY_CODES: &'static str = "entities.json";
    /// The folder of `tunnels propose`'s plan.
    pub const TUNNEL_PLANS_DIR: &'static str = "tunnels";
    /// `tunnels propose`'s plan, in [`Self::TUNNEL_PLANS_DIR`].
    pub const TUNNEL_PROPOSAL: &'static str = "proposal.json";

    /// The layout of the palace folder `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        PalaceLayout { root: root.into() }
    }

    /// The palace folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `palace.json`.
    pub fn config(&self) -> PathBuf {
        self.root.join(Self::CONFIG)
    }

    /// `lance/`.
    pub fn lance_dir(&self) -> PathBuf {
        self.root.join(Self::LANCE_DIR)
    }

    /// `knowledge_graph.sqlite3` in the palace folder (see [`crate::locations`] for the legacy
    /// default palace, whose graph may sit beside it).
    pub fn knowledge_graph(&self) -> PathBuf {
        self.root.join(Self::KNOWLEDGE_GRAPH)
    }

    /// `logstream.sqlite3`.
    pub fn coordination_log(&self) -> PathBuf {
        self.root.join(Self::COORDINATION_LOG)
    }

    /// `replica.json`.
    pub fn replica(&self) -> PathBuf {
        self.root.join(Self::REPLICA)
    }

    /// `tunnels.json`.
    pub fn tunnels(&self) -> PathBuf {
        self.root.join(Self::TUNNELS)
    }

    /// `hallways.json`.
    pub fn hallways(&self) -> PathBuf {
        self.root.join(Self::HALLWAYS)
    }

    /// `closets.sqlite3`.
    pub fn closets(&self) -> PathBuf {
        self.root.join(Self::CLOSETS)
    }

    /// `write.lock`.
    pub fn write_lock(&self) -> PathBuf {
        self.root.join(Self::WRITE_LOCK)
    }

    /// `identity.txt`.
    pub fn identity(&self) -> PathBuf {
        self.root.join(Self::IDENTITY)
    }

    /// `entities.json`.
    pub fn entity_codes(&self) -> PathBuf {
        self.root.join(Self::ENTITY_CODES)
    }

    /// `tunnels/proposal.json`.
    pub fn tunnel_proposal(&self) -> PathBuf {
        self.root
            .join(Self::TUNNEL_PLANS_DIR)
            .join(Self::TUNNEL_PROPOSAL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_is_inside_the_palace_folder() {
        let layout = PalaceLayout::new("/srv/palace");
        for p in [
            layout.config(),
            layout.lance_dir(),
            layout.knowledge_graph(),
            layout.coordination_log(),
            layout.replica(),
            layout.tunnels(),
            layout.hallways(),
            layout.closets(),
            layout.write_lock(),
            layout.identity(),
            layout.entity_codes(),
        ] {
            assert_eq!(
                p.parent(),
                Some(Path::new("/srv/palace")),
                "{}",
                p.display()
            );
        }
    }
}
