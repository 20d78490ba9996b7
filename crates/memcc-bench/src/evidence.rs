//! What of an injected text comes from a question's gold: the precision figure `memcc bench
//! prompt` sets beside each recall figure, counted the same way for MemCC and its baselines.

use serde::Serialize;

/// What of an injected text comes from the question's gold sessions: characters and lines
/// (a recalled record, a baseline's turn), all and from gold.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Evidence {
    pub chars: usize,
    pub gold_chars: usize,
    pub lines: usize,
    pub gold_lines: usize,
}

impl Evidence {
    pub fn add(&mut self, chars: usize, gold: bool) {
        self.chars += chars;
        self.lines += 1;
        if gold {
            self.gold_chars += chars;
            self.gold_lines += 1;
        }
    }

    pub fn merge(&mut self, o: &Evidence) {
        self.chars += o.chars;
        self.gold_chars += o.gold_chars;
        self.lines += o.lines;
        self.gold_lines += o.gold_lines;
    }

    /// The share of characters, and of lines, from gold (`None` when nothing was injected).
    pub fn precision(&self) -> Option<Precision> {
        (self.chars > 0 && self.lines > 0).then(|| Precision {
            chars: self.gold_chars as f64 / self.chars as f64,
            lines: self.gold_lines as f64 / self.lines as f64,
        })
    }
}

/// The share of what was injected that comes from the question's gold sessions, pooled over
/// the questions that got anything.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Precision {
    pub chars: f64,
    pub lines: f64,
}
