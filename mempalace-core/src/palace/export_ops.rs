//! `export` and `import` as Palace methods: a whole palace to and from MemPalace's JSON Lines
//! format ([`crate::palace_export`]).

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::Palace;
use super::source_cleanup::DrawerPages;
use crate::drawer::Drawer;
use crate::error::{PalaceError, Result};
use crate::filter::DrawerFilter;
use crate::kg_rows::{EntityRow, TripleRow};
use crate::palace_export::{
    EXPORT_FORMAT, EXPORT_VERSION, ExportCounts, ExportEnd, ExportHeader, ExportOptions,
    ExportRecord, ExportedDrawer, ExportedLink, ImportReport, MAX_EXPORT_LINE_BYTES,
};

/// Rows read (and written back) per page.
const EXPORT_PAGE: usize = 500;
/// Drawers filed per import batch.
const IMPORT_DRAWER_BATCH: usize = 256;
/// Graph rows stored per import transaction.
const IMPORT_ROW_BATCH: usize = 1000;

/// An export line failed to be written.
fn write_failed(e: std::io::Error) -> PalaceError {
    PalaceError::invalid("export", format!("could not write the export: {e}"))
}

/// Writes one record as a line.
fn write_record(
    out: &mut (dyn Write + Send),
    record: &ExportRecord,
    counts: &mut ExportCounts,
) -> Result<()> {
    serde_json::to_writer(&mut *out, record).map_err(|e| write_failed(std::io::Error::other(e)))?;
    out.write_all(b"\n").map_err(write_failed)?;
    counts.count(record);
    Ok(())
}

impl Palace {
    /// Writes the whole palace to `out` in MemPalace's export format: drawers (with their
    /// vectors when `options.vectors`), closets, the graph's entities and facts with their
    /// intervals, tunnels, hallways and the coordination log. A folder with no palace is
    /// [`PalaceError::NoPalace`]. Writers may go on meanwhile; what they add during the
    /// export may or may not be in it (a consistent copy is a backup's job).
    pub async fn export(
        &self,
        out: &mut (dyn Write + Send),
        options: &ExportOptions,
    ) -> Result<ExportCounts> {
        self.require_palace().await?;
        let mut counts = ExportCounts::default();
        let header = ExportRecord::Header(ExportHeader {
            format: EXPORT_FORMAT.into(),
            version: EXPORT_VERSION,
            exported_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            embedder_model: self.embedder.model_name().to_string(),
            dimension: self.embedder.dimension(),
            vectors: options.vectors,
        });
        write_record(out, &header, &mut counts)?;
        self.export_drawers(out, options, &mut counts).await?;
        let mut after: Option<String> = None;
        loop {
            let page = self
                .closets
                .closet_rows(after.as_deref(), EXPORT_PAGE)
                .await?;
            let done = page.len() < EXPORT_PAGE;
            after = page.last().map(|c| c.id.clone());
            for c in page {
                write_record(out, &ExportRecord::Closet(c), &mut counts)?;
            }
            if done {
                break;
            }
        }
        self.export_graph(out, &mut counts).await?;
        for value in self.links.tunnel_records().await? {
            write_record(
                out,
                &ExportRecord::Tunnel(ExportedLink { value }),
                &mut counts,
            )?;
        }
        for value in self.links.hallway_records().await? {
            write_record(
                out,
                &ExportRecord::Hallway(ExportedLink { value }),
                &mut counts,
            )?;
        }
        self.export_coordination(out, &mut counts).await?;
        write_record(out, &ExportRecord::End(ExportEnd { counts }), &mut counts)?;
        out.flush().map_err(write_failed)?;
        Ok(counts)
    }

    /// The drawers, a page at a time, with their vectors when asked.
    async fn export_drawers(
        &self,
        out: &mut (dyn Write + Send),
        options: &ExportOptions,
        counts: &mut ExportCounts,
    ) -> Result<()> {
        let mut pages = DrawerPages::new(DrawerFilter::all(), EXPORT_PAGE);
        while let Some(page) = pages.next(self).await? {
            let mut vectors = if options.vectors {
                let ids: Vec<String> = page.iter().map(|d| d.id.clone()).collect();
                self.store
                    .vectors(&ids)
                    .await?
                    .into_iter()
                    .collect::<std::collections::HashMap<_, _>>()
            } else {
                Default::default()
            };
            for drawer in page {
                let vector = vectors.remove(&drawer.id);
                if options.vectors && vector.is_none() {
                    // Deleted since its page was read: it is no longer part of the palace.
                    continue;
                }
                let record = ExportRecord::Drawer(ExportedDrawer { drawer, vector });
                write_record(out, &record, counts)?;
            }
        }
        Ok(())
    }

    /// The graph's entities, then its triples.
    async fn export_graph(
        &self,
        out: &mut (dyn Write + Send),
        counts: &mut ExportCounts,
    ) -> Result<()> {
        let mut entity_ids: std::collections::HashSet<String> = Default::default();
        let mut after: Option<String> = None;
        loop {
            let page = self.kg.entity_rows(after.as_deref(), EXPORT_PAGE).await?;
            let done = page.len() < EXPORT_PAGE;
            after = page.last().map(|e| e.id.clone());
            for e in page {
                entity_ids.insert(e.id.clone());
                write_record(out, &ExportRecord::Entity(e), counts)?;
            }
            if done {
                break;
            }
        }
        let mut after: Option<String> = None;
        loop {
            let page = self.kg.triple_rows(after.as_deref(), EXPORT_PAGE).await?;
            let done = page.len() < EXPORT_PAGE;
            after = page.last().map(|t| t.id.clone());
            for t in page {
                // A fact naming an entity the graph lacks (written without foreign keys, or
                // the entity added after its page was read) carries one, so it imports.
                for id in [&t.subject, &t.object] {
                    if entity_ids.insert(id.clone()) {
                        let stub = EntityRow {
                            id: id.clone(),
                            name: id.clone(),
                            entity_type: Some("unknown".into()),
                            properties: Some("{}".into()),
                            created_at: None,
                        };
                        write_record(out, &ExportRecord::Entity(stub), counts)?;
                    }
                }
                write_record(out, &ExportRecord::Triple(t), counts)?;
            }
            if done {
                return Ok(());
            }
        }
    }

    /// The coordination log: artifacts, then events in append order.
    async fn export_coordination(
        &self,
        out: &mut (dyn Write + Send),
        counts: &mut ExportCounts,
    ) -> Result<()> {
        let log = self.coordination.log();
        let mut after: Option<String> = None;
        loop {
            let page = log.artifact_rows(after.as_deref(), EXPORT_PAGE).await?;
            let done = page.len() < EXPORT_PAGE;
            after = page.last().map(|a| a.id.clone());
            for a in page {
                write_record(out, &ExportRecord::Artifact(a), counts)?;
            }
            if done {
                break;
            }
        }
        let mut since: Option<String> = None;
        loop {
            let filter = crate::coordination::EventFilter::after(since.clone(), EXPORT_PAGE);
            let page = log.list_events(&filter).await?;
            let done = page.len() < EXPORT_PAGE;
            since = page.last().map(|e| e.id.clone());
            for e in page {
                write_record(out, &ExportRecord::Event(e), counts)?;
            }
            if done {
                return Ok(());
            }
        }
    }

    /// Reads an export (any release's, any backend's) into this palace, creating it when
    /// missing. Records already stored (same id) are left as they are, so importing twice adds
    /// nothing and an interrupted import re-run completes. Drawers keep their ids and metadata;
    /// their vectors are used when the export's embedder is this palace's, else they are
    /// embedded here. A malformed line, a newer format or a file cut short (no `end` line, or
    /// counts that differ from it) is an error naming the line; what came before it is stored.
    pub async fn import(&self, input: &mut (dyn BufRead + Send)) -> Result<ImportReport> {
        let mut reader = ExportReader::new(input);
        let header = match reader.next()? {
            Some(ExportRecord::Header(h)) => h,
            _ => return Err(reader.error("the first line is not an export header")),
        };
        if header.format != EXPORT_FORMAT {
            return Err(reader.error(format!(
                "format {:?} is not {EXPORT_FORMAT:?}",
                header.format
            )));
        }
        if header.version > EXPORT_VERSION {
            return Err(reader.error(format!(
                "export version {} is newer than this release reads ({EXPORT_VERSION}): upgrade MemPalace",
                header.version
            )));
        }
        let same_embedder = header.embedder_model == self.embedder.model_name()
            && header.dimension == self.embedder.dimension();
        self.create_if_missing().await?;
        let mut import = ImportState::default();
        match self
            .import_records(&mut reader, &mut import, &header, same_embedder)
            .await
        {
            Ok(()) => Ok(import.report),
            Err(e) => {
                // What came before the bad line is stored, as documented.
                import.flush(self).await?;
                Err(e)
            }
        }
    }

    /// The records after the header, up to and including the end line.
    async fn import_records(
        &self,
        reader: &mut ExportReader<'_>,
        import: &mut ImportState,
        header: &ExportHeader,
        same_embedder: bool,
    ) -> Result<()> {
        loop {
            let record = match reader.next()? {
                Some(r) => r,
                None => {
                    return Err(reader.error(
                        "the export ends without its end line (cut short?); what it held is imported, re-run the import on the whole file",
                    ));
                }
            };
            import.report.read.count(&record);
            match record {
                ExportRecord::Header(_) => return Err(reader.error("a second header")),
                ExportRecord::Drawer(d) => {
                    crate::validation::validate_drawer(&d.drawer).map_err(|e| reader.failed(e))?;
                    if let Some(v) = &d.vector
                        && v.len() != header.dimension
                    {
                        return Err(reader.error(format!(
                            "drawer {} has a vector of {} dimensions; the header says {}",
                            d.drawer.id,
                            v.len(),
                            header.dimension
                        )));
                    }
                    let vector = d.vector.filter(|_| same_embedder);
                    import.drawers.push((d.drawer, vector));
                    if import.drawers.len() >= IMPORT_DRAWER_BATCH {
                        import
                            .flush_drawers(self)
                            .await
                            .map_err(|e| reader.failed(e))?;
                    }
                }
                ExportRecord::Closet(c) => {
                    crate::validation::validate_closet(&c).map_err(|e| reader.failed(e))?;
                    import.closets.push(c);
                }
                ExportRecord::Entity(e) => {
                    e.validate().map_err(|e| reader.failed(e))?;
                    import.entities.push(e);
                    if import.entities.len() >= IMPORT_ROW_BATCH {
                        import
                            .flush_graph(self)
                            .await
                            .map_err(|e| reader.failed(e))?;
                    }
                }
                ExportRecord::Triple(t) => {
                    t.validate().map_err(|e| reader.failed(e))?;
                    import.triples.push(t);
                    if import.triples.len() >= IMPORT_ROW_BATCH {
                        import
                            .flush_graph(self)
                            .await
                            .map_err(|e| reader.failed(e))?;
                    }
                }
                ExportRecord::Tunnel(l) => import.tunnels.push(l.value),
                ExportRecord::Hallway(l) => import.hallways.push(l.value),
                ExportRecord::Artifact(a) => {
                    import.report.added.artifacts += u64::from(
                        self.coordination
                            .log()
                            .import_artifact(&a)
                            .await
                            .map_err(|e| reader.failed(e))?,
                    );
                }
                ExportRecord::Event(e) => {
                    import.report.added.events += u64::from(
                        self.coordination
                            .log()
                            .import_event(&e)
                            .await
                            .map_err(|e| reader.failed(e))?,
                    );
                }
                ExportRecord::End(end) => {
                    import.flush(self).await?;
                    if reader.next()?.is_some() {
                        return Err(reader.error("lines after the end line"));
                    }
                    if end.counts != import.report.read {
                        return Err(reader.error(format!(
                            "the export's end line counts {:?}, but {:?} were read",
                            end.counts, import.report.read
                        )));
                    }
                    // Bulk filing: the store's deferred upkeep (an index now due) as after a mine.
                    self.settle().await?;
                    return Ok(());
                }
            }
        }
    }
}

/// Records waiting to be stored, and what was stored so far.
#[derive(Default)]
struct ImportState {
    drawers: Vec<(Drawer, Option<Vec<f32>>)>,
    closets: Vec<crate::closets::Closet>,
    entities: Vec<EntityRow>,
    triples: Vec<TripleRow>,
    tunnels: Vec<Value>,
    hallways: Vec<Value>,
    report: ImportReport,
}

impl ImportState {
    /// Stores everything waiting.
    async fn flush(&mut self, palace: &Palace) -> Result<()> {
        self.flush_drawers(palace).await?;
        self.flush_graph(palace).await?;
        if !self.closets.is_empty() {
            let closets = std::mem::take(&mut self.closets);
            let _guard = palace.write_lock.acquire().await?;
            self.report.added.closets += palace.closets.insert_missing(&closets).await? as u64;
        }
        let tunnels = std::mem::take(&mut self.tunnels);
        self.report.added.tunnels += merge_links(palace.links.as_ref(), tunnels, true).await?;
        let hallways = std::mem::take(&mut self.hallways);
        self.report.added.hallways += merge_links(palace.links.as_ref(), hallways, false).await?;
        Ok(())
    }

    /// Files the waiting drawers.
    async fn flush_drawers(&mut self, palace: &Palace) -> Result<()> {
        if self.drawers.is_empty() {
            return Ok(());
        }
        let batch = std::mem::take(&mut self.drawers);
        let (drawers, vectors): (Vec<Drawer>, Vec<Option<Vec<f32>>>) = batch.into_iter().unzip();
        let (imported, embedded) = palace
            .import_drawers_with_vectors(&drawers, vectors)
            .await?;
        self.report.added.drawers += imported.imported;
        self.report.embedded += embedded;
        Ok(())
    }

    /// Stores the waiting graph rows in one transaction.
    async fn flush_graph(&mut self, palace: &Palace) -> Result<()> {
        if self.entities.is_empty() && self.triples.is_empty() {
            return Ok(());
        }
        let added = palace.kg.import_rows(&self.entities, &self.triples).await?;
        self.entities.clear();
        self.triples.clear();
        self.report.added.entities += added.entities;
        self.report.added.triples += added.triples;
        Ok(())
    }
}

/// Adds the link records whose `id` is not stored yet (tunnels, else hallways); returns how
/// many were added. A record without a text `id` is refused.
pub(super) async fn merge_links(
    links: &dyn crate::palace_links::PalaceLinks,
    incoming: Vec<Value>,
    tunnels: bool,
) -> Result<u64> {
    if incoming.is_empty() {
        return Ok(0);
    }
    if let Some(bad) = incoming
        .iter()
        .find(|r| r.get("id").and_then(Value::as_str).is_none())
    {
        let what = if tunnels { "tunnel" } else { "hallway" };
        let shown: String = bad.to_string().chars().take(80).collect();
        return Err(PalaceError::invalid(
            "import",
            format!("a {what} record without an id: {shown}"),
        ));
    }
    let added = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&added);
    let edit: crate::palace_links::RecordEdit = Box::new(move |records: &mut Vec<Value>| {
        let mut known: std::collections::HashSet<String> = records
            .iter()
            .filter_map(|r| r.get("id").and_then(Value::as_str).map(str::to_string))
            .collect();
        for record in incoming {
            let id = record
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if known.insert(id) {
                records.push(record);
                counter.fetch_add(1, Ordering::Relaxed);
            }
        }
        counter.load(Ordering::Relaxed) > 0
    });
    if tunnels {
        links.edit_tunnel_records(edit).await?;
    } else {
        links.edit_hallway_records(edit).await?;
    }
    Ok(added.load(Ordering::Relaxed))
}

/// Reads an export a line at a time, bounding each line, and names the line of an error.
struct ExportReader<'a> {
    input: &'a mut (dyn BufRead + Send),
    line: u64,
    buffer: Vec<u8>,
}

impl<'a> ExportReader<'a> {
    fn new(input: &'a mut (dyn BufRead + Send)) -> Self {
        ExportReader {
            input,
            line: 0,
            buffer: Vec::new(),
        }
    }

    /// The next record (`None` at the end of the input); blank lines are skipped.
    fn next(&mut self) -> Result<Option<ExportRecord>> {
        loop {
            self.buffer.clear();
            let read = std::io::Read::take(&mut *self.input, MAX_EXPORT_LINE_BYTES as u64 + 1)
                .read_until(b'\n', &mut self.buffer)
                .map_err(|e| self.error(format!("could not read the export: {e}")))?;
            if read == 0 {
                return Ok(None);
            }
            self.line += 1;
            if self.buffer.len() > MAX_EXPORT_LINE_BYTES {
                return Err(self.error(format!("longer than {MAX_EXPORT_LINE_BYTES} bytes")));
            }
            let text = std::str::from_utf8(&self.buffer)
                .map_err(|_| self.error("not UTF-8 text"))?
                .trim();
            if text.is_empty() {
                continue;
            }
            return serde_json::from_str(text)
                .map(Some)
                .map_err(|e| self.error(format!("not an export record: {e}")));
        }
    }

    /// An error about the current line.
    fn error(&self, reason: impl std::fmt::Display) -> PalaceError {
        PalaceError::invalid("import", format!("line {}: {reason}", self.line))
    }

    /// A failure storing the records read up to the current line.
    fn failed(&self, err: PalaceError) -> PalaceError {
        match err {
            PalaceError::InvalidInput { field, reason } => {
                PalaceError::invalid("import", format!("line {}: {field}: {reason}", self.line))
            }
            other => other,
        }
    }
}
