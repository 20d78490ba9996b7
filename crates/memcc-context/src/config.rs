//! Settings of the context engine, with the seed's defaults.

use serde::{Deserialize, Serialize};

use crate::error::ContextError;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct ContextConfig {
    /// Compact once the context holds more than this fraction of the token budget.
    #[schemars(range(min = 0.01, max = 1.0))]
    pub context_threshold: f64,
    /// Raw messages always kept verbatim at the end of the context.
    pub fresh_tail_count: usize,
    /// Upper bound on the raw tokens one leaf summary covers.
    #[schemars(range(min = 1))]
    pub leaf_chunk_tokens: usize,
    /// The length a leaf summary (of raw messages) aims at, in tokens.
    #[schemars(range(min = 1))]
    pub leaf_target_tokens: usize,
    /// The length a condensed summary (of summaries) aims at, in tokens.
    #[schemars(range(min = 1))]
    pub condensed_target_tokens: usize,
    /// Contiguous same-depth summaries that trigger a condensed summary.
    #[schemars(range(min = 2))]
    pub leaf_min_fanout: usize,
    /// Smaller targets and injections for small context windows.
    pub context_optimization: bool,
    /// A content block above this many tokens is stored as a large file behind a pointer.
    #[schemars(range(min = 1))]
    pub large_file_threshold_tokens: usize,
    /// Cap on summarisation steps in one `compact` call.
    #[schemars(range(min = 1))]
    pub max_compaction_iterations: usize,
    /// Share of the assemble budget that recalled memory may use.
    #[schemars(range(min = 0.0, max = 0.9))]
    pub memory_budget_fraction: f64,
    /// Cap on recalled memory, in tokens, however large the host's budget (users pay per token).
    pub memory_max_tokens: usize,
    /// Agent that new conversations belong to unless the host says otherwise.
    pub agent_id: String,
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            context_threshold: 0.75,
            fresh_tail_count: 4,
            leaf_chunk_tokens: 4000,
            leaf_target_tokens: 1500,
            condensed_target_tokens: 2000,
            leaf_min_fanout: 3,
            context_optimization: false,
            large_file_threshold_tokens: 25_000,
            max_compaction_iterations: 64,
            memory_budget_fraction: 0.25,
            memory_max_tokens: 4_000,
            agent_id: "main".into(),
        }
    }
}

impl ContextConfig {
    pub fn validate(&self) -> Result<(), ContextError> {
        let bad = |m: String| Err(ContextError::Config(m));
        // The ranges are the fields' own (`#[schemars(range)]`), as the schema and the docs say them.
        let schema = schemars::schema_for!(ContextConfig);
        let values = serde_json::to_value(self).map_err(|e| ContextError::Config(e.to_string()))?;
        if let Some(e) = memcc_core::ranges::out_of_range(schema.as_value(), &values, "") {
            return bad(e);
        }
        if self.agent_id.trim().is_empty() {
            return bad("agentId must not be empty".into());
        }
        Ok(())
    }

    /// The tokens recalled memory may use when `remaining` tokens of the budget are left.
    pub fn memory_budget(&self, remaining: usize) -> usize {
        memcc_core::budget::memory_share(remaining, self.memory_budget_fraction, self.memory_max_tokens)
    }

    /// Summary sizes are also capped at a quarter of the threshold (and leaf chunks at half), so
    /// that a small budget still holds several summaries plus the fresh tail instead of spending
    /// its whole room on one summary and merging on every turn.
    fn budget_cap(&self, budget: usize, divisor: usize) -> usize {
        ((budget as f64 * self.context_threshold) as usize / divisor).max(64)
    }

    pub fn leaf_target(&self, budget: usize) -> usize {
        let configured =
            if self.context_optimization { 1000.min(self.leaf_target_tokens) } else { self.leaf_target_tokens };
        configured.min(self.budget_cap(budget, 4))
    }

    pub fn condensed_target(&self, budget: usize) -> usize {
        let configured = if self.context_optimization {
            1200.min(self.condensed_target_tokens)
        } else {
            self.condensed_target_tokens
        };
        configured.min(self.budget_cap(budget, 4))
    }

    pub fn leaf_chunk(&self, budget: usize) -> usize {
        self.leaf_chunk_tokens.min(self.budget_cap(budget, 2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A number outside the range on its field is refused by name; the defaults are in range.
    #[test]
    fn a_setting_outside_its_range_is_refused_by_name() {
        assert!(ContextConfig::default().validate().is_ok());
        let refused = |c: ContextConfig| c.validate().unwrap_err().to_string();
        let e = refused(ContextConfig { context_threshold: 0.0, ..ContextConfig::default() });
        assert!(e.contains("contextThreshold must be between 0.01 and 1.0, not 0"), "{e}");
        let e = refused(ContextConfig { leaf_min_fanout: 1, ..ContextConfig::default() });
        assert!(e.contains("leafMinFanout"), "{e}");
        let e = refused(ContextConfig { memory_budget_fraction: f64::NAN, ..ContextConfig::default() });
        assert!(e.contains("memoryBudgetFraction must be a finite number"), "{e}");
        let e = refused(ContextConfig { max_compaction_iterations: 0, ..ContextConfig::default() });
        assert!(e.contains("maxCompactionIterations"), "{e}");
        assert!(refused(ContextConfig { agent_id: " ".into(), ..ContextConfig::default() }).contains("agentId"));
    }
}
