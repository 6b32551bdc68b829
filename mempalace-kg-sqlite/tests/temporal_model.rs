//! Property test of the knowledge graph's temporal logic: random sequences of add, invalidate
//! and supersede are applied both to the SQLite graph and to a plain model of MemPalace 3.11's
//! rules; every `as_of` query (dates and timestamps) and every error must agree with it.

use chrono::{Duration, NaiveDate};
use mempalace_core::temporal;
use mempalace_core::{Direction, KnowledgeGraph, NewTriple, Supersede};
use mempalace_kg_sqlite::SqliteKnowledgeGraph;
use proptest::prelude::*;

const SUBJECTS: [&str; 2] = ["alice", "bob"];
const OBJECTS: [&str; 3] = ["acme", "globex", "initech"];
const PREDICATE: &str = "works_at";
const DAYS: u32 = 40;

/// A day as an offset from 2024-01-01; `None` means open-ended / undated.
fn day(offset: u32) -> String {
    let start = NaiveDate::from_ymd_opt(2024, 1, 1).expect("valid date");
    (start + Duration::days(i64::from(offset)))
        .format("%Y-%m-%d")
        .to_string()
}

#[derive(Debug, Clone)]
enum Op {
    AddOpen {
        s: usize,
        o: usize,
        from: Option<u32>,
    },
    AddClosed {
        s: usize,
        o: usize,
        from: u32,
        len: u32,
    },
    Invalidate {
        s: usize,
        o: usize,
        ended: u32,
    },
    Supersede {
        s: usize,
        old: usize,
        new: usize,
        at: u32,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let s = 0..SUBJECTS.len();
    let o = 0..OBJECTS.len();
    prop_oneof![
        3 => (s.clone(), o.clone(), proptest::option::weighted(0.8, 0..DAYS))
            .prop_map(|(s, o, from)| Op::AddOpen { s, o, from }),
        1 => (s.clone(), o.clone(), 0..DAYS, 0..10u32)
            .prop_map(|(s, o, from, len)| Op::AddClosed { s, o, from, len }),
        2 => (s.clone(), o.clone(), 0..DAYS).prop_map(|(s, o, ended)| Op::Invalidate { s, o, ended }),
        2 => (s, o.clone(), o, 1..DAYS).prop_map(|(s, old, new, at)| Op::Supersede { s, old, new, at }),
    ]
}

/// One fact of the model, with the bounds the graph must store (`None` is unbounded).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Interval {
    s: usize,
    o: usize,
    from: Option<String>,
    to: Option<String>,
}

/// MemPalace 3.11's semantics, written out plainly.
#[derive(Default)]
struct Model {
    facts: Vec<Interval>,
}

/// A supersede on day `at` happens at that day's first second.
fn boundary(at: u32) -> String {
    format!("{}T00:00:00Z", day(at))
}

impl Model {
    fn open_mut(&mut self, s: usize, o: usize) -> impl Iterator<Item = &mut Interval> {
        self.facts
            .iter_mut()
            .filter(move |f| f.s == s && f.o == o && f.to.is_none())
    }

    fn has_open(&self, s: usize, o: usize) -> bool {
        self.facts
            .iter()
            .any(|f| f.s == s && f.o == o && f.to.is_none())
    }

    /// Adds a fact unless the same one is current (then nothing changes).
    fn add(&mut self, s: usize, o: usize, from: Option<String>, to: Option<String>) {
        if !self.has_open(s, o) {
            self.facts.push(Interval { s, o, from, to });
        }
    }

    /// Applies an operation; returns whether it should succeed.
    fn apply(&mut self, op: &Op) -> bool {
        match *op {
            Op::AddOpen { s, o, from } => {
                self.add(s, o, from.map(day), None);
                true
            }
            Op::AddClosed { s, o, from, len } => {
                self.add(s, o, Some(day(from)), Some(day(from + len)));
                true
            }
            Op::Invalidate { s, o, ended } => self.close(s, o, &day(ended)),
            Op::Supersede { s, old, new, at } => {
                let at = boundary(at);
                if !self.close(s, old, &at) {
                    return false;
                }
                self.add(s, new, Some(at), None);
                true
            }
        }
    }

    /// Closes the open facts at `ended` unless one of them starts after it ends.
    fn close(&mut self, s: usize, o: usize, ended: &str) -> bool {
        if self.open_mut(s, o).any(|f| {
            f.from
                .as_deref()
                .is_some_and(|from| temporal::ends_before_start(from, ended))
        }) {
            return false;
        }
        for f in self.open_mut(s, o) {
            f.to = Some(ended.to_string());
        }
        true
    }

    fn valid_at(&self, s: usize, as_of: Option<&str>) -> Vec<Interval> {
        let mut out: Vec<Interval> = self
            .facts
            .iter()
            .filter(|f| f.s == s)
            .filter(|f| match as_of {
                None => true,
                Some(at) => temporal::valid_at(f.from.as_deref(), f.to.as_deref(), at),
            })
            .cloned()
            .collect();
        out.sort();
        out
    }
}

fn index_of(names: &[&str], name: &str) -> usize {
    names.iter().position(|n| *n == name).expect("known name")
}

async fn apply(kg: &SqliteKnowledgeGraph, op: &Op) -> bool {
    match *op {
        Op::AddOpen { s, o, from } => {
            let mut t = NewTriple::new(SUBJECTS[s], PREDICATE, OBJECTS[o]);
            t.valid_from = from.map(day);
            kg.add_triple(&t).await.is_ok()
        }
        Op::AddClosed { s, o, from, len } => {
            let t = NewTriple::new(SUBJECTS[s], PREDICATE, OBJECTS[o])
                .valid_from(day(from))
                .valid_to(day(from + len));
            kg.add_triple(&t).await.is_ok()
        }
        Op::Invalidate { s, o, ended } => kg
            .invalidate(SUBJECTS[s], PREDICATE, OBJECTS[o], Some(&day(ended)))
            .await
            .is_ok(),
        Op::Supersede { s, old, new, at } => kg
            .supersede(&Supersede {
                subject: SUBJECTS[s].into(),
                predicate: PREDICATE.into(),
                old_object: OBJECTS[old].into(),
                new_object: OBJECTS[new].into(),
                at: Some(day(at)),
                confidence: 1.0,
                source_closet: None,
            })
            .await
            .is_ok(),
    }
}

async fn graph_valid_at(kg: &SqliteKnowledgeGraph, s: usize, as_of: Option<&str>) -> Vec<Interval> {
    let facts = kg
        .query_entity(SUBJECTS[s], as_of, Direction::Outgoing)
        .await
        .expect("query succeeds");
    let mut out: Vec<Interval> = facts
        .iter()
        .map(|f| {
            assert_eq!(f.current, f.valid_to.is_none(), "current flag of {f:?}");
            Interval {
                s: index_of(&SUBJECTS, &f.subject),
                o: index_of(&OBJECTS, &f.object),
                from: f.valid_from.clone(),
                to: f.valid_to.clone(),
            }
        })
        .collect();
    out.sort();
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn as_of_queries_agree_with_an_interval_model(ops in proptest::collection::vec(op(), 1..30)) {
        let rt = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        rt.block_on(async {
            let kg = SqliteKnowledgeGraph::in_memory();
            let mut model = Model::default();
            for (step, op) in ops.iter().enumerate() {
                let expected_ok = model.apply(op);
                let ok = apply(&kg, op).await;
                prop_assert_eq!(ok, expected_ok, "step {} {:?}", step, op);
            }
            for (s, subject) in SUBJECTS.iter().enumerate() {
                // Every day as a date, at its first second, at noon and at its last second.
                let instants: Vec<Option<String>> = std::iter::once(None)
                    .chain((0..DAYS + 10).flat_map(|d| {
                        [
                            day(d),
                            format!("{}T00:00:00Z", day(d)),
                            format!("{}T12:00:00Z", day(d)),
                            format!("{}T23:59:59Z", day(d)),
                        ]
                        .map(Some)
                    }))
                    .collect();
                for as_of in &instants {
                    prop_assert_eq!(
                        graph_valid_at(&kg, s, as_of.as_deref()).await,
                        model.valid_at(s, as_of.as_deref()),
                        "subject {} as_of {:?} after {:?}", subject, as_of, ops
                    );
                }
            }
            Ok(())
        })?;
    }
}
