//! The spinner of a long operation (`compact`, `flush`) on stderr, counting the summaries the
//! compactor writes: it reads the compactor's own "summary written" events
//! (`memcc::context::SUMMARY_WRITTEN`, which `-v` prints), so the engine knows nothing of terminals.

use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, Layer};

/// The spinner now showing, with what it is doing.
static SHOWING: Mutex<Option<(ProgressBar, String)>> = Mutex::new(None);

/// Feeds the showing spinner from the compactor's events (a no-op when none shows).
pub struct SummaryCounter;

/// The `done` field of a "summary written" event: summaries written so far in this compaction.
struct Done(Option<u64>);

impl Visit for Done {
    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == "done" {
            self.0 = Some(value);
        }
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        if field.name() == "done" {
            self.0 = u64::try_from(value).ok();
        }
    }
    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

impl<S: tracing::Subscriber> Layer<S> for SummaryCounter {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() != memcc::context::SUMMARY_WRITTEN {
            return;
        }
        let mut done = Done(None);
        event.record(&mut done);
        let Some(n) = done.0 else { return };
        if let Some((bar, what)) = SHOWING.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            bar.set_message(format!("{what}: {n} summar{} written", if n == 1 { "y" } else { "ies" }));
        }
    }
}

/// Run `f` with `bar` showing `what` (and the summaries written so far), cleared at the end.
pub fn with_spinner<T>(bar: ProgressBar, what: &str, f: impl FnOnce() -> T) -> T {
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} {elapsed}").unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.set_message(what.to_string());
    *SHOWING.lock().unwrap_or_else(|p| p.into_inner()) = Some((bar.clone(), what.to_string()));
    let out = f();
    *SHOWING.lock().unwrap_or_else(|p| p.into_inner()) = None;
    bar.finish_and_clear();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::prelude::*;

    #[test]
    fn the_spinner_counts_the_summaries_the_compactor_writes() {
        let subscriber = tracing_subscriber::registry().with(SummaryCounter);
        let bar = ProgressBar::hidden();
        let seen = tracing::subscriber::with_default(subscriber, || {
            with_spinner(bar.clone(), "compacting", || {
                tracing::info!(target: memcc::context::SUMMARY_WRITTEN, summary = "sum_1", done = 1u64, "summary written");
                tracing::info!(target: memcc::context::SUMMARY_WRITTEN, summary = "sum_2", done = 2u64, "summary written");
                tracing::info!(target: "memcc_memory::ingest", done = 99u64, "another crate's event");
                bar.message()
            })
        });
        assert_eq!(seen, "compacting: 2 summaries written");
    }
}
