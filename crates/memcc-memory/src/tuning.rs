//! The scoring model in one place: every weight and pool size search and recall apply, each
//! default with the evidence it was chosen on. A config file may set any of them
//! (`{"memory": {"tuning": {"inContext": 0.2}}}`), so a bench sweeps a weight without a code
//! edit; the defaults are what MemCC ships. (PostgreSQL's BM25 constants live in its SQL, as
//! SQLite's FTS5 keeps its own.)

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Tuning {
    /// A record's full-text match (BM25, relative to the best candidate's) in the hybrid score.
    /// Words decide more than meaning: LoCoMo dev and RealMem both rank best with the words ahead.
    #[schemars(range(min = 0.0, max = 10.0))]
    pub lexical: f64,
    /// A record's meaning match (cosine with the query) in the hybrid score.
    #[schemars(range(min = 0.0, max = 10.0))]
    pub semantic: f64,
    /// What a record's full-text match with the conversation's recent turns adds (relative to
    /// the best such match): under half the question's own words, so turns about something
    /// else cannot outvote the question. RealMem session R_all@10: 0.621 without, 0.630 / 0.636
    /// / 0.637 at 0.15 / 0.3 / 0.5; LoCoMo long session at 0.3: 1k 0.690 → 0.685.
    #[schemars(range(min = 0.0, max = 10.0))]
    pub in_context: f64,
    /// What a record dated within a period the query names adds: more than recency's
    /// tie-break, less than the words (~15 % of LoCoMo's evidence for such questions was told
    /// outside the period).
    #[schemars(range(min = 0.0, max = 10.0))]
    pub in_period: f64,
    /// What a record that states a date adds when the query asks when: half a named period — a
    /// date answers "when" only if it is about the right event, which the words decide.
    #[schemars(range(min = 0.0, max = 10.0))]
    pub states_when: f64,
    /// By how much a record learnt in the project the question is asked in (Claude Code's and
    /// Codex's repository, a host's project) is raised, as a share of its score: a factor, so a
    /// record that matches nothing stays at zero, and small, so a strong match from another
    /// project (a preference said there) still wins over a weak one from this.
    #[schemars(range(min = 0.0, max = 10.0))]
    pub same_project: f64,
    /// A hook's recall (Claude Code, Codex) asked in a project whose own records match leaves out another project's
    /// conversation (its summaries and verbatim windows; never the user's preferences, facts or
    /// pins, which go where the user goes) unless the question names that project ("what port
    /// does the API use?") or it scores this many times the project's best: "what port does the
    /// dev server listen on?" asked in the blog is the blog's port, not the API's that shares
    /// more of its words.
    #[schemars(range(min = 1.0, max = 100.0))]
    pub other_project_margin: f64,
    /// The most recency adds, for a question about now or the latest (decaying with
    /// `recencyHalfLifeDays`): a tie-break only. Asked of every question it pushed what was
    /// said early below later small talk (LoCoMo dev: five questions lost).
    #[schemars(range(min = 0.0, max = 10.0))]
    pub recency: f64,
    /// What a superseded or expired record's score is multiplied by: kept for history, it ranks
    /// below what replaced it.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub not_current: f64,
    /// A knowledge-graph line's score, relative to the best hit's, and the place it takes among
    /// the hits (0-based): beside the best hits, not above them.
    #[schemars(range(min = 0.0, max = 10.0))]
    pub knowledge_graph: f64,
    /// The place a knowledge-graph line takes among the hits (0-based; see `knowledgeGraph`).
    pub knowledge_graph_slot: usize,
    /// A query word found in more than this share of the agents' records (and in more than
    /// `commonTermFloor` of them) is left out of BM25: it barely moves the ranking, and its cost
    /// grows with the store (retrieve p99 at 100k records).
    #[schemars(range(min = 0.0, max = 1.0))]
    pub common_term_share: f64,
    /// The fewest records a query word must be in before `commonTermShare` may leave it out.
    pub common_term_floor: usize,
    /// Candidates taken from each retriever before fusion, at least.
    #[schemars(range(min = 1, max = 10_000))]
    pub min_candidates: usize,
    /// Candidates per retriever behind `memory_search`'s first hits (and the retrieval bench's
    /// 30), whatever the limit: a limit of 5 gives the first 5 of a limit of 30.
    #[schemars(range(min = 1, max = 10_000))]
    pub search_pool: usize,
    /// Candidates per retriever behind the hits after the first `searchPool`: the most
    /// `memory_search` returns, so every limit gets the same hits in the same order.
    #[schemars(range(min = 1, max = 10_000))]
    pub wide_pool: usize,
    /// Recall shows a candidate while its score is at least this share of the best one's. LoCoMo
    /// dev, new session at 8k: 0.25 / 0.15 / 0.1 used 4.3k / 6.2k / 7.1k tokens and held the
    /// answer for 0.735 / 0.754 / 0.763, beating BM25 given the same characters by +0.094 /
    /// +0.083 / +0.071; 0.15 keeps the margins wide for about three quarters of the room.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub value_floor: f64,
    /// Order weight of a recalled line from a session that already has `n` lines shown:
    /// `sessionDecay^n`, so one long session does not fill the room. It orders the lines after
    /// those recall shows at length (the first, by score alone): with no decay at all RealMem's
    /// new session went 0.246 / 0.449 / 0.648 / 0.860 → 0.249 / 0.474 / 0.644 / 0.842 at 1k–8k.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub session_decay: f64,
    /// The relevance gate of the recall a host asks for each prompt (a Claude Code or Codex
    /// hook): the prompt gets recall when some candidate's meaning match (cosine) reaches
    /// `relevantMeaning` or its full-text match (BM25 as the index scores it) reaches
    /// `relevantWords`, and nothing otherwise — both as they stand in a store of
    /// `relevantSize` records, and moved with the store's size (`relevantMeaningRise`).
    /// Chosen between the best matches of prompts with nothing to recall (chit-chat, generic
    /// commands, questions about what was never said) and of real questions on LoCoMo's and
    /// RealMem's dev stores: in stores of about 400 records a cosine of 0.28 is above 97 % of
    /// the former's and below 98.8 % of the latter's; a BM25 of 15 above every such prompt's
    /// (it speaks for exact identifiers — a host name, a ticket — that the model's meaning
    /// misses). docs/benchmarks.md has what the gate costs and spares.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub relevant_meaning: f64,
    /// The full-text (BM25) half of the hook's relevance gate (see `relevantMeaning`), at
    /// `relevantSize` records; elsewhere in proportion to the rarest word's weight (its idf),
    /// which grows with the store: a match of a few words of a small store reaches it.
    #[schemars(range(min = 0.0, max = 1000.0))]
    pub relevant_words: f64,
    /// The store size (records) the gate's two values are set for.
    #[schemars(range(max = 1_000_000))]
    pub relevant_size: usize,
    /// How much the meaning half rises each time a store larger than `relevantSize` grows by a
    /// factor of e: among more records, the best match of a prompt with nothing to recall is
    /// closer by chance (RealMem dev: its 95th percentile went 0.24 → 0.28 → 0.32 → 0.35 at
    /// 100 / 400 / 800 / 1,600 records). Chosen on prompts of a tuning set of their own, apart
    /// from the bench's (docs/experiments.md, session 37).
    #[schemars(range(min = 0.0, max = 1.0))]
    pub relevant_meaning_rise: f64,
    /// The most of recall's budget the essential layer (L1) may take, and the share kept back
    /// for the wing's on-demand layer (L2), in percent of the budget (each also capped by its
    /// own token setting).
    #[schemars(range(max = 100))]
    pub essential_percent: usize,
    /// The share of recall's budget, in percent, kept back for the on-demand layer (L2; see
    /// `essentialPercent`).
    #[schemars(range(max = 100))]
    pub on_demand_percent: usize,
    /// The token caps of the essential (L1) and on-demand (L2) layers beside their percentages,
    /// and L1's under `contextOptimization` (which gives L2 nothing). Measured as the limit they
    /// could be: with both layers at 0 % (all to deep search) RealMem's new session at 1k / 2k went
    /// 0.232 / 0.416 → 0.236 / 0.423 and BM25 over turns given those characters rose more; LoCoMo
    /// with no essentials 0.635 / 0.683 / 0.717 → 0.632 / 0.683 / 0.729 at 1k / 2k / 8k: neutral.
    #[schemars(range(max = 1_000_000))]
    pub essential_tokens: usize,
    /// The essential layer's (L1) token cap under `contextOptimization` (see `essentialTokens`).
    #[schemars(range(max = 1_000_000))]
    pub essential_tokens_compact: usize,
    /// The on-demand layer's (L2) token cap (see `essentialTokens`).
    #[schemars(range(max = 1_000_000))]
    pub on_demand_tokens: usize,
    /// The most deep-search lines under `contextOptimization` (otherwise the budget and
    /// `valueFloor` decide): what "smaller injections" promises, not a measured optimum.
    #[schemars(range(max = 1_000_000))]
    pub compact_lines: usize,
    /// Essential records read for L1, the weightiest first: more than `essentialTokens` ever
    /// shows (800 tokens hold about 50 of the shortest lines).
    #[schemars(range(min = 1, max = 10_000))]
    pub essentials_read: usize,
    /// The most candidates recall draws for a room of any size (about one per 40 tokens of room
    /// below it, at least `minCandidates`): twice as many found nothing more on LoCoMo.
    #[schemars(range(min = 1, max = 10_000))]
    pub max_candidates: usize,
    /// A knowledge-graph line's score when search found nothing to rank it beside: it is then
    /// recall's only line, shown whatever its score, so this is only the score it reports.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub knowledge_graph_alone: f64,
    /// Whether search ranks whole sessions first (the session ranker: the question with the
    /// conversation's turns before it, feedback from the best sessions, a learned model) and
    /// scores a record by its session's probability with its own match; off, records compete on
    /// their own match alone.
    pub rank_sessions: bool,
    /// The turns before a question the session ranker adds to its query (nearest first).
    /// RealMem dev (`../shared/research/ranking`): 4 over 1 and 2.
    #[schemars(range(max = 1_000_000))]
    pub context_turns: usize,
    /// What an assistant turn before the question weighs in the session ranker's query, as a
    /// share of the question's own terms: the assistant names the subject being worked on.
    /// RealMem dev: 0.5 and 1.0 alike, 0.1 and 0.3 less.
    #[schemars(range(min = 0.0, max = 10.0))]
    pub assistant_turn: f64,
    /// What a user turn before the question weighs (see `assistantTurn`): RealMem dev chose 0
    /// over 0.5 (the user's earlier turns are the question's own thread, said again).
    #[schemars(range(min = 0.0, max = 10.0))]
    pub user_turn: f64,
    /// The first pass's best sessions whose words expand the query (RM3 feedback).
    #[schemars(range(max = 1_000_000))]
    pub feedback_sessions: usize,
    /// The most terms the feedback adds.
    #[schemars(range(min = 1, max = 10_000))]
    pub feedback_terms: usize,
    /// The share of the expanded query's weight the original query keeps (RM3's λ).
    #[schemars(range(min = 0.0, max = 1.0))]
    pub feedback_keep: f64,
    /// How much a record's own match moves it within its session: its score is its session's
    /// probability × (1 − this + this × its match relative to its session's best candidate).
    #[schemars(range(min = 0.0, max = 1.0))]
    pub record_share: f64,
    /// How much the session ranking decides a record's score against the record's own hybrid
    /// score, among many sessions (a log-linear mix: 1, the session ranking alone; 0, the
    /// record's own match alone). RealMem dev session R_all@10 at 0 / 0.3 / 0.7 / 1: 0.632 /
    /// 0.676 / 0.713 / 0.703; LoCoMo (19–32 sessions a conversation) R_all@5 0.888 / 0.874 /
    /// 0.859 / 0.848 — see `sessionWeightFrom`.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub session_weight: f64,
    /// The number of sessions below which the session ranking has no weight: among a few dozen
    /// the records' own words and meaning find the right one (RealMem dev: questions asked over
    /// fewer than 30 sessions gain nothing from it; LoCoMo's conversations lose), among many
    /// they need the session's subject. The weight grows to `sessionWeight` at
    /// `sessionWeightFull` sessions.
    #[schemars(range(max = 1_000_000))]
    pub session_weight_from: usize,
    /// The number of sessions from which the session ranking has all of `sessionWeight`.
    #[schemars(range(max = 1_000_000))]
    pub session_weight_full: usize,
    /// Of the best sessions (by the ranker's probability), how many bring in their records when
    /// no retriever found one of them.
    #[schemars(range(max = 1_000_000))]
    pub fill_sessions: usize,
    /// How many records each such session brings in (those that best match the expanded query).
    #[schemars(range(max = 1_000_000))]
    pub fill_records: usize,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            lexical: 0.65,
            semantic: 0.35,
            in_context: 0.3,
            in_period: 0.2,
            states_when: 0.1,
            same_project: 0.15,
            other_project_margin: 2.0,
            recency: 0.05,
            not_current: 0.6,
            knowledge_graph: 0.9,
            knowledge_graph_slot: 2,
            common_term_share: 0.05,
            common_term_floor: 2_000,
            min_candidates: 20,
            search_pool: 30,
            wide_pool: 100,
            value_floor: 0.15,
            session_decay: 0.9,
            relevant_meaning: 0.28,
            relevant_words: 15.0,
            relevant_size: 400,
            relevant_meaning_rise: 0.06,
            essential_percent: 15,
            on_demand_percent: 10,
            essential_tokens: 800,
            essential_tokens_compact: 400,
            on_demand_tokens: 500,
            compact_lines: 5,
            essentials_read: 50,
            max_candidates: 200,
            knowledge_graph_alone: 0.5,
            rank_sessions: true,
            context_turns: 4,
            assistant_turn: 0.5,
            user_turn: 0.0,
            feedback_sessions: 5,
            feedback_terms: 100,
            feedback_keep: 0.5,
            record_share: 0.5,
            session_weight: 0.7,
            session_weight_from: 30,
            session_weight_full: 60,
            fill_sessions: 10,
            fill_records: 2,
        }
    }
}

impl Tuning {
    /// The session ranking's weight in a record's score among `sessions` sessions (see
    /// `sessionWeight`): none below `sessionWeightFrom`, growing linearly to all of it at
    /// `sessionWeightFull`.
    pub fn session_weight_among(&self, sessions: usize) -> f64 {
        if sessions <= self.session_weight_from {
            return 0.0;
        }
        let span = self.session_weight_full.saturating_sub(self.session_weight_from).max(1) as f64;
        self.session_weight * ((sessions - self.session_weight_from) as f64 / span).min(1.0)
    }

    /// Every weight finite and in its range, every pool at least 1: what a bad config file gets
    /// told instead of a search that silently ranks nothing. The ranges are the fields' own
    /// (`#[schemars(range)]`): one place for the check, the schema OpenClaw validates against
    /// and docs/settings.md.
    pub fn check(&self) -> Result<(), String> {
        let schema = schemars::schema_for!(Tuning);
        let values = serde_json::to_value(self).map_err(|e| e.to_string())?;
        if let Some(e) = memcc_core::ranges::out_of_range(schema.as_value(), &values, "memory.tuning.") {
            return Err(e);
        }
        if self.lexical + self.semantic <= 0.0 {
            return Err("memory.tuning: lexical and semantic cannot both be 0".into());
        }
        if self.session_weight_full < self.session_weight_from {
            return Err(format!(
                "memory.tuning.sessionWeightFull ({}) must be at least sessionWeightFrom ({})",
                self.session_weight_full, self.session_weight_from
            ));
        }
        if self.wide_pool < self.search_pool {
            return Err(format!(
                "memory.tuning.widePool ({}) must be at least searchPool ({})",
                self.wide_pool, self.search_pool
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_sets_one_weight_and_keeps_the_rest() {
        let t: Tuning = serde_json::from_str(r#"{"inContext": 0.2}"#).unwrap();
        assert_eq!(t, Tuning { in_context: 0.2, ..Tuning::default() });
        assert!(t.check().is_ok());
        assert!(serde_json::from_str::<Tuning>(r#"{"inContxt": 0.2}"#).is_err(), "a misspelt key is an error");
        let bad = Tuning { not_current: 1.5, ..Tuning::default() };
        assert!(bad.check().unwrap_err().contains("notCurrent"));
        let bad = Tuning { search_pool: 0, ..Tuning::default() };
        assert!(bad.check().unwrap_err().contains("searchPool"));
        assert!(Tuning { lexical: f64::NAN, ..Tuning::default() }.check().is_err());
        let err = Tuning { relevant_meaning_rise: f64::INFINITY, ..Tuning::default() }.check().unwrap_err();
        assert!(err.contains("relevantMeaningRise must be a finite number"), "{err}");
        let err = Tuning { essential_percent: 101, ..Tuning::default() }.check().unwrap_err();
        assert!(err.contains("essentialPercent must be between 0 and 100, not 101"), "{err}");
        assert!(Tuning { relevant_size: 1_000_001, ..Tuning::default() }.check().is_err());
    }

    #[test]
    fn every_number_of_the_tuning_has_a_range_in_its_schema() {
        // The ranges are the fields' own: a new weight without one is checked by nothing.
        let schema = schemars::schema_for!(Tuning);
        let unranged: Vec<&String> = schema.as_value()["properties"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(_, p)| p["type"] == "number" && (p.get("minimum").is_none() || p.get("maximum").is_none()))
            .map(|(n, _)| n)
            .collect();
        assert!(unranged.is_empty(), "{unranged:?}");
    }
}
