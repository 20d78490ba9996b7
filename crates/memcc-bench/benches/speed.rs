//! `cargo bench -p memcc-bench [-- --quick]`: the speed suite (same as `memcc bench speed`).

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let sizes: &[usize] = if quick { &[1_000, 10_000] } else { &[1_000, 10_000, 100_000] };
    let bulk: &[usize] = if quick { &[10_000] } else { &[10_000, 100_000, 200_000] };
    let config = memcc::MemccConfig::default();
    let mut warnings = Vec::new();
    let embedder = match memcc::Memcc::embedder(&config, &mut warnings) {
        Ok(e) => e,
        Err(e) => return eprintln!("no embedder: {e}"),
    };
    for w in warnings {
        eprintln!("warning: {w}");
    }
    match memcc_bench::speed::run(embedder, sizes, bulk, if quick { 30 } else { 100 }, &mut |stage| {
        eprintln!("… {stage}")
    }) {
        Ok(report) => println!("{}", memcc_bench::speed::markdown(&report)),
        Err(e) => eprintln!("speed suite failed: {e}"),
    }
}
