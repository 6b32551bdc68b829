//! Deciding which room a mined file belongs to, as MemPalace's miner does.

use serde::{Deserialize, Serialize};

/// A room of a project, with keywords that route files to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoomSpec {
    /// The room's name.
    pub name: String,
    /// Words that, in a folder name or a file's text, point to this room.
    #[serde(default)]
    pub keywords: Vec<String>,
    /// A one-line description for people reading the config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The room used when nothing matches.
pub const FALLBACK_ROOM: &str = "general";

/// Routes a file: first a folder on its relative path that matches a room name or keyword,
/// then a file name that contains (or is contained in) a room name, then the room whose
/// keywords occur most often in the first 2,000 characters, else [`FALLBACK_ROOM`].
/// `relative_path` uses `/` between components.
pub fn route_room(relative_path: &str, content: &str, rooms: &[RoomSpec]) -> String {
    let relative = relative_path.to_lowercase();
    let parts: Vec<&str> = relative.split('/').filter(|p| !p.is_empty()).collect();
    let (folders, file) = parts.split_at(parts.len().saturating_sub(1));
    let stem = file
        .first()
        .map(|f| f.rsplit_once('.').map_or(*f, |(s, _)| s))
        .unwrap_or("");
    let candidates = |room: &RoomSpec| -> Vec<String> {
        std::iter::once(room.name.to_lowercase())
            .chain(room.keywords.iter().map(|k| k.to_lowercase()))
            .filter(|c| !c.is_empty())
            .collect()
    };
    for folder in folders {
        for room in rooms {
            if candidates(room)
                .iter()
                .any(|c| folder == c || folder.contains(c.as_str()) || c.contains(folder))
            {
                return room.name.clone();
            }
        }
    }
    if !stem.is_empty() {
        for room in rooms {
            let name = room.name.to_lowercase();
            if !name.is_empty() && (stem.contains(&name) || name.contains(stem)) {
                return room.name.clone();
            }
        }
    }
    let head: String = content
        .chars()
        .take(2000)
        .collect::<String>()
        .to_lowercase();
    let mut best: Option<(&RoomSpec, usize)> = None;
    for room in rooms {
        let score: usize = candidates(room)
            .iter()
            .map(|k| head.matches(k.as_str()).count())
            .sum();
        if score > 0 && best.is_none_or(|(_, s)| score > s) {
            best = Some((room, score));
        }
    }
    best.map_or_else(|| FALLBACK_ROOM.to_string(), |(r, _)| r.name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rooms() -> Vec<RoomSpec> {
        let r = |n: &str, k: &[&str]| RoomSpec {
            name: n.into(),
            keywords: k.iter().map(|s| s.to_string()).collect(),
            description: None,
        };
        vec![
            r("frontend", &["ui", "react"]),
            r("backend", &["api", "server"]),
            r("docs", &[]),
        ]
    }

    #[test]
    fn folder_then_file_name_then_keywords_then_general() {
        assert_eq!(route_room("frontend/app.tsx", "", &rooms()), "frontend");
        assert_eq!(route_room("src/api/users.rs", "", &rooms()), "backend");
        assert_eq!(route_room("notes/docs.md", "", &rooms()), "docs");
        assert_eq!(
            route_room(
                "misc/notes.txt",
                "the react ui and the react router",
                &rooms()
            ),
            "frontend"
        );
        assert_eq!(
            route_room("misc/notes.txt", "nothing relevant", &rooms()),
            FALLBACK_ROOM
        );
        assert_eq!(route_room("README", "", &[]), FALLBACK_ROOM);
    }
}
