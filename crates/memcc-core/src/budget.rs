//! The token budget, one road: what a host's number becomes ([`Budget::grant`]), and each share
//! carved from it on the way to the prompt — the compaction hint ([`hint_fits`]), memory's share
//! ([`memory_share`]), each recall layer's ([`layer_share`]). Every host (OpenClaw, MCP, the CLI,
//! the inspector, the hooks, the benches) goes through these, so the same number makes the same
//! prompt wherever it is asked.

/// A prompt's token budget as granted: what the host asked, within the configured cap, over
/// the floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Budget(usize);

impl Budget {
    /// The least budget a prompt is assembled in: below it not even the fresh tail fits, and a
    /// host's nonsense value (0, negative) must not empty the prompt.
    pub const FLOOR: usize = 256;
    /// The budget of a host that names none (OpenClaw's default context window).
    pub const UNSAID: usize = 128_000;

    /// The budget a host's ask gets: its value (else [`Self::UNSAID`]), no more than `cap` (the
    /// configured `tokenBudget`), and no less than [`Self::FLOOR`]. A value that is not a finite
    /// number counts as not asked.
    pub fn grant(asked: Option<f64>, cap: Option<u32>) -> Budget {
        let host = asked.filter(|b| b.is_finite()).map_or(Self::UNSAID as f64, f64::floor);
        let capped = cap.map_or(host, |cap| host.min(f64::from(cap)));
        // In range for the cast: at least the floor, at most a u32.
        Budget(capped.max(Self::FLOOR as f64).min(f64::from(u32::MAX)) as usize)
    }

    pub fn tokens(self) -> usize {
        self.0
    }
}

/// Whether the compaction hint (`hint` tokens) joins a prompt of `room` tokens: only while it
/// costs at most a quarter of it.
pub fn hint_fits(hint: usize, room: usize) -> bool {
    hint <= room / 4
}

/// Memory's share of the `room` a prompt has after the hint: `fraction` of it, at most `max`
/// (the context engine's `memoryBudgetFraction` and `memoryMaxTokens`).
pub fn memory_share(room: usize, fraction: f64, max: usize) -> usize {
    ((room as f64 * fraction) as usize).min(max)
}

/// A recall layer's share of memory's `room`: `percent` of it, at most `max` (the essential and
/// on-demand layers, L1 and L2; the deep layer, L3, takes what they and identity leave).
pub fn layer_share(room: usize, percent: usize, max: usize) -> usize {
    max.min(room.saturating_mul(percent) / 100)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_hosts_ask_is_capped_and_floored() {
        assert_eq!(Budget::grant(None, None).tokens(), Budget::UNSAID);
        assert_eq!(Budget::grant(Some(9000.7), None).tokens(), 9000);
        assert_eq!(Budget::grant(Some(f64::NAN), None).tokens(), Budget::UNSAID);
        assert_eq!(Budget::grant(Some(-5.0), None).tokens(), Budget::FLOOR);
        assert_eq!(Budget::grant(Some(1e30), None).tokens(), u32::MAX as usize);
        assert_eq!(Budget::grant(None, Some(1500)).tokens(), 1500);
        assert_eq!(Budget::grant(Some(100_000.0), Some(1500)).tokens(), 1500);
        assert_eq!(Budget::grant(Some(900.0), Some(1500)).tokens(), 900);
        assert_eq!(Budget::grant(Some(10.0), Some(1500)).tokens(), Budget::FLOOR);
        assert_eq!(Budget::grant(Some(8000.0), Some(10)).tokens(), Budget::FLOOR, "the floor beats a tiny cap");
    }

    proptest! {
        #[test]
        fn a_grant_is_within_the_floor_and_the_cap(asked in prop::option::of(any::<f64>()), cap in prop::option::of(any::<u32>())) {
            let b = Budget::grant(asked, cap).tokens();
            prop_assert!(b >= Budget::FLOOR);
            if let Some(cap) = cap {
                prop_assert!(b <= (cap as usize).max(Budget::FLOOR));
            }
            if let Some(a) = asked.filter(|a| a.is_finite() && *a >= Budget::FLOOR as f64 && *a <= u32::MAX as f64) {
                prop_assert!(b as f64 <= a);
            }
        }

        #[test]
        fn every_share_stays_within_its_room_and_its_most(
            room in 0usize..10_000_000,
            fraction in 0.0f64..=1.0,
            percent in 0usize..=100,
            most in 0usize..1_000_000,
        ) {
            let memory = memory_share(room, fraction, most);
            prop_assert!(memory <= room && memory <= most);
            let layer = layer_share(memory, percent, most);
            prop_assert!(layer <= memory && layer <= most);
            // A larger room never gets a smaller share.
            prop_assert!(memory_share(room + 1000, fraction, most) >= memory);
            prop_assert!(layer_share(room + 1000, percent, most) >= layer_share(room, percent, most));
        }
    }
}
