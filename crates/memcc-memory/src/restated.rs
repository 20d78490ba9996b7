//! A newer record that names an older one's coded value — a port, a path, a host, a limit —
//! beside a value of its own restates it: "move the dev server from port 8080 to port 8443"
//! after "the dev server listens on port 8080", "images now live in public/img instead of
//! assets/img" after "images go in assets/img". Read from the values alone, in any language
//! and any phrasing (no list of verbs of change): recall shows the newer record first, so a
//! changed value comes before the one it replaced. Only the values of the sentences that say
//! something the question asks about count (a sentence with one of its words): two windows of
//! a long conversation share some number or other, and the shared price of another plan is
//! no restatement of this one.

use std::collections::{HashMap, HashSet};

use memcc_core::coded::coded_values;

use crate::search::SearchHit;

/// The least share of the older record's score a restatement needs to go before it: a window
/// that mentions the value in passing, far weaker a match, stays where it ranks.
const RESTATED_SHARE: f64 = 0.5;

/// The coded values of a search's hits where they say what the question asks about, by hit id.
pub struct Coded(HashMap<String, HashSet<String>>);

impl Coded {
    /// The values of `hits` in their sentences holding one of `needles` (the question's words,
    /// lowercase: [`crate::lang::question::Question::needles`]).
    pub fn of(hits: &[SearchHit], needles: &[String]) -> Coded {
        let asked = |h: &SearchHit| -> HashSet<String> {
            memcc_core::text::sentences_of(&h.text)
                .filter(|s| {
                    let lower = s.to_lowercase();
                    needles.iter().any(|n| lower.contains(n.as_str()))
                })
                .flat_map(coded_values)
                .collect()
        };
        Coded(hits.iter().filter(|h| h.record.is_some()).map(|h| (h.id.clone(), asked(h))).collect())
    }

    /// Whether `newer` restates `older`: said later, it names one of `older`'s coded values and
    /// one of its own, and matches the question at least [`RESTATED_SHARE`] as well.
    pub fn restates(&self, newer: &SearchHit, older: &SearchHit) -> bool {
        let (Some(new_at), Some(old_at)) = (newer.event_time, older.event_time) else { return false };
        let (Some(new), Some(old)) = (self.0.get(&newer.id), self.0.get(&older.id)) else { return false };
        new_at > old_at
            && newer.score >= RESTATED_SHARE * older.score
            && new.iter().any(|v| old.contains(v))
            && new.iter().any(|v| !old.contains(v))
    }

    /// `hits`, ranked best first, with each hit's newest restatement moved before it.
    pub fn newer_first(&self, hits: &mut Vec<SearchHit>) {
        let mut i = 0;
        while i < hits.len() {
            // Each step goes to a later record, so the chain ends.
            let mut at = i;
            while let Some(newer) = (i + 1..hits.len()).filter(|&j| self.restates(&hits[j], &hits[at])).min() {
                at = newer;
            }
            if at != i {
                let newer = hits.remove(at);
                hits.insert(i, newer);
            }
            i += 1;
        }
    }
}
