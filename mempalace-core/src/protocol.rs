//! The texts every palace hands to an AI on wake-up: the memory protocol and the AAAK dialect.

/// How an AI should behave with a palace (returned by `status`).
pub const PALACE_PROTOCOL: &str = "IMPORTANT — MemPalace Memory Protocol:
1. ON WAKE-UP: Call mempalace_status to load the palace overview and the AAAK spec.
2. BEFORE RESPONDING about any person, project, or past event: call mempalace_kg_query or mempalace_search FIRST. Never guess — verify.
3. IF UNSURE about a fact (name, gender, age, relationship): say \"let me check\" and query the palace. Wrong is worse than slow.
4. AFTER EACH SESSION: call mempalace_diary_write to record what happened, what you learned, what matters.
5. WHEN A SINGLE-VALUED FACT CHANGES (an employer, a dependency, an address): call mempalace_kg_supersede, which closes the old value and opens the new one at the same moment, instead of mempalace_kg_invalidate followed by mempalace_kg_add.

This protocol ensures the AI KNOWS before it speaks. Storage is not memory — but storage + this protocol = memory.";

/// The AAAK compressed memory dialect (returned by `status` and `mempalace_get_aaak_spec`).
pub const AAAK_SPEC: &str = "AAAK is a compressed memory dialect that MemPalace uses for efficient storage.
It is designed to be readable by both humans and LLMs without decoding.

FORMAT:
  ENTITIES: 3-letter uppercase codes. ALC=Alice, JOR=Jordan, RIL=Riley, MAX=Max, BEN=Ben.
  EMOTIONS: *action markers* before/during text. *warm*=joy, *fierce*=determined, *raw*=vulnerable, *bloom*=tenderness.
  STRUCTURE: Pipe-separated fields. FAM: family | PROJ: projects | ⚠: warnings/reminders.
  DATES: ISO format (2026-03-31). COUNTS: Nx = N mentions (e.g., 570x).
  IMPORTANCE: ★ to ★★★★★ (1-5 scale).
  HALLS: hall_facts, hall_events, hall_discoveries, hall_preferences, hall_advice.
  WINGS: wing_user, wing_agent, wing_team, wing_code, wing_myproject, wing_hardware, wing_ue5, wing_ai_research.
  ROOMS: Hyphenated slugs representing named ideas (e.g., chromadb-setup, gpu-pricing).

EXAMPLE:
  FAM: ALC→♡JOR | 2D(kids): RIL(18,sports) MAX(11,chess+swimming) | BEN(contributor)

Read AAAK naturally — expand codes mentally, treat *markers* as emotional context.
When WRITING AAAK: use entity codes, mark emotions, keep structure tight.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_has_five_rules_and_spec_names_its_parts() {
        for n in 1..=5 {
            assert!(PALACE_PROTOCOL.contains(&format!("\n{n}. ")), "rule {n}");
        }
        assert!(PALACE_PROTOCOL.contains("let me check"));
        assert!(PALACE_PROTOCOL.contains("mempalace_kg_supersede"));
        for part in [
            "ALC=Alice",
            "*warm*=joy",
            "Pipe-separated",
            "ISO",
            "★",
            "WINGS",
            "ROOMS",
        ] {
            assert!(AAAK_SPEC.contains(part), "{part}");
        }
    }
}
