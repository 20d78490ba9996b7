//! The plain baselines `memcc bench prompt` sets beside MemCC: what a simple RAG would put in
//! the same room. Ranked with SQLite FTS5's BM25 (porter stemming, the question's content words
//! OR-ed, as MemCC's own lexical search builds them), over single turns or whole sessions, each
//! unit prefixed by its date.

use rusqlite::{Connection, params};

use crate::BenchError;
use crate::haystack::Haystack;
use crate::pipeline::turn_time;
use memcc::lab::core::estimate_tokens;
use memcc::lab::core::text::{Combine, fts_document, match_query};

fn day(ms: Option<i64>) -> String {
    ms.and_then(chrono::DateTime::from_timestamp_millis)
        .map_or_else(|| "unknown".into(), |d| d.format("%Y-%m-%d").to_string())
}

/// A haystack as retrievable units: its turns and its sessions, in conversation order.
pub struct Corpus {
    pub turns: Vec<String>,
    /// The session (its unit id) each turn is from.
    turn_sessions: Vec<String>,
    pub sessions: Vec<String>,
    turn_index: Connection,
    session_index: Connection,
}

fn index(docs: &[String]) -> Result<Connection, BenchError> {
    let conn = Connection::open_in_memory()?;
    conn.execute_batch("CREATE VIRTUAL TABLE docs USING fts5(body, tokenize = 'porter unicode61');")?;
    let mut insert = conn.prepare("INSERT INTO docs (rowid, body) VALUES (?1, ?2)")?;
    for (i, d) in docs.iter().enumerate() {
        insert.execute(params![i as i64, fts_document(d)])?;
    }
    drop(insert);
    Ok(conn)
}

fn rank(conn: &Connection, question: &str) -> Result<Vec<usize>, BenchError> {
    let Some(expr) = match_query(question, Combine::Any) else { return Ok(Vec::new()) };
    let mut stmt = conn.prepare_cached("SELECT rowid FROM docs WHERE docs MATCH ?1 ORDER BY bm25(docs)")?;
    let rows = stmt.query_map([expr], |r| r.get::<_, i64>(0))?;
    Ok(rows.filter_map(|r| r.ok()).map(|i| i as usize).collect())
}

impl Corpus {
    pub fn new(h: &Haystack) -> Result<Self, BenchError> {
        Self::before(h, h.sessions.len())
    }

    /// The first `n` sessions of `h` only: what a question asked before session `n` may draw on
    /// (their index alone, so BM25 weighs terms as if nothing later existed).
    pub fn before(h: &Haystack, n: usize) -> Result<Self, BenchError> {
        let mut turns = Vec::new();
        let mut turn_sessions = Vec::new();
        let mut sessions = Vec::new();
        for s in h.sessions.iter().take(n) {
            let mut lines = vec![format!("[Date: {}]", day(s.time))];
            for (k, t) in s.turns.iter().enumerate() {
                turns.push(format!("[Date: {}] {}", day(Some(turn_time(s.time, k))), t.display_text()));
                turn_sessions.push(s.unit.clone());
                lines.push(t.display_text());
            }
            sessions.push(lines.join("\n"));
        }
        Ok(Corpus { turn_index: index(&turns)?, session_index: index(&sessions)?, turns, turn_sessions, sessions })
    }

    /// The whole conversation: the ceiling of any prompt built from it.
    pub fn whole(&self) -> String {
        self.sessions.join("\n\n")
    }

    /// The latest turns that fit in `chars` characters, in conversation order.
    pub fn recency(&self, chars: usize) -> String {
        let mut picked: Vec<&str> = Vec::new();
        let mut used = 0;
        for t in self.turns.iter().rev() {
            let n = t.chars().count() + 1;
            if used + n > chars {
                break;
            }
            used += n;
            picked.push(t);
        }
        picked.reverse();
        picked.join("\n")
    }

    /// BM25 over single turns, best first, cut at `chars` characters.
    pub fn bm25_turns(&self, question: &str, chars: usize) -> Result<String, BenchError> {
        let order = rank(&self.turn_index, question)?;
        Ok(fill_chars(order.iter().map(|&i| self.turns[i].as_str()), chars))
    }

    /// What of [`Self::bm25_turns`]' text for `question` in `chars` characters comes from the
    /// sessions `gold`: its characters and turns, and those of them from a gold session.
    pub fn bm25_turns_evidence(
        &self,
        question: &str,
        chars: usize,
        gold: &std::collections::HashSet<String>,
    ) -> Result<crate::evidence::Evidence, BenchError> {
        let order = rank(&self.turn_index, question)?;
        let mut e = crate::evidence::Evidence::default();
        let mut used = 0;
        for &i in &order {
            let sep = usize::from(used > 0);
            let n = self.turns[i].chars().count();
            let taken = n.min(chars.saturating_sub(used + sep));
            if taken == 0 {
                break;
            }
            e.add(taken + sep, gold.contains(&self.turn_sessions[i]));
            used += sep + taken;
            if taken < n {
                break;
            }
        }
        Ok(e)
    }

    /// The sessions that match `question`, best first (BM25), as indexes into `sessions`.
    pub fn rank_sessions(&self, question: &str) -> Result<Vec<usize>, BenchError> {
        rank(&self.session_index, question)
    }

    /// BM25 over whole sessions, best first, cut at `chars` characters.
    pub fn bm25_sessions(&self, question: &str, chars: usize) -> Result<String, BenchError> {
        let order = rank(&self.session_index, question)?;
        Ok(fill_chars(order.iter().map(|&i| self.sessions[i].as_str()), chars))
    }

    /// BM25 over whole sessions, best first, filling `tokens` (MemCC's token estimate).
    pub fn bm25_sessions_tokens(&self, question: &str, tokens: usize) -> Result<String, BenchError> {
        let order = rank(&self.session_index, question)?;
        let mut out = String::new();
        for &i in &order {
            let next = if out.is_empty() { self.sessions[i].clone() } else { format!("{out}\n\n{}", self.sessions[i]) };
            if estimate_tokens(&next) > tokens {
                let room = tokens.saturating_sub(estimate_tokens(&out) + 1);
                let cut = memcc::lab::context::assemble::cut_to_tokens(&self.sessions[i], room);
                if !cut.is_empty() {
                    out = if out.is_empty() { cut } else { format!("{out}\n\n{cut}") };
                }
                break;
            }
            out = next;
        }
        Ok(out)
    }
}

/// Units joined by newlines until `chars` characters; the last one cut to fit.
fn fill_chars<'a>(units: impl Iterator<Item = &'a str>, chars: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for u in units {
        let sep = usize::from(!out.is_empty());
        let n = u.chars().count();
        if used + sep + n > chars {
            let room = chars.saturating_sub(used + sep);
            if room > 0 {
                if sep == 1 {
                    out.push('\n');
                }
                out.extend(u.chars().take(room));
            }
            break;
        }
        if sep == 1 {
            out.push('\n');
        }
        out.push_str(u);
        used += sep + n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::haystack::{HSession, HTurn};

    fn haystack() -> Haystack {
        let turn = |unit: &str, speaker: &str, text: &str| HTurn {
            unit: unit.into(),
            role: "user".into(),
            speaker: Some(speaker.into()),
            text: text.into(),
        };
        Haystack {
            id: "h".into(),
            sessions: vec![
                HSession {
                    project: None,
                    unit: "S1".into(),
                    time: Some(1_683_554_160_000),
                    turns: vec![turn("D1:1", "Ann", "I adopted a cat named Miso"), turn("D1:2", "Bo", "Lovely!")],
                },
                HSession {
                    project: None,
                    unit: "S2".into(),
                    time: Some(1_686_000_000_000),
                    turns: vec![turn("D2:1", "Ann", "We went hiking in the Alps"), turn("D2:2", "Bo", "Wow")],
                },
            ],
            questions: Vec::new(),
        }
    }

    #[test]
    fn baselines_rank_fill_and_cut_to_the_same_size() {
        let c = Corpus::new(&haystack()).unwrap();
        assert_eq!(c.turns[0], "[Date: 2023-05-08] Ann: I adopted a cat named Miso");
        assert!(c.sessions[1].starts_with("[Date: 2023-06-05]\nAnn: We went hiking"));
        let t = c.bm25_turns("What is the name of Ann's cat?", 1000).unwrap();
        assert!(t.starts_with("[Date: 2023-05-08] Ann: I adopted a cat"), "{t}");
        let s = c.bm25_sessions("hiking", 30).unwrap();
        assert_eq!(s.chars().count(), 30);
        assert!(s.starts_with("[Date: 2023-06-05]"));
        assert_eq!(c.recency(30), "[Date: 2023-06-05] Bo: Wow");
        assert!(c.bm25_sessions_tokens("cat hiking", 20).map(|s| estimate_tokens(&s) <= 20).unwrap());
        assert!(c.whole().contains("Miso") && c.whole().contains("Alps"));
    }

    #[test]
    fn the_turns_bm25_puts_in_a_room_are_attributed_to_their_sessions() {
        let c = Corpus::new(&haystack()).unwrap();
        let gold: std::collections::HashSet<String> = ["S2".to_string()].into();
        let text = c.bm25_turns("cat hiking", 1000).unwrap();
        let e = c.bm25_turns_evidence("cat hiking", 1000, &gold).unwrap();
        assert_eq!((e.chars, e.lines, e.gold_lines), (text.chars().count(), 2, 1), "{text}");
        assert_eq!(
            e.gold_chars,
            "[Date: 2023-06-05] Ann: We went hiking in the Alps".chars().count()
                + usize::from(!text.starts_with("[Date: 2023-06-05]"))
        );
        // Cut to the room: only what fits is counted.
        let cut = c.bm25_turns_evidence("cat hiking", 20, &gold).unwrap();
        assert_eq!((cut.chars, cut.lines), (20, 1));
    }
}
