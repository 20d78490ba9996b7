//! The SentencePiece unigram tokenizer of USE multilingual v3, ported from the model's reference
//! implementation so that token ids are identical to it.
//!
//! Why not the `tokenizers` crate: its `Precompiled` normaliser walks grapheme clusters and its
//! `Unigram` fuses runs of unknown characters, while this model's reference normalises
//! byte-prefix by byte-prefix and keeps one UNK per character; both change ids (and so
//! vectors) on emoji and rare scripts. The port is ~200 lines and is checked id-for-id against
//! the reference in `tests/usem3.rs`.

use std::collections::{BTreeMap, HashMap};

use safetensors::tensor::Dtype;

use super::EmbedError;
use super::prepared::{Prepared, Slice, Tensor};

const UNK: u32 = 0;
pub const BOS: u32 = 1;
pub const EOS: u32 = 2;
const SPACE: &str = "\u{2581}";

/// Minimal protobuf reading: field number → (offset, length) of each length-delimited or
/// fixed32 value.
fn fields(data: &[u8], start: usize, end: usize) -> Result<HashMap<u64, Vec<(usize, usize)>>, EmbedError> {
    let bad = || EmbedError::Model("sp.model is not a valid SentencePiece model".into());
    let varint = |pos: &mut usize| -> Result<u64, EmbedError> {
        let mut value = 0u64;
        let mut shift = 0;
        loop {
            let b = *data.get(*pos).ok_or_else(bad)?;
            *pos += 1;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
            shift += 7;
            if shift > 63 {
                return Err(bad());
            }
        }
    };
    let mut out: HashMap<u64, Vec<(usize, usize)>> = HashMap::new();
    let mut pos = start;
    while pos < end {
        let tag = varint(&mut pos)?;
        let (field, wire) = (tag >> 3, tag & 7);
        match wire {
            0 => {
                varint(&mut pos)?;
            }
            1 => pos += 8,
            2 => {
                let len = varint(&mut pos)? as usize;
                if pos + len > end {
                    return Err(bad());
                }
                out.entry(field).or_default().push((pos, len));
                pos += len;
            }
            5 => {
                out.entry(field).or_default().push((pos, 4));
                pos += 4;
            }
            _ => return Err(bad()),
        }
    }
    Ok(out)
}

/// The `nmt_nfkc` normaliser: a darts-clone double-array trie over the precompiled charsmap.
struct Normalizer {
    /// The trie's units (`u32`s).
    units: Slice,
    normalized: Slice,
}

impl Normalizer {
    /// The charsmap's trie units and normalised strings, as they are prepared.
    fn parts(charsmap: &[u8]) -> Result<(Vec<u32>, Vec<u8>), EmbedError> {
        if charsmap.len() < 4 {
            return Ok((Vec::new(), Vec::new()));
        }
        let trie_size = u32::from_le_bytes([charsmap[0], charsmap[1], charsmap[2], charsmap[3]]) as usize;
        let trie =
            charsmap.get(4..4 + trie_size).ok_or_else(|| EmbedError::Model("sp.model charsmap is truncated".into()))?;
        let units = trie.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        Ok((units, charsmap[4 + trie_size..].to_vec()))
    }

    fn offset(unit: u32) -> usize {
        ((unit >> 10) << ((unit & 0x200) >> 6)) as usize
    }

    /// The normalised form of the longest charsmap key at `data[pos..]`, and its length.
    fn prefix<'a>(&'a self, data: &'a [u8], pos: usize) -> (&'a [u8], usize) {
        let (units, normalized) = (self.units.u32s(), self.normalized.as_ref());
        let (mut best_len, mut best_value) = (0usize, 0usize);
        if let Some(&root) = units.first() {
            let mut node = Self::offset(root);
            let mut i = pos;
            while i < data.len() {
                let c = data[i];
                node ^= c as usize;
                let Some(&unit) = units.get(node) else { break };
                if (unit & 0x8000_00FF) != u32::from(c) {
                    break;
                }
                node ^= Self::offset(unit);
                i += 1;
                if unit & 0x100 != 0 {
                    best_len = i - pos;
                    best_value = units.get(node).map_or(usize::MAX, |u| (u & 0x7FFF_FFFF) as usize);
                }
            }
        }
        if best_len == 0 || best_value >= normalized.len() {
            // No rule: the character itself (input is valid UTF-8).
            let len = match data[pos] {
                b if b < 0x80 => 1,
                b if b >> 5 == 0x6 => 2,
                b if b >> 4 == 0xE => 3,
                b if b >> 3 == 0x1E => 4,
                _ => 1,
            };
            let len = len.min(data.len() - pos);
            return (&data[pos..pos + len], len);
        }
        let end = normalized[best_value..].iter().position(|&b| b == 0).map_or(normalized.len(), |e| best_value + e);
        (&normalized[best_value..end], best_len)
    }

    /// add_dummy_prefix, remove_extra_whitespaces and escape_whitespaces, as the model sets them.
    fn normalize(&self, text: &str) -> String {
        let raw = text.as_bytes();
        let n = raw.len();
        let mut pos = 0;
        while pos < n {
            let (p, adv) = self.prefix(raw, pos);
            if p != b" " {
                break;
            }
            pos += adv;
        }
        if pos >= n {
            return String::new();
        }
        let mut out: Vec<u8> = SPACE.as_bytes().to_vec();
        let mut prev_space = true;
        while pos < n {
            let (mut p, adv) = self.prefix(raw, pos);
            pos += adv;
            if prev_space {
                while let [b' ', rest @ ..] = p {
                    p = rest;
                }
            }
            if p.is_empty() {
                continue;
            }
            if p.contains(&b' ') {
                for &b in p {
                    if b == b' ' {
                        out.extend_from_slice(SPACE.as_bytes());
                    } else {
                        out.push(b);
                    }
                }
                prev_space = p.last() == Some(&b' ');
            } else {
                out.extend_from_slice(p);
                prev_space = false;
            }
        }
        while out.ends_with(SPACE.as_bytes()) {
            out.truncate(out.len() - SPACE.len());
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

pub struct SentencePiece {
    normalizer: Normalizer,
    /// Every piece, to its id.
    pieces: fst::Map<Slice>,
    /// Each piece's score (`f32`s), by id.
    scores: Slice,
    unk_score: f32,
    max_chars: usize,
}

impl SentencePiece {
    /// The tokenizer of `sp.model`'s bytes as tensors to prepare ([`super::prepared`]): the
    /// pieces as an FST, their scores, the normaliser's tables.
    pub fn prepare(data: &[u8]) -> Result<Vec<(&'static str, Tensor)>, EmbedError> {
        let top = fields(data, 0, data.len())?;
        let mut pieces: Vec<String> = Vec::new();
        let mut scores = Vec::new();
        for &(start, len) in top.get(&1).map(Vec::as_slice).unwrap_or(&[]) {
            let p = fields(data, start, start + len)?;
            if let Some(&(ps, pl)) = p.get(&1).and_then(|v| v.first()) {
                pieces.push(String::from_utf8_lossy(&data[ps..ps + pl]).into_owned());
                let score = p
                    .get(&2)
                    .and_then(|v| v.first())
                    .map(|&(s, _)| f32::from_le_bytes([data[s], data[s + 1], data[s + 2], data[s + 3]]))
                    .unwrap_or(0.0);
                scores.push(score);
            }
        }
        if pieces.len() < 3 {
            return Err(EmbedError::Model("sp.model has no vocabulary".into()));
        }
        let charsmap = top
            .get(&3)
            .and_then(|v| v.first())
            .map(|&(s, l)| fields(data, s, s + l))
            .transpose()?
            .and_then(|f| f.get(&2).and_then(|v| v.first()).map(|&(s, l)| &data[s..s + l]))
            .unwrap_or(&[]);
        let (units, normalized) = Normalizer::parts(charsmap)?;
        // A piece given twice is its last id.
        let by_piece: BTreeMap<&str, u64> = pieces.iter().enumerate().map(|(id, p)| (p.as_str(), id as u64)).collect();
        let fst = fst::Map::from_iter(by_piece).map_err(|e| EmbedError::Model(format!("sp.model pieces: {e}")))?;
        let max_chars = pieces.iter().map(|p| p.chars().count()).max().unwrap_or(1).max(1);
        let unk_score = scores.iter().copied().fold(f32::INFINITY, f32::min) - 10.0;
        Ok(vec![
            ("sp_pieces", Tensor::bytes(fst.into_fst().into_inner())),
            ("sp_scores", Tensor::f32s(&[scores.len()], &scores)),
            ("sp_unk_score", Tensor::f32s(&[1], &[unk_score])),
            ("sp_max_chars", Tensor::u32s(&[1], &[u32::try_from(max_chars).unwrap_or(u32::MAX)])),
            ("sp_units", Tensor::u32s(&[units.len()], &units)),
            ("sp_normalized", Tensor::bytes(normalized)),
        ])
    }

    /// The tokenizer read from its prepared tensors, in place.
    pub fn from_prepared(p: &Prepared) -> Result<Self, EmbedError> {
        let bad = |e: fst::Error| EmbedError::Model(format!("prepared sp.model pieces: {e}"));
        let bytes = |name: &str| p.get_any(name, Dtype::U8);
        let pieces = fst::Map::new(bytes("sp_pieces")?).map_err(bad)?;
        let scores = p.get_any("sp_scores", Dtype::F32)?;
        if pieces.len() < 3 || scores.f32s().len() < pieces.len() {
            return Err(EmbedError::Model("prepared sp.model: pieces without scores".into()));
        }
        let unk_score = p.get("sp_unk_score", Dtype::F32, &[1])?.f32s().first().copied().unwrap_or(f32::MIN);
        let max_chars = p.get("sp_max_chars", Dtype::U32, &[1])?.u32s().first().map_or(1, |&m| m as usize);
        let normalizer = Normalizer { units: p.get_any("sp_units", Dtype::U32)?, normalized: bytes("sp_normalized")? };
        Ok(SentencePiece { normalizer, pieces, scores, unk_score, max_chars })
    }

    /// Token ids of `text`, with BOS and EOS.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let normalized = self.normalizer.normalize(text);
        let mut ids = vec![BOS];
        if normalized.is_empty() {
            ids.push(UNK);
        } else {
            ids.extend(self.viterbi(&normalized));
        }
        ids.push(EOS);
        ids
    }

    /// Best segmentation by piece scores (the reference's tie-breaking: strictly greater wins).
    fn viterbi(&self, s: &str) -> Vec<u32> {
        let bounds: Vec<usize> = s.char_indices().map(|(i, _)| i).chain([s.len()]).collect();
        let len = bounds.len() - 1;
        let mut best = vec![f64::NEG_INFINITY; len + 1];
        best[0] = 0.0;
        let mut start_of = vec![0usize; len + 1];
        let mut piece_of = vec![UNK; len + 1];
        let (fst, scores) = (self.pieces.as_fst(), self.scores.f32s());
        for i in 0..len {
            let base = best[i];
            let stop = (i + self.max_chars).min(len);
            let mut has_single = false;
            // Walk the pieces' FST one character at a time: every final state on the way is a
            // piece from i to j; a byte without a transition ends the pieces that start at i.
            let (mut node, mut out) = (fst.root(), fst::raw::Output::zero());
            'grow: for j in i + 1..=stop {
                for &b in &s.as_bytes()[bounds[j - 1]..bounds[j]] {
                    let Some(at) = node.find_input(b) else { break 'grow };
                    let t = node.transition(at);
                    out = out.cat(t.out);
                    node = fst.node(t.addr);
                }
                if node.is_final() {
                    let id = out.cat(node.final_output()).value();
                    let (Ok(id), Some(&piece_score)) = (u32::try_from(id), scores.get(id as usize)) else { continue };
                    let score = base + f64::from(piece_score);
                    if score > best[j] {
                        best[j] = score;
                        start_of[j] = i;
                        piece_of[j] = id;
                    }
                    if j == i + 1 {
                        has_single = true;
                    }
                }
            }
            if !has_single {
                let score = base + f64::from(self.unk_score);
                if score > best[i + 1] {
                    best[i + 1] = score;
                    start_of[i + 1] = i;
                    piece_of[i + 1] = UNK;
                }
            }
        }
        let mut ids = Vec::new();
        let mut p = len;
        while p > 0 {
            ids.push(piece_of[p]);
            p = start_of[p];
        }
        ids.reverse();
        if ids.is_empty() { vec![UNK] } else { ids }
    }
}
