//! Moving drawers between wings and rooms: `move_drawers` and `migrate-wings` keep ids,
//! text and vectors, take closets along, and refuse bad names before writing anything.

use std::sync::Arc;

use mempalace_conformance::HashingEmbedder;
use mempalace_core::closets::{Closet, ClosetIndex, ClosetScope, MemoryClosets};
use mempalace_core::{
    AddedBy, Drawer, DrawerFilter, DrawerMetadata, DrawerMove, MemoryStore, Palace, PalaceError,
    SearchRequest,
};
use mempalace_kg_sqlite::SqliteKnowledgeGraph;

const DIM: usize = 384;

fn drawer(id: &str, wing: &str, room: &str, source: &str, text: &str) -> Drawer {
    Drawer {
        id: id.into(),
        text: text.into(),
        metadata: DrawerMetadata {
            wing: wing.into(),
            room: room.into(),
            source_file: source.into(),
            chunk_index: 0,
            added_by: AddedBy::Mine,
            filed_at: "2026-01-01T00:00:00".into(),
            authored_at: None,
            conversation: None,
            entities: Vec::new(),
        },
    }
}

struct Setup {
    palace: Palace,
    closets: Arc<MemoryClosets>,
    _dir: tempfile::TempDir,
}

async fn palace() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("palace");
    let closets = Arc::new(MemoryClosets::new());
    let palace = Palace::new(
        &path,
        Arc::new(HashingEmbedder::new(DIM)),
        Arc::new(MemoryStore::new(DIM)),
        Arc::new(SqliteKnowledgeGraph::in_palace(&path)),
    )
    .unwrap()
    .with_closets(closets.clone());
    palace
        .import_drawers(&[
            drawer(
                "d1",
                "_home_me_app",
                "notes",
                "/a.md",
                "The deploy key rotates monthly.",
            ),
            drawer(
                "d2",
                "_home_me_app",
                "notes",
                "/a.md",
                "Staging runs on the old cluster.",
            ),
            drawer(
                "d3",
                "home_me_app",
                "plans",
                "/b.md",
                "Move billing to the new queue.",
            ),
            drawer(
                "d4",
                "-Side-Project-",
                "general",
                "/c.md",
                "Side project uses SQLite.",
            ),
            drawer(
                "d5",
                "garden",
                "beds",
                "/d.md",
                "Tomatoes need staking in June.",
            ),
        ])
        .await
        .unwrap();
    palace
        .import_closets(&[
            Closet {
                id: "closet_a".into(),
                text: "deploy notes|Deploy|→d1,d2".into(),
                wing: "_home_me_app".into(),
                room: "notes".into(),
                source_file: "/a.md".into(),
            },
            Closet {
                id: "closet_a_garden".into(),
                text: "deploy notes|Deploy|→elsewhere".into(),
                wing: "garden".into(),
                room: "beds".into(),
                source_file: "/a.md".into(),
            },
        ])
        .await
        .unwrap();
    Setup {
        palace,
        closets,
        _dir: dir,
    }
}

async fn wing_counts(palace: &Palace) -> Vec<(String, u64)> {
    let mut counts = std::collections::BTreeMap::new();
    for c in palace
        .store()
        .room_counts(&DrawerFilter::all())
        .await
        .unwrap()
    {
        *counts.entry(c.wing).or_insert(0) += c.count;
    }
    counts.into_iter().collect()
}

#[tokio::test]
async fn migrate_wings_plans_then_renames_and_merges_keeping_ids_and_vectors() {
    let s = palace().await;
    let plan = s.palace.migrate_wing_names(false).await.unwrap();
    assert!(plan.moved.is_none(), "a dry run moves nothing");
    let summary: Vec<_> = plan
        .renames
        .iter()
        .map(|r| (r.from.as_str(), r.to.as_str(), r.drawers, r.merges))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("-Side-Project-", "side_project", 1, false),
            ("_home_me_app", "home_me_app", 2, true),
        ]
    );
    assert_eq!(
        wing_counts(&s.palace).await,
        vec![
            ("-Side-Project-".to_string(), 1),
            ("_home_me_app".to_string(), 2),
            ("garden".to_string(), 1),
            ("home_me_app".to_string(), 1),
        ],
        "the dry run changed nothing"
    );

    let done = s.palace.migrate_wing_names(true).await.unwrap();
    assert_eq!(done.renames, plan.renames);
    let moved = done.moved.unwrap();
    assert_eq!((moved.drawers, moved.closets), (3, 1));
    assert_eq!(
        wing_counts(&s.palace).await,
        vec![
            ("garden".to_string(), 1),
            ("home_me_app".to_string(), 3),
            ("side_project".to_string(), 1),
        ]
    );
    let d1 = s.palace.store().get(&["d1".to_string()]).await.unwrap();
    assert_eq!(d1[0].metadata.wing, "home_me_app");
    assert_eq!(d1[0].metadata.room, "notes", "the room stays");
    assert_eq!(d1[0].text, "The deploy key rotates monthly.");
    let hits = s
        .palace
        .search_with(
            &SearchRequest::new("The deploy key rotates monthly.")
                .wing("home_me_app")
                .limit(1),
        )
        .await
        .unwrap();
    assert_eq!(hits.results[0].text, "The deploy key rotates monthly.");
    let scope = ClosetScope {
        wing: Some("home_me_app".into()),
        ..Default::default()
    };
    let closets = s
        .closets
        .containing_any(&["deploy".to_string()], &scope, 10)
        .await
        .unwrap();
    assert_eq!(closets.len(), 1, "the closet followed its drawers");
    let elsewhere = ClosetScope {
        wing: Some("garden".into()),
        ..Default::default()
    };
    let stayed = s
        .closets
        .containing_any(&["deploy".to_string()], &elsewhere, 10)
        .await
        .unwrap();
    assert_eq!(
        stayed.len(),
        1,
        "the same file's closet in another wing stays"
    );

    let again = s.palace.migrate_wing_names(true).await.unwrap();
    assert!(again.renames.is_empty(), "a second run finds nothing to do");
}

#[tokio::test]
async fn move_drawers_checks_every_name_before_writing() {
    let s = palace().await;
    let before = wing_counts(&s.palace).await;
    let moves = [
        DrawerMove {
            id: "d5".into(),
            wing: "garden".into(),
            room: "greenhouse".into(),
        },
        DrawerMove {
            id: "d1".into(),
            wing: "bad/wing".into(),
            room: "notes".into(),
        },
    ];
    let err = s.palace.move_drawers(&moves).await.unwrap_err();
    assert!(matches!(err, PalaceError::InvalidInput { .. }), "{err}");
    assert_eq!(wing_counts(&s.palace).await, before, "nothing moved");
    let d5 = s.palace.store().get(&["d5".to_string()]).await.unwrap();
    assert_eq!(d5[0].metadata.room, "beds");

    let moved = s.palace.move_drawers(&moves[..1]).await.unwrap();
    assert_eq!(moved.drawers, 1);
    let d5 = s.palace.store().get(&["d5".to_string()]).await.unwrap();
    assert_eq!(d5[0].metadata.room, "greenhouse");

    // One id moved twice: the last move wins, and it is one drawer moved.
    let twice = [
        DrawerMove {
            id: "d5".into(),
            wing: "garden".into(),
            room: "shed".into(),
        },
        DrawerMove {
            id: "d5".into(),
            wing: "garden".into(),
            room: "beds".into(),
        },
    ];
    assert_eq!(s.palace.move_drawers(&twice).await.unwrap().drawers, 1);
    let d5 = s.palace.store().get(&["d5".to_string()]).await.unwrap();
    assert_eq!(d5[0].metadata.room, "beds");
}

#[tokio::test]
async fn rooms_apply_moves_drawers_by_stored_vectors_and_takes_whole_files_closets_along() {
    let s = palace().await;
    // d1 and d2 (/a.md, room notes, wing _home_me_app) form the room set's one room.
    let rooms = vec![mempalace_core::room_sets::SetRoom {
        name: "deploys".into(),
        description: String::new(),
        keywords: Vec::new(),
        exemplars: vec!["d1".into(), "d2".into()],
    }];
    let scope: std::collections::BTreeSet<String> = ["notes".to_string()].into();
    let plan = s
        .palace
        .plan_room_reclassification("_home_me_app", &rooms, 0.3, Some(&scope))
        .await
        .unwrap();
    assert_eq!(
        plan.prototypes,
        vec![("deploys".to_string(), "centroid of 2".to_string())]
    );
    assert_eq!((plan.total, plan.changes.len()), (2, 2), "{plan:?}");
    assert_eq!(
        plan.closet_targets,
        vec![(
            "/a.md".to_string(),
            "notes".to_string(),
            "deploys".to_string()
        )]
    );
    let moved = s.palace.apply_room_plan(&plan).await.unwrap();
    assert_eq!((moved.drawers, moved.closets), (2, 1));
    let d = s
        .palace
        .store()
        .get(&["d1".to_string(), "d2".to_string()])
        .await
        .unwrap();
    assert!(
        d.iter()
            .all(|d| d.metadata.room == "deploys" && d.metadata.wing == "_home_me_app")
    );
    let in_deploys = ClosetScope {
        wing: Some("_home_me_app".into()),
        room: Some("deploys".into()),
        source_file: None,
    };
    let closets = s
        .closets
        .containing_any(&["deploy".to_string()], &in_deploys, 10)
        .await
        .unwrap();
    assert_eq!(
        closets.len(),
        1,
        "the file's closet followed into the new room"
    );
    let again = s
        .palace
        .plan_room_reclassification("_home_me_app", &rooms, 0.3, Some(&scope))
        .await
        .unwrap();
    assert!(
        again.changes.is_empty(),
        "nothing left in the rooms to reclassify"
    );
}
