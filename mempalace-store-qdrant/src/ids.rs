//! Point ids: Qdrant only accepts unsigned integers or UUIDs, so every drawer id maps to a
//! stable UUID v5 and the drawer id itself travels in the payload.

use qdrant_client::qdrant::PointId;
use uuid::Uuid;

/// The UUID v5 namespace of drawer point ids. Never change it: existing collections would no
/// longer find (or replace) their points.
pub const DRAWER_ID_NAMESPACE: Uuid = Uuid::from_u128(0x3f6d_9a2c_51e4_4b8f_a7c1_0d2e_6b95_c417);

/// The stable point UUID of a drawer id.
pub fn point_uuid(drawer_id: &str) -> Uuid {
    Uuid::new_v5(&DRAWER_ID_NAMESPACE, drawer_id.as_bytes())
}

/// The Qdrant point id of a drawer id.
pub fn point_id(drawer_id: &str) -> PointId {
    PointId::from(point_uuid(drawer_id).to_string())
}

#[cfg(test)]
mod tests {
    use qdrant_client::qdrant::point_id::PointIdOptions;

    use super::*;

    #[test]
    fn derivation_is_stable_and_pinned() {
        // Pinned (cross-checked with Python's uuid.uuid5): if this changes, every existing
        // palace collection becomes unreachable.
        assert_eq!(
            DRAWER_ID_NAMESPACE.to_string(),
            "3f6d9a2c-51e4-4b8f-a7c1-0d2e6b95c417"
        );
        assert_eq!(point_uuid("d00000"), point_uuid("d00000"));
        assert_eq!(
            point_uuid("drawer_wing_code_auth_0123456789abcdef").to_string(),
            PINNED_EXAMPLE
        );
        assert_eq!(point_uuid("x").get_version_num(), 5);
    }

    const PINNED_EXAMPLE: &str = "419096c1-4f94-535c-8508-6a063df703b6";

    #[test]
    fn distinct_ids_give_distinct_points() {
        let ids = ["a", "A", "a ", "项目", "🚀", "", "d00001", "d00010"];
        let uuids: std::collections::HashSet<_> = ids.iter().map(|i| point_uuid(i)).collect();
        assert_eq!(uuids.len(), ids.len());
    }

    #[test]
    fn point_id_is_the_hyphenated_uuid() {
        let id = point_id("d00000");
        match id.point_id_options {
            Some(PointIdOptions::Uuid(s)) => {
                assert_eq!(s, point_uuid("d00000").hyphenated().to_string());
                assert_eq!(s.len(), 36);
            }
            other => panic!("expected a UUID point id, got {other:?}"),
        }
    }
}
