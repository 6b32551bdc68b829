//! The Arrow schema of the drawers table, and conversion between rows and drawers.

use std::sync::Arc;

use arrow_array::Array as _;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, UInt32Type};
use arrow_array::{
    ArrayRef, FixedSizeListArray, Float32Array, RecordBatch, StringArray, UInt32Array,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use mempalace_core::drawer::{entities_from_field, entities_to_field};
use mempalace_core::{AddedBy, Drawer, DrawerMetadata, PalaceError, Result};

/// Name of the vector column.
pub(crate) const VECTOR_COLUMN: &str = "vector";
/// Which of the columns added after the first release a table has: tables made earlier gain
/// them (all null) on their first write, and reads meanwhile leave them out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct LaterColumns {
    /// `authored_at` and `conversation` (conversation mining).
    pub(crate) dated: bool,
    /// `entities` (the names hallways are built from).
    pub(crate) entities: bool,
}

impl LaterColumns {
    /// A table that has every later column.
    pub(crate) const ALL: LaterColumns = LaterColumns {
        dated: true,
        entities: true,
    };

    /// The later columns `schema` has.
    pub(crate) fn of(schema: &Schema) -> Self {
        let has = |c: &str| schema.field_with_name(c).is_ok();
        LaterColumns {
            dated: DATED_COLUMNS.iter().all(|c| has(c)),
            entities: has(ENTITIES_COLUMN),
        }
    }

    /// Whether every later column is there.
    pub(crate) fn complete(self) -> bool {
        self == Self::ALL
    }

    /// The later columns missing, as a schema of their own in table order (what an older
    /// table gains, all null).
    pub(crate) fn missing(self) -> SchemaRef {
        let mut fields = Vec::new();
        if !self.dated {
            fields.push(Field::new(AUTHORED_AT_COLUMN, DataType::Utf8, true));
            fields.push(Field::new(CONVERSATION_COLUMN, DataType::Utf8, true));
        }
        if !self.entities {
            fields.push(Field::new(ENTITIES_COLUMN, DataType::Utf8, true));
        }
        Arc::new(Schema::new(fields))
    }

    /// The later columns present, in table order.
    fn names(self) -> Vec<&'static str> {
        let mut names = Vec::new();
        if self.dated {
            names.extend(DATED_COLUMNS);
        }
        if self.entities {
            names.push(ENTITIES_COLUMN);
        }
        names
    }
}

/// Every column but the vector, for reads that need no vector (of the later columns, those
/// the table has).
pub(crate) fn drawer_columns(later: LaterColumns) -> Vec<&'static str> {
    let mut columns = vec![
        ID_COLUMN,
        "text",
        "wing",
        "room",
        "source_file",
        "chunk_index",
        "added_by",
        "filed_at",
    ];
    columns.extend(later.names());
    columns
}

/// The columns added for conversation mining: when the words were written, and the drawer's
/// place in its conversation (JSON).
pub(crate) const DATED_COLUMNS: [&str; 2] = [AUTHORED_AT_COLUMN, CONVERSATION_COLUMN];
/// When a drawer's words were written (nullable).
pub(crate) const AUTHORED_AT_COLUMN: &str = "authored_at";
/// A drawer's conversation reference as JSON (nullable).
pub(crate) const CONVERSATION_COLUMN: &str = "conversation";
/// The names a drawer mentions, `;`-separated as 3.11 stores them (nullable).
pub(crate) const ENTITIES_COLUMN: &str = "entities";

/// The distance column a vector query adds.
pub(crate) const DISTANCE_COLUMN: &str = "_distance";
/// What a nearest-neighbour query returns: the drawer columns and, asked for explicitly (Lance
/// deprecates adding it implicitly), the distance.
pub(crate) fn neighbour_columns(later: LaterColumns) -> Vec<&'static str> {
    let mut columns = drawer_columns(later);
    columns.push(DISTANCE_COLUMN);
    columns
}

/// The drawer id column.
pub(crate) const ID_COLUMN: &str = "id";
/// The column the full-text (BM25) index covers.
pub(crate) const TEXT_COLUMN: &str = "text";
/// The relevance column a full-text query adds (higher is better).
pub(crate) const SCORE_COLUMN: &str = "_score";
/// What a full-text query returns: the drawer columns, the vector (so search computes the
/// hit's distance without a second query) and the score.
pub(crate) fn lexical_columns(later: LaterColumns) -> Vec<&'static str> {
    let mut columns = drawer_columns(later);
    columns.push(VECTOR_COLUMN);
    columns.push(SCORE_COLUMN);
    columns
}

/// The vectors of a batch's `vector` column, row by row.
pub(crate) fn batch_vectors(batch: &RecordBatch) -> Result<Vec<Vec<f32>>> {
    let missing = || PalaceError::store("lancedb", "read", "no vector column in the result");
    let lists = batch
        .column_by_name(VECTOR_COLUMN)
        .and_then(|c| c.as_any().downcast_ref::<FixedSizeListArray>())
        .ok_or_else(missing)?;
    let values = lists
        .values()
        .as_any()
        .downcast_ref::<Float32Array>()
        .ok_or_else(missing)?;
    let width = lists.value_length() as usize;
    Ok((0..lists.len())
        .map(|i| values.values()[i * width..(i + 1) * width].to_vec())
        .collect())
}

/// The table's schema for vectors of `dimension`.
pub(crate) fn drawers_schema(dimension: usize) -> SchemaRef {
    // The id is declared the table's (unenforced) primary key, so that two writers merging the
    // same new id at once conflict and retry instead of both inserting it.
    let id = Field::new(ID_COLUMN, DataType::Utf8, false).with_metadata(
        [(
            "lance-schema:unenforced-primary-key".to_string(),
            "true".to_string(),
        )]
        .into(),
    );
    Arc::new(Schema::new(vec![
        id,
        Field::new("text", DataType::Utf8, false),
        Field::new("wing", DataType::Utf8, false),
        Field::new("room", DataType::Utf8, false),
        Field::new("source_file", DataType::Utf8, false),
        Field::new("chunk_index", DataType::UInt32, false),
        Field::new("added_by", DataType::Utf8, false),
        Field::new("filed_at", DataType::Utf8, false),
        Field::new(
            VECTOR_COLUMN,
            DataType::FixedSizeList(
                Arc::new(Field::new("item", DataType::Float32, true)),
                dimension as i32,
            ),
            false,
        ),
        // Last, in the order an older table gains them, so both layouts match.
        Field::new(AUTHORED_AT_COLUMN, DataType::Utf8, true),
        Field::new(CONVERSATION_COLUMN, DataType::Utf8, true),
        Field::new(ENTITIES_COLUMN, DataType::Utf8, true),
    ]))
}

/// The vector dimension recorded in a table's schema.
pub(crate) fn vector_dimension(schema: &Schema) -> Option<usize> {
    match schema.field_with_name(VECTOR_COLUMN).ok()?.data_type() {
        DataType::FixedSizeList(_, n) => Some(*n as usize),
        _ => None,
    }
}

fn arrow_err(operation: &'static str) -> impl Fn(arrow_schema::ArrowError) -> PalaceError {
    move |e| PalaceError::store("lancedb", operation, e)
}

/// One record batch holding drawers and their vectors (already checked to pair up).
pub(crate) fn drawers_batch(
    schema: &SchemaRef,
    drawers: &[&Drawer],
    vectors: &[&Vec<f32>],
) -> Result<RecordBatch> {
    let dimension = vector_dimension(schema).unwrap_or(0);
    let strings = |f: fn(&Drawer) -> &str| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(drawers.iter().map(|d| f(d))))
    };
    let flat: Vec<f32> = vectors.iter().flat_map(|v| v.iter().copied()).collect();
    let item = Arc::new(Field::new("item", DataType::Float32, true));
    let vectors = FixedSizeListArray::try_new(
        item,
        dimension as i32,
        Arc::new(Float32Array::from(flat)),
        None,
    )
    .map_err(arrow_err("upsert"))?;
    RecordBatch::try_new(
        Arc::clone(schema),
        vec![
            strings(|d| &d.id),
            strings(|d| &d.text),
            strings(|d| &d.metadata.wing),
            strings(|d| &d.metadata.room),
            strings(|d| &d.metadata.source_file),
            Arc::new(UInt32Array::from_iter_values(
                drawers.iter().map(|d| d.metadata.chunk_index),
            )),
            strings(|d| d.metadata.added_by.as_str()),
            strings(|d| &d.metadata.filed_at),
            Arc::new(vectors),
            Arc::new(StringArray::from_iter(
                drawers.iter().map(|d| d.metadata.authored_at.as_deref()),
            )),
            Arc::new(StringArray::from_iter(drawers.iter().map(|d| {
                d.metadata
                    .conversation
                    .as_ref()
                    .and_then(|c| serde_json::to_string(c).ok())
            }))),
            Arc::new(StringArray::from_iter(
                drawers
                    .iter()
                    .map(|d| entities_to_field(&d.metadata.entities)),
            )),
        ],
    )
    .map_err(arrow_err("upsert"))
}

fn column<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a arrow_array::ArrayRef> {
    batch.column_by_name(name).ok_or_else(|| {
        PalaceError::store(
            "lancedb",
            "read",
            format!("column {name} missing from result"),
        )
    })
}

fn utf8<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a StringArray> {
    column(batch, name)?
        .as_string_opt::<i32>()
        .ok_or_else(|| PalaceError::store("lancedb", "read", format!("column {name} is not utf8")))
}

/// A nullable text column, when the batch has it.
fn optional_utf8<'a>(batch: &'a RecordBatch, name: &str) -> Option<&'a StringArray> {
    batch.column_by_name(name)?.as_string_opt::<i32>()
}

/// The `_distance` column of a nearest-neighbour result batch.
fn batch_distances(batch: &RecordBatch) -> Result<&Float32Array> {
    batch
        .column_by_name(DISTANCE_COLUMN)
        .and_then(|c| c.as_primitive_opt::<Float32Type>())
        .ok_or_else(|| PalaceError::store("lancedb", "query", "no _distance column in the result"))
}

/// Each row of nearest-neighbour result batches, as `rows` reads a batch, with its
/// `_distance`: the drawers of `query` and the ids of `nearest_ids` alike.
pub(crate) fn rows_with_distances<T>(
    batches: &[RecordBatch],
    rows: impl Fn(&RecordBatch) -> Result<Vec<T>>,
) -> Result<Vec<(T, f32)>> {
    let mut out = Vec::new();
    for batch in batches {
        let distances = batch_distances(batch)?;
        out.extend(
            rows(batch)?
                .into_iter()
                .enumerate()
                .map(|(i, row)| (row, distances.value(i))),
        );
    }
    Ok(out)
}

/// The ids in a result batch (which must hold the `id` column).
pub(crate) fn batch_ids(batch: &RecordBatch) -> Result<Vec<String>> {
    Ok(utf8(batch, ID_COLUMN)?
        .iter()
        .flatten()
        .map(str::to_string)
        .collect())
}

/// The drawers in a result batch (which must hold the [`drawer_columns`]).
pub(crate) fn batch_drawers(batch: &RecordBatch) -> Result<Vec<Drawer>> {
    let (id, text, wing, room) = (
        utf8(batch, ID_COLUMN)?,
        utf8(batch, "text")?,
        utf8(batch, "wing")?,
        utf8(batch, "room")?,
    );
    let (source, added_by, filed_at) = (
        utf8(batch, "source_file")?,
        utf8(batch, "added_by")?,
        utf8(batch, "filed_at")?,
    );
    let authored = optional_utf8(batch, AUTHORED_AT_COLUMN);
    let conversation = optional_utf8(batch, CONVERSATION_COLUMN);
    let entities = optional_utf8(batch, ENTITIES_COLUMN);
    let chunk = column(batch, "chunk_index")?
        .as_primitive_opt::<UInt32Type>()
        .ok_or_else(|| PalaceError::store("lancedb", "read", "chunk_index is not uint32"))?;
    Ok((0..batch.num_rows())
        .map(|i| Drawer {
            id: id.value(i).to_string(),
            text: text.value(i).to_string(),
            metadata: DrawerMetadata {
                wing: wing.value(i).to_string(),
                room: room.value(i).to_string(),
                source_file: source.value(i).to_string(),
                chunk_index: chunk.value(i),
                added_by: AddedBy::parse_lenient(added_by.value(i)),
                filed_at: filed_at.value(i).to_string(),
                authored_at: authored
                    .filter(|c| c.is_valid(i))
                    .map(|c| c.value(i).to_string()),
                conversation: conversation
                    .filter(|c| c.is_valid(i))
                    .and_then(|c| serde_json::from_str(c.value(i)).ok()),
                entities: entities
                    .filter(|c| c.is_valid(i))
                    .map(|c| entities_from_field(c.value(i)))
                    .unwrap_or_default(),
            },
        })
        .collect())
}

/// (wing, room) of every row of a batch holding those two columns.
pub(crate) fn batch_wing_rooms(batch: &RecordBatch) -> Result<Vec<(String, String)>> {
    let (wing, room) = (utf8(batch, "wing")?, utf8(batch, "room")?);
    Ok((0..batch.num_rows())
        .map(|i| (wing.value(i).to_string(), room.value(i).to_string()))
        .collect())
}
