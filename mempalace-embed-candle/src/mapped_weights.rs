//! The model's weights read in place from the memory-mapped safetensors file.
//!
//! The encoder multiplies straight out of the mapping: the big matrices (the word table and
//! the dense layers, nearly all of the file's 90 MB) are never copied onto the heap in f32.
//! Their pages are the file's pages, shared with every other process that loads the model
//! and given back to the page cache under memory pressure; the word table's rows are read
//! only for the tokens that occur. (Short texts read the dense layers from a half-precision
//! copy instead, half the bytes: see [`crate::half_weights`].)

use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::Mmap;
use safetensors::{Dtype, SafeTensors, tensor::Metadata};

use crate::error::EmbedError;

/// A safetensors file mapped read-only, with its tensor index.
pub(crate) struct MappedWeights {
    path: PathBuf,
    map: Arc<Mmap>,
    metadata: Metadata,
    /// Where the tensor data starts in the file (after the length and the JSON header).
    data_start: usize,
    /// `"bert."` when the tensors are named as in `BertForXxx`, else empty.
    prefix: &'static str,
}

/// An `f32` matrix of the model: a window on the mapping, or (when the file's data cannot be
/// read in place: another element type, a misaligned offset, a big-endian host) a copy.
#[derive(Clone)]
pub(crate) struct WeightMatrix {
    storage: Storage,
    rows: usize,
    cols: usize,
}

#[derive(Clone)]
enum Storage {
    /// `len` floats at byte `offset` of the mapping.
    Mapped {
        map: Arc<Mmap>,
        offset: usize,
        len: usize,
    },
    Owned(Arc<[f32]>),
}

impl WeightMatrix {
    /// The elements, row-major.
    pub fn as_slice(&self) -> &[f32] {
        match &self.storage {
            Storage::Mapped { map, offset, len } => {
                let bytes = &map[*offset..*offset + *len * 4];
                // SAFETY: `MappedWeights::matrix` only builds a mapped matrix over an f32
                // tensor whose bytes lie inside the mapping at a 4-byte-aligned address, on a
                // little-endian host (safetensors' byte order), so these bytes are `len`
                // valid f32s; the mapping lives as long as `map`.
                unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<f32>(), *len) }
            }
            Storage::Owned(values) => values,
        }
    }

    /// Rows (the first dimension).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns (the product of the other dimensions).
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Whether the elements are read from the mapping rather than copied.
    pub fn is_mapped(&self) -> bool {
        matches!(self.storage, Storage::Mapped { .. })
    }

    /// Row `r`.
    pub fn row(&self, r: usize) -> &[f32] {
        &self.as_slice()[r * self.cols..(r + 1) * self.cols]
    }

    /// A `rows × cols` matrix of these values (row-major), held on the heap.
    #[cfg(test)]
    pub fn owned(values: Vec<f32>, rows: usize, cols: usize) -> Self {
        assert_eq!(values.len(), rows * cols);
        WeightMatrix {
            storage: Storage::Owned(values.into()),
            rows,
            cols,
        }
    }

    /// Tells the kernel this process will not read the matrix's pages of the mapping soon:
    /// they leave its resident set (staying in the page cache) and are mapped again if read.
    /// Does nothing for a copied matrix.
    pub fn release_pages(&self) {
        #[cfg(unix)]
        if let Storage::Mapped { map, offset, len } = &self.storage {
            debug_assert!(
                offset + len * 4 <= map.len(),
                "the matrix lies inside the mapping"
            );
            // SAFETY: the mapping is a read-only view of a file that is never modified while
            // loaded (see `MappedWeights::open`): a page dropped here reads back the same
            // bytes from the file when next touched, so no reference sees a change.
            let done = unsafe {
                map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, *offset, *len * 4)
            };
            if let Err(e) = done {
                tracing::debug!(error = %e, "could not release the mapped weights' pages");
            }
        }
    }
}

impl MappedWeights {
    /// Maps `path` and reads its index (the tensors' names, types, shapes and offsets).
    pub fn open(path: &Path) -> Result<Self, EmbedError> {
        let fail = |message: String| EmbedError::Load {
            path: path.to_path_buf(),
            message,
        };
        let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
        // SAFETY: the file is mapped read-only and must not be modified while loaded, which
        // holds for a model cache that is only ever replaced by rename (as candle's own
        // `from_mmaped_safetensors` requires).
        let map = unsafe { Mmap::map(&file) }.map_err(|e| fail(e.to_string()))?;
        let (header_len, metadata) =
            SafeTensors::read_metadata(&map).map_err(|e| fail(format!("not safetensors: {e}")))?;
        let prefix = if metadata.info("embeddings.word_embeddings.weight").is_some() {
            ""
        } else {
            "bert."
        };
        Ok(MappedWeights {
            path: path.to_path_buf(),
            map: Arc::new(map),
            metadata,
            data_start: 8 + header_len,
            prefix,
        })
    }

    /// A load error naming the file.
    pub fn error(&self, message: String) -> EmbedError {
        EmbedError::Load {
            path: self.path.clone(),
            message,
        }
    }

    /// The tensor `name` (after the model prefix) as a `rows × cols` matrix of f32, read in
    /// place when possible. Its shape must have `rows * cols` elements and `rows` first.
    pub fn matrix(&self, name: &str, rows: usize, cols: usize) -> Result<WeightMatrix, EmbedError> {
        let full = format!("{}{name}", self.prefix);
        let info = self
            .metadata
            .info(&full)
            .ok_or_else(|| self.error(format!("the model has no tensor {full}")))?;
        let elements: usize = info.shape.iter().product();
        if info.shape.first() != Some(&rows) || elements != rows * cols {
            return Err(self.error(format!(
                "tensor {full} has shape {:?}, expected [{rows}, {cols}]",
                info.shape
            )));
        }
        let (start, end) = info.data_offsets;
        let offset = self.data_start + start;
        let bytes = &self.map[offset..self.data_start + end];
        let storage = match info.dtype {
            Dtype::F32
                if cfg!(target_endian = "little")
                    && (bytes.as_ptr() as usize).is_multiple_of(std::mem::align_of::<f32>()) =>
            {
                Storage::Mapped {
                    map: Arc::clone(&self.map),
                    offset,
                    len: elements,
                }
            }
            Dtype::F32 => Storage::Owned(
                bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect(),
            ),
            Dtype::F16 => Storage::Owned(
                bytes
                    .chunks_exact(2)
                    .map(|b| half_to_f32(u16::from_le_bytes([b[0], b[1]])))
                    .collect(),
            ),
            other => {
                return Err(self.error(format!(
                    "tensor {full} holds {other:?}; only F32 and F16 are read"
                )));
            }
        };
        Ok(WeightMatrix {
            storage,
            rows,
            cols,
        })
    }

    /// The tensor `name` as a vector of `len` floats (biases, norms).
    pub fn vector(&self, name: &str, len: usize) -> Result<Vec<f32>, EmbedError> {
        Ok(self.matrix(name, len, 1)?.as_slice().to_vec())
    }
}

/// IEEE 754 half precision to single precision.
fn half_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exponent = u32::from((h >> 10) & 0x1f);
    let mantissa = u32::from(h & 0x3ff);
    let bits = match (exponent, mantissa) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: normalise the mantissa.
            let shift = m.leading_zeros() - 21;
            let m = (m << shift) & 0x3ff;
            sign | ((127 - 15 + 1 - shift) << 23) | (m << 13)
        }
        (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_values_convert_exactly() {
        for (h, want) in [
            (0x0000u16, 0.0f32),
            (0x3c00, 1.0),
            (0xc000, -2.0),
            (0x3555, 0.333_251_95),
            (0x7bff, 65504.0),
            (0x0001, 5.960_464_5e-8),
            (0x0400, 6.103_515_6e-5),
        ] {
            assert_eq!(half_to_f32(h), want, "{h:#06x}");
        }
        assert!(half_to_f32(0x7c00).is_infinite());
        assert!(half_to_f32(0x7e00).is_nan());
    }

    /// `dir/model.safetensors` with this header and data. The header is padded with spaces
    /// to a multiple of 8 bytes with its length, as safetensors writers do, so the data
    /// starts aligned.
    fn write_safetensors(dir: &Path, header: &str, data: &[u8]) -> PathBuf {
        let mut header = header.to_string();
        while !(header.len() + 8).is_multiple_of(8) {
            header.push(' ');
        }
        let path = dir.join("model.safetensors");
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(data);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn aligned_f32_tensors_are_read_in_place_and_others_copied() {
        let dir = tempfile::tempdir().unwrap();
        let mut data: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        data.extend_from_slice(&0x3c00u16.to_le_bytes());
        data.extend_from_slice(&0xc000u16.to_le_bytes());
        let header = r#"{"bert.embeddings.word_embeddings.weight":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},"bert.half":{"dtype":"F16","shape":[2],"data_offsets":[24,28]}}"#;
        let weights = MappedWeights::open(&write_safetensors(dir.path(), header, &data)).unwrap();
        let m = weights
            .matrix("embeddings.word_embeddings.weight", 2, 3)
            .unwrap();
        assert!(m.is_mapped());
        assert_eq!(m.row(1), &[4.0, 5.0, 6.0]);
        assert_eq!(weights.vector("half", 2).unwrap(), vec![1.0, -2.0]);
        let wrong = weights.matrix("embeddings.word_embeddings.weight", 3, 2);
        assert!(
            wrong.err().unwrap().to_string().contains("shape [2, 3]"),
            "a wrong shape is named"
        );
        let missing = weights.matrix("nope", 1, 1).err().unwrap().to_string();
        assert!(missing.contains("no tensor bert.nope"), "{missing}");
    }

    #[test]
    fn a_misaligned_tensor_is_copied_with_the_same_values() {
        let dir = tempfile::tempdir().unwrap();
        let mut data = vec![0u8];
        data.extend([7.5f32, -1.25].iter().flat_map(|f| f.to_le_bytes()));
        // The one-byte tensor before it puts the f32 data off its alignment.
        let header = r#"{"pad":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"embeddings.word_embeddings.weight":{"dtype":"F32","shape":[1,2],"data_offsets":[1,9]}}"#;
        let weights = MappedWeights::open(&write_safetensors(dir.path(), header, &data)).unwrap();
        let m = weights
            .matrix("embeddings.word_embeddings.weight", 1, 2)
            .unwrap();
        assert!(!m.is_mapped());
        assert_eq!(m.as_slice(), &[7.5, -1.25]);
        let err = weights.matrix("pad", 1, 1).err().unwrap().to_string();
        assert!(err.contains("U8"), "{err}");
    }

    #[test]
    fn a_file_that_is_not_safetensors_is_a_load_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.safetensors");
        std::fs::write(&path, b"\xff\xff\xff\xff\xff\xff\xff\x7fnot a model").unwrap();
        let err = MappedWeights::open(&path).err().unwrap().to_string();
        assert!(err.contains("not safetensors"), "{err}");
    }
}
