//! `mempalace export` and `mempalace import`: the whole palace to and from MemPalace's export
//! format (JSON Lines), thin calls to `Palace::export` / `Palace::import`.

use std::io::{BufReader, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use mempalace::core::Palace;
use mempalace::core::palace_export::{ExportCounts, ExportOptions};

/// `-` as a path: standard input or output.
fn is_stdio(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// One line per kind of record.
fn counts_lines(counts: &ExportCounts) -> String {
    format!(
        "  drawers:   {}\n  closets:   {}\n  entities:  {}\n  facts:     {}\n  tunnels:   {}\n  hallways:  {}\n  artifacts: {}\n  events:    {}\n",
        counts.drawers,
        counts.closets,
        counts.entities,
        counts.triples,
        counts.tunnels,
        counts.hallways,
        counts.artifacts,
        counts.events
    )
}

/// `mempalace export FILE [--no-vectors]`: writes FILE, readable by its owner only, through a
/// temporary file beside it renamed when complete (FILE is never left half written); stdout
/// for `-`.
pub async fn export(palace: &Palace, file: &Path, no_vectors: bool, json: bool) -> Result<()> {
    let options = ExportOptions {
        vectors: !no_vectors,
    };
    if is_stdio(file) {
        let mut out = BufWriter::new(std::io::stdout());
        palace.export(&mut out, &options).await?;
        out.flush()?;
        return Ok(());
    }
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let tmp = tempfile::NamedTempFile::new_in(&dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    let mut out = BufWriter::new(tmp.as_file());
    let counts = palace.export(&mut out, &options).await?;
    out.flush()?;
    drop(out);
    tmp.as_file().sync_all()?;
    tmp.persist(file)
        .with_context(|| format!("cannot write {}", file.display()))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&counts)?);
    } else {
        print!("Exported to {}:\n{}", file.display(), counts_lines(&counts));
    }
    Ok(())
}

/// `mempalace import FILE`: reads FILE, or stdin for `-`.
pub async fn import(palace: &Palace, file: &Path, json: bool) -> Result<()> {
    let report = if is_stdio(file) {
        let mut input = BufReader::new(std::io::stdin());
        palace.import(&mut input).await?
    } else {
        let handle =
            std::fs::File::open(file).with_context(|| format!("cannot read {}", file.display()))?;
        let mut input = BufReader::new(handle);
        palace.import(&mut input).await?
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!(
            "Imported (new records; the rest were already here):\n{}",
            counts_lines(&report.added)
        );
        if report.embedded > 0 {
            println!(
                "  ({} drawers embedded here: the export was made with another embedder or without vectors)",
                report.embedded
            );
        }
    }
    Ok(())
}
