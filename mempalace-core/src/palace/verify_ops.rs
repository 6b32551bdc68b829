//! `verify` and `repair` as Palace methods (the report types are in
//! [`crate::palace_verify`]).

use std::collections::{BTreeMap, HashSet};

use super::Palace;
use super::source_cleanup::DrawerPages;
use crate::drawer::Drawer;
use crate::drawer_chunks::parent_of;
use crate::error::Result;
use crate::filter::DrawerFilter;
use crate::palace_verify::{
    EMBEDDER_SAMPLE, RepairReport, SAME_EMBEDDER_SIMILARITY, VerifyCheck, VerifyReport,
    closet_pointers,
};
use crate::similarity::cosine_distance;
use crate::store_health::store_findings;

/// Drawers read per page while verifying.
const VERIFY_PAGE: usize = 500;
/// Problems of one kind listed by name before the rest are counted.
const LISTED: usize = 5;

/// Adds `ids` to `check` as one problem: the first few by name and how many in all.
fn list_problem(check: &mut VerifyCheck, ids: &[String], what: &str) {
    if ids.is_empty() {
        return;
    }
    let shown: Vec<&str> = ids.iter().take(LISTED).map(String::as_str).collect();
    let more = ids.len().saturating_sub(LISTED);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    check.problems.push(format!(
        "{} drawer(s) {what}: {}{tail}",
        ids.len(),
        shown.join(", ")
    ));
}

/// What a pass over every drawer and its vector found.
#[derive(Default)]
struct DrawerScan {
    drawers: u64,
    missing_vector: Vec<String>,
    wrong_dimension: Vec<String>,
    not_finite: Vec<String>,
    zero: Vec<String>,
    /// Chunk indexes per chunked drawer.
    chunks: BTreeMap<String, Vec<usize>>,
    /// The first drawers with vectors: the embedder and index probes.
    sample: Vec<(Drawer, Vec<f32>)>,
    ids: HashSet<String>,
}

impl Palace {
    /// Checks the palace, reading only: the store and its indexes answer, every drawer has a
    /// usable vector of the palace's dimension, the stored vectors are this embedder's, chunked
    /// drawers have all their pieces, the knowledge graph passes its engine's integrity check
    /// and names only stored entities, and closets point at stored drawers. A folder with no
    /// palace is [`crate::PalaceError::NoPalace`].
    pub async fn verify(&self) -> Result<VerifyReport> {
        self.require_palace().await?;
        let mut checks = Vec::new();

        let mut store = VerifyCheck::new("store");
        match self.store.health().await {
            Ok(health) => {
                store.notes = store_findings(&health);
                store.problems.extend(health.problems.clone());
            }
            Err(e) => store
                .problems
                .push(format!("the store cannot be read: {e}")),
        }
        checks.push(store);

        let scan = self.scan_drawers().await;
        let scan = match scan {
            Ok(scan) => scan,
            Err(e) => {
                let mut vectors = VerifyCheck::new("vectors");
                vectors
                    .problems
                    .push(format!("the drawers cannot be read: {e}"));
                checks.push(vectors);
                return Ok(self.report(0, checks));
            }
        };
        checks.push(self.check_indexes(&scan).await);
        let mut vectors = VerifyCheck::new("vectors");
        list_problem(&mut vectors, &scan.missing_vector, "have no vector");
        list_problem(
            &mut vectors,
            &scan.wrong_dimension,
            &format!("have a vector not of {} dimensions", self.store.dimension()),
        );
        list_problem(
            &mut vectors,
            &scan.not_finite,
            "have a vector that is not finite",
        );
        list_problem(&mut vectors, &scan.zero, "have a zero vector");
        checks.push(vectors);
        checks.push(self.check_embedder(&scan).await);
        checks.push(check_chunks(&scan));

        let mut graph = VerifyCheck::new("knowledge_graph");
        match self.kg.integrity_problems().await {
            Ok(problems) => graph.problems = problems,
            Err(e) => graph
                .problems
                .push(format!("the knowledge graph cannot be read: {e}")),
        }
        checks.push(graph);
        checks.push(self.check_closets(&scan.ids).await);
        Ok(self.report(scan.drawers, checks))
    }

    /// Verifies, rebuilds what can be rebuilt from the data (the store's indexes; closets
    /// whose drawers are all gone are dropped), says what it could not mend and how, and
    /// verifies again. Takes the write lock while it rebuilds.
    pub async fn repair(&self) -> Result<RepairReport> {
        let before = self.verify().await?;
        let mut repaired = Vec::new();
        let mut not_repaired = Vec::new();
        {
            let _guard = self.write_lock.acquire().await?;
            self.store.rebuild_indexes().await?;
            repaired.push(format!(
                "rebuilt the {} indexes from its rows",
                self.store.backend_name()
            ));
            let gone = self.closets_of_gone_drawers().await?;
            if !gone.is_empty() {
                let dropped = self.closets.delete_for_sources(&gone).await?;
                repaired.push(format!(
                    "dropped {dropped} closet(s) of {} file(s) whose drawers are gone",
                    gone.len()
                ));
            }
        }
        for check in &before.checks {
            let advice = match check.name.as_str() {
                "vectors" | "embedder" => {
                    "export the palace with --no-vectors and import it into a new palace: every drawer is embedded again"
                }
                "chunks" => {
                    "file those drawers again: their missing pieces are not stored anywhere"
                }
                "knowledge_graph" => {
                    "restore the graph from an export or a backup (mempalace import keeps what is stored)"
                }
                _ => continue,
            };
            for problem in &check.problems {
                not_repaired.push(format!("{}: {problem}; {advice}", check.name));
            }
        }
        let after = self.verify().await?;
        Ok(RepairReport {
            before,
            repaired,
            not_repaired,
            after,
        })
    }

    fn report(&self, drawers: u64, checks: Vec<VerifyCheck>) -> VerifyReport {
        VerifyReport {
            palace_path: self.path.clone(),
            drawers,
            sound: checks.iter().all(|c| c.problems.is_empty()),
            checks,
        }
    }

    /// Every drawer with its vector, a page at a time.
    async fn scan_drawers(&self) -> Result<DrawerScan> {
        let dimension = self.store.dimension();
        let mut scan = DrawerScan::default();
        let mut pages = DrawerPages::new(DrawerFilter::all(), VERIFY_PAGE);
        while let Some(page) = pages.next(self).await? {
            let ids: Vec<String> = page.iter().map(|d| d.id.clone()).collect();
            let mut vectors: std::collections::HashMap<String, Vec<f32>> =
                self.store.vectors(&ids).await?.into_iter().collect();
            for drawer in page {
                scan.drawers += 1;
                scan.ids.insert(drawer.id.clone());
                if let Some((parent, index)) = drawer.id.rsplit_once("_chunk_")
                    && parent_of(&drawer.id).is_some()
                {
                    scan.chunks
                        .entry(parent.to_string())
                        .or_default()
                        .push(index.parse().unwrap_or(usize::MAX));
                }
                let Some(vector) = vectors.remove(&drawer.id) else {
                    scan.missing_vector.push(drawer.id);
                    continue;
                };
                if vector.len() != dimension {
                    scan.wrong_dimension.push(drawer.id);
                } else if vector.iter().any(|x| !x.is_finite()) {
                    scan.not_finite.push(drawer.id);
                } else if vector.iter().all(|x| *x == 0.0) {
                    scan.zero.push(drawer.id);
                } else if scan.sample.len() < EMBEDDER_SAMPLE {
                    scan.sample.push((drawer, vector));
                }
            }
        }
        Ok(scan)
    }

    /// The vector and full-text indexes answer: a drawer's own vector finds it, and a word
    /// of its text finds drawers.
    async fn check_indexes(&self, scan: &DrawerScan) -> VerifyCheck {
        let mut check = VerifyCheck::new("indexes");
        let Some((drawer, vector)) = scan.sample.first() else {
            return check;
        };
        match self
            .store
            .nearest_ids(vector, &DrawerFilter::all(), 10)
            .await
        {
            Ok(found) if found.iter().any(|n| n.id == drawer.id) => {}
            Ok(_) => check.problems.push(format!(
                "the vector search does not find drawer {} by its own vector",
                drawer.id
            )),
            Err(e) => check.problems.push(format!("the vector search fails: {e}")),
        }
        let word = drawer
            .text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 4)
            .max_by_key(|w| w.chars().count())
            .unwrap_or("memory");
        if let Err(e) = self
            .store
            .lexical_query(word, &DrawerFilter::all(), 5)
            .await
        {
            check
                .problems
                .push(format!("the full-text search fails: {e}"));
        }
        check
    }

    /// The stored vectors are this embedder's: a few drawers embedded again match them.
    async fn check_embedder(&self, scan: &DrawerScan) -> VerifyCheck {
        let mut check = VerifyCheck::new("embedder");
        if scan.sample.is_empty() {
            return check;
        }
        let texts: Vec<String> = scan.sample.iter().map(|(d, _)| d.text.clone()).collect();
        match self.embedder.embed(&texts).await {
            Ok(fresh) => {
                let differ: Vec<String> = scan
                    .sample
                    .iter()
                    .zip(&fresh)
                    .filter(|((_, stored), new)| {
                        stored.len() != new.len()
                            || 1.0 - cosine_distance(stored, new) < SAME_EMBEDDER_SIMILARITY
                    })
                    .map(|((d, _), _)| d.id.clone())
                    .collect();
                if !differ.is_empty() {
                    check.problems.push(format!(
                        "{} of {} drawers embedded again with {} do not match their stored vectors ({}): the palace was embedded with another model",
                        differ.len(),
                        scan.sample.len(),
                        self.embedder.model_name(),
                        differ.join(", ")
                    ));
                }
            }
            Err(e) => check.problems.push(format!("the embedder fails: {e}")),
        }
        check
    }

    /// The closets whose drawers are all gone, by source file.
    async fn closets_of_gone_drawers(&self) -> Result<Vec<String>> {
        let mut ids = HashSet::new();
        self.scan(&DrawerFilter::all(), |d| {
            ids.insert(d.id);
        })
        .await?;
        Ok(self.gone_closets(&ids).await?.1)
    }

    /// Closets pointing at drawers that are not stored: (closet ids, source files whose
    /// closets all point at gone drawers).
    async fn gone_closets(
        &self,
        drawer_ids: &HashSet<String>,
    ) -> Result<(Vec<String>, Vec<String>)> {
        let mut dangling = Vec::new();
        let mut sources: BTreeMap<String, bool> = BTreeMap::new();
        let mut after: Option<String> = None;
        loop {
            let page = self
                .closets
                .closet_rows(after.as_deref(), VERIFY_PAGE)
                .await?;
            let done = page.len() < VERIFY_PAGE;
            after = page.last().map(|c| c.id.clone());
            for closet in page {
                let pointers = closet_pointers(&closet.text);
                let live = pointers.iter().any(|id| drawer_ids.contains(id));
                if !pointers.is_empty() && !live {
                    dangling.push(closet.id.clone());
                }
                *sources.entry(closet.source_file).or_insert(false) |= live || pointers.is_empty();
            }
            if done {
                break;
            }
        }
        let gone = sources
            .into_iter()
            .filter(|(_, live)| !live)
            .map(|(source, _)| source)
            .collect();
        Ok((dangling, gone))
    }

    /// Closets point at stored drawers.
    async fn check_closets(&self, drawer_ids: &HashSet<String>) -> VerifyCheck {
        let mut check = VerifyCheck::new("closets");
        match self.gone_closets(drawer_ids).await {
            Ok((dangling, _)) if !dangling.is_empty() => {
                let shown: Vec<&str> = dangling.iter().take(LISTED).map(String::as_str).collect();
                check.problems.push(format!(
                    "{} closet(s) point only at drawers that are gone: {}",
                    dangling.len(),
                    shown.join(", ")
                ));
            }
            Ok(_) => {}
            Err(e) => check
                .problems
                .push(format!("the closets cannot be read: {e}")),
        }
        check
    }
}

/// Chunked drawers have every piece from 0 on.
fn check_chunks(scan: &DrawerScan) -> VerifyCheck {
    let mut check = VerifyCheck::new("chunks");
    let broken: Vec<String> = scan
        .chunks
        .iter()
        .filter(|(_, indexes)| {
            let mut sorted = (*indexes).clone();
            sorted.sort_unstable();
            sorted.iter().enumerate().any(|(i, index)| i != *index)
        })
        .map(|(parent, _)| parent.clone())
        .collect();
    list_problem(&mut check, &broken, "filed in chunks miss a piece");
    check
}
