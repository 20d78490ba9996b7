//! The local model's files prepared once for mapping. `weights.npz` (deflated numpy arrays) and
//! `sp.model` (a protobuf whose 128k pieces become a hash map) cost a cold process about 0.4 s
//! of inflating and hashing before its first query. The same tensors, the tokenizer's pieces as
//! an FST and its normaliser's tables, written once into one safetensors file beside them, are
//! mapped in well under a millisecond, and a query reads only the pages it touches (a few rows
//! of the 65 MB token table).
//!
//! The file is derived data: it names the sizes and modification times of the two files it was
//! made from, and is made again (written to a temporary name, then renamed, so a process that
//! maps the old one keeps reading it) when they differ, when it is not there, or when it does
//! not read. Where the model's directory cannot be written, the prepared bytes stay in memory.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use safetensors::tensor::{Dtype, Metadata, SafeTensors, View};

use super::EmbedError;

// The tensors are read in place as the machine's own numbers; safetensors stores little-endian.
#[cfg(not(target_endian = "little"))]
compile_error!("the prepared model is read in place as little-endian numbers");

/// The prepared file, beside the files it is made from.
pub const FILE: &str = "prepared.safetensors";
/// Bumped when what is prepared changes: an older file is then made again.
const FORMAT: &str = "1";

fn err(e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Model(format!("prepared model: {e}"))
}

/// What a prepared file was made from: each source file's size and modification time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceKey(String);

impl SourceKey {
    /// The key of `files` in `dir`; a missing file is an error naming it.
    pub fn of(dir: &Path, files: &[&str]) -> Result<SourceKey, EmbedError> {
        let mut key = format!("format {FORMAT}");
        for f in files {
            let meta = std::fs::metadata(dir.join(f)).map_err(|_| {
                EmbedError::Model(format!(
                    "{} not found; run `memcc model fetch` (or set MEMCC_MODEL_DIR)",
                    dir.join(f).display()
                ))
            })?;
            let modified = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            key.push_str(&format!("; {f} {} {modified}", meta.len()));
        }
        Ok(SourceKey(key))
    }
}

/// The prepared file's bytes: mapped, or held in memory (8-byte aligned, as a map is).
enum Bytes {
    Mapped(memmap2::Mmap),
    Owned(Vec<u64>, usize),
}

impl Bytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Mapped(map) => map,
            Bytes::Owned(words, len) => bytemuck::cast_slice::<u64, u8>(words).get(..*len).unwrap_or(&[]),
        }
    }
}

/// One tensor's bytes within the prepared file (shared by every tensor of it).
#[derive(Clone)]
pub struct Slice {
    bytes: Arc<Bytes>,
    range: Range<usize>,
}

impl AsRef<[u8]> for Slice {
    fn as_ref(&self) -> &[u8] {
        self.bytes.as_slice().get(self.range.clone()).unwrap_or(&[])
    }
}

impl Slice {
    /// As `f32`s (alignment was checked when the slice was taken).
    pub fn f32s(&self) -> &[f32] {
        bytemuck::try_cast_slice(self.as_ref()).unwrap_or(&[])
    }

    /// As `u32`s (alignment was checked when the slice was taken).
    pub fn u32s(&self) -> &[u32] {
        bytemuck::try_cast_slice(self.as_ref()).unwrap_or(&[])
    }
}

/// The tensors of a prepared file, looked up once each at load.
pub struct Prepared {
    bytes: Arc<Bytes>,
    tensors: HashMap<String, (Dtype, Vec<usize>, Range<usize>)>,
}

impl Prepared {
    /// Read the prepared file in `dir` made from `key`: `None` when there is none, it was made
    /// from other files, or it does not read (it is then made again).
    pub fn open(dir: &Path, key: &SourceKey) -> Option<Prepared> {
        let file = std::fs::File::open(dir.join(FILE)).ok()?;
        // SAFETY: the map is read-only, and MemCC replaces the file only by renaming a new one
        // over it, which leaves this mapping's pages as they are. A process truncating the file
        // in place would fault its readers; nothing of MemCC's does.
        let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        match Self::read(Bytes::Mapped(map), key) {
            Ok(p) => Some(p),
            Err(e) => {
                tracing::info!("{}: {e}; preparing it again", dir.join(FILE).display());
                None
            }
        }
    }

    /// Write `tensors`, made from `key`, as the prepared file in `dir`, and read it back mapped;
    /// where the directory cannot be written, the same bytes are read from memory.
    pub fn store(dir: &Path, key: &SourceKey, tensors: Vec<(&str, Tensor)>) -> Result<Prepared, EmbedError> {
        let info = HashMap::from([("source".to_string(), key.0.clone())]);
        let target = dir.join(FILE);
        let temp: PathBuf = dir.join(format!(".{FILE}.{}.tmp", std::process::id()));
        let written = safetensors::tensor::serialize_to_file(tensors.iter().map(|(n, t)| (*n, t)), Some(info), &temp)
            .map_err(|e| e.to_string())
            .and_then(|()| std::fs::rename(&temp, &target).map_err(|e| e.to_string()));
        match written {
            Ok(()) => {
                if let Some(p) = Self::open(dir, key) {
                    return Ok(p);
                }
            }
            Err(e) => {
                let _ = std::fs::remove_file(&temp);
                tracing::info!(
                    "could not write {} ({e}); the model is prepared in memory at every start",
                    target.display()
                );
            }
        }
        Self::in_memory(key, &tensors)
    }

    /// `tensors` prepared without a file.
    fn in_memory(key: &SourceKey, tensors: &[(&str, Tensor)]) -> Result<Prepared, EmbedError> {
        let info = HashMap::from([("source".to_string(), key.0.clone())]);
        let bytes = safetensors::tensor::serialize(tensors.iter().map(|(n, t)| (*n, t)), Some(info)).map_err(err)?;
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        if let Some(dst) = bytemuck::cast_slice_mut::<u64, u8>(&mut words).get_mut(..bytes.len()) {
            dst.copy_from_slice(&bytes);
        }
        Self::read(Bytes::Owned(words, bytes.len()), key)
    }

    fn read(bytes: Bytes, key: &SourceKey) -> Result<Prepared, EmbedError> {
        let (header, metadata): (usize, Metadata) = SafeTensors::read_metadata(bytes.as_slice()).map_err(err)?;
        let source = metadata.metadata().as_ref().and_then(|m| m.get("source"));
        if source != Some(&key.0) {
            return Err(err("made from other files"));
        }
        let start = 8 + header;
        let tensors = metadata
            .tensors()
            .into_iter()
            .map(|(name, info)| {
                let (from, to) = info.data_offsets;
                (name, (info.dtype, info.shape.clone(), start + from..start + to))
            })
            .collect();
        Ok(Prepared { bytes: Arc::new(bytes), tensors })
    }

    /// The one-dimensional tensor `name` of `dtype`, whatever its length.
    pub fn get_any(&self, name: &str, dtype: Dtype) -> Result<Slice, EmbedError> {
        let (_, dims, _) = self.tensors.get(name).ok_or_else(|| err(format!("no tensor {name}")))?;
        match dims.as_slice() {
            [len] => self.get(name, dtype, &[*len]),
            _ => Err(err(format!("{name} has shape {dims:?}, not one dimension"))),
        }
    }

    /// The tensor `name`, of `dtype` and `shape`.
    pub fn get(&self, name: &str, dtype: Dtype, shape: &[usize]) -> Result<Slice, EmbedError> {
        let (have, dims, range) = self.tensors.get(name).ok_or_else(|| err(format!("no tensor {name}")))?;
        if *have != dtype || dims != shape {
            return Err(err(format!("{name} is {have:?} {dims:?}, not {dtype:?} {shape:?}")));
        }
        let slice = Slice { bytes: self.bytes.clone(), range: range.clone() };
        let aligned = match dtype {
            Dtype::F32 => bytemuck::try_cast_slice::<u8, f32>(slice.as_ref()).is_ok(),
            Dtype::U32 => bytemuck::try_cast_slice::<u8, u32>(slice.as_ref()).is_ok(),
            _ => true,
        };
        if !aligned || slice.as_ref().len() != range.len() {
            return Err(err(format!("{name} is misaligned or cut short")));
        }
        Ok(slice)
    }
}

/// A tensor to prepare: its type, shape and little-endian bytes.
pub struct Tensor {
    dtype: Dtype,
    shape: Vec<usize>,
    data: Vec<u8>,
}

impl Tensor {
    pub fn f32s(shape: &[usize], values: &[f32]) -> Tensor {
        Tensor { dtype: Dtype::F32, shape: shape.to_vec(), data: values.iter().flat_map(|v| v.to_le_bytes()).collect() }
    }

    pub fn u32s(shape: &[usize], values: &[u32]) -> Tensor {
        Tensor { dtype: Dtype::U32, shape: shape.to_vec(), data: values.iter().flat_map(|v| v.to_le_bytes()).collect() }
    }

    pub fn bytes(data: Vec<u8>) -> Tensor {
        Tensor { dtype: Dtype::U8, shape: vec![data.len()], data }
    }

    pub fn u8s(shape: &[usize], data: Vec<u8>) -> Tensor {
        Tensor { dtype: Dtype::U8, shape: shape.to_vec(), data }
    }
}

impl View for &Tensor {
    fn dtype(&self) -> Dtype {
        self.dtype
    }

    fn shape(&self) -> &[usize] {
        &self.shape
    }

    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self.data)
    }

    fn data_len(&self) -> usize {
        self.data.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<(&'static str, Tensor)> {
        vec![
            ("m", Tensor::f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.5])),
            ("odd", Tensor::bytes(vec![1, 2, 3])),
            ("ids", Tensor::u32s(&[2], &[7, 9])),
        ]
    }

    #[test]
    fn stored_tensors_read_back_mapped_and_other_sources_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("src"), b"x").unwrap();
        let key = SourceKey::of(dir.path(), &["src"]).unwrap();
        let p = Prepared::store(dir.path(), &key, sample()).unwrap();
        assert!(matches!(*p.bytes, Bytes::Mapped(_)));
        assert_eq!(p.get("m", Dtype::F32, &[2, 3]).unwrap().f32s(), &[1.0, 2.0, 3.0, 4.0, 5.0, 6.5]);
        assert_eq!(p.get("ids", Dtype::U32, &[2]).unwrap().u32s(), &[7, 9]);
        assert_eq!(p.get("odd", Dtype::U8, &[3]).unwrap().as_ref(), &[1, 2, 3]);
        assert!(p.get("m", Dtype::F32, &[3, 2]).is_err(), "a shape other than the one stored");
        assert!(p.get("gone", Dtype::F32, &[1]).is_err());
        assert!(Prepared::open(dir.path(), &key).is_some());
        // The source changed: the file is stale.
        std::fs::write(dir.path().join("src"), b"xy").unwrap();
        let changed = SourceKey::of(dir.path(), &["src"]).unwrap();
        assert_ne!(changed, key);
        assert!(Prepared::open(dir.path(), &changed).is_none());
        // A file that does not read is no file.
        std::fs::write(dir.path().join(FILE), b"\x08\0\0\0\0\0\0\0{}garbage").unwrap();
        assert!(Prepared::open(dir.path(), &key).is_none());
        assert!(SourceKey::of(dir.path(), &["missing"]).is_err());
    }

    #[test]
    fn prepared_in_memory_reads_as_the_file_does() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("src"), b"x").unwrap();
        let key = SourceKey::of(dir.path(), &["src"]).unwrap();
        let p = Prepared::in_memory(&key, &sample()).unwrap();
        assert!(matches!(*p.bytes, Bytes::Owned(..)));
        assert_eq!(p.get("m", Dtype::F32, &[2, 3]).unwrap().f32s()[5], 6.5);
        assert_eq!(p.get_any("ids", Dtype::U32).unwrap().u32s(), &[7, 9]);
        assert_eq!(p.get_any("odd", Dtype::U8).unwrap().as_ref(), &[1, 2, 3]);
        assert!(p.get_any("m", Dtype::F32).is_err(), "two dimensions");
        assert!(!dir.path().join(FILE).exists());
    }
}
