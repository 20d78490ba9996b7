//! The vector stores on the same vectors and queries in one run: the default flat scan (sign-bit
//! shortlist, int8, f32 rerank), and with their features an HNSW index (hnsw_rs) and the LanceDB `VectorStore`:
//! `cargo bench -p memcc-bench --features ann,lancedb --bench vectors [-- --quick]`.
//! Reports build/load time, query latency p50/p99 and recall@10 against brute-force f32 truth.

use std::sync::Arc;
use std::time::{Duration, Instant};

use memcc::lab::memory::vector::{FlatScan, VectorRow, VectorStore};
use memcc_bench::speed::{latency, unit};

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (n, dim) = (if quick { 20_000 } else { 100_000 }, 512);
    let data: Arc<Vec<Vec<f32>>> = Arc::new((0..n).map(|i| unit(i as u64, dim)).collect());
    let queries: Vec<Vec<f32>> = (0..50).map(|i| unit(10_000_000 + i, dim)).collect();
    let truth: Vec<Vec<usize>> = queries
        .iter()
        .map(|q| {
            let mut s: Vec<(usize, f32)> =
                data.iter().enumerate().map(|(i, v)| (i, v.iter().zip(q).map(|(a, b)| a * b).sum())).collect();
            s.sort_by(|a, b| b.1.total_cmp(&a.1));
            s.into_iter().take(10).map(|x| x.0).collect()
        })
        .collect();
    let recall = |got: &[Vec<usize>]| -> f64 {
        got.iter().zip(&truth).map(|(g, t)| g.iter().filter(|x| t.contains(x)).count()).sum::<usize>() as f64
            / (10 * truth.len()) as f64
    };

    let rows: Vec<VectorRow<'_>> = data.iter().enumerate().map(|(i, v)| (i as i64, "a", v.as_slice())).collect();
    println!("{n} × {dim}, {} queries, k 10", queries.len());

    let t = Instant::now();
    let source = data.clone();
    let scan = FlatScan::new(
        dim,
        Some(Box::new(move |ids: &[i64]| Ok(ids.iter().map(|&i| (i, source[i as usize].clone())).collect()))),
    );
    for chunk in rows.chunks(2048) {
        scan.upsert_many(chunk);
    }
    report("flat scan: sign-bit shortlist, int8, f32 rerank", t.elapsed().as_secs_f64(), &scan, &queries, &recall);

    #[cfg(feature = "lancedb")]
    {
        let dir = tempfile::tempdir().expect("temp dir");
        let t = Instant::now();
        let lance = memcc::lab::memory::vector::lance::LanceVectorStore::open(dir.path(), dim).expect("LanceDB opens");
        for chunk in rows.chunks(2048) {
            lance.upsert_many(chunk);
        }
        report("LanceDB, flat, owner prefilter", t.elapsed().as_secs_f64(), &lance, &queries, &recall);
    }

    #[cfg(feature = "ann")]
    {
        use hnsw_rs::prelude::{DistDot, Hnsw};
        let t = Instant::now();
        let hnsw: Hnsw<f32, DistDot> = Hnsw::new(16, n, 16, 200, DistDot {});
        let refs: Vec<(&Vec<f32>, usize)> = data.iter().enumerate().map(|(i, v)| (v, i)).collect();
        hnsw.parallel_insert(&refs);
        let build = t.elapsed().as_secs_f64();
        for ef in [32usize, 64, 128] {
            let mut got = Vec::new();
            let lat: Vec<Duration> = queries
                .iter()
                .map(|q| {
                    let t = Instant::now();
                    let res = hnsw.search(q, 10, ef);
                    let d = t.elapsed();
                    got.push(res.iter().map(|r| r.d_id).collect());
                    d
                })
                .collect();
            print_row(&format!("HNSW (M 16, efC 200, ef {ef})"), build, lat, recall(&got));
        }
    }
}

fn report(name: &str, load: f64, store: &dyn VectorStore, queries: &[Vec<f32>], recall: &dyn Fn(&[Vec<usize>]) -> f64) {
    let owners = vec!["a".to_string()];
    let mut got = Vec::new();
    let lat = queries
        .iter()
        .map(|q| {
            let t = Instant::now();
            let hits = store.search(q, 10, &owners).unwrap_or_default();
            let d = t.elapsed();
            got.push(hits.iter().map(|h| h.id as usize).collect());
            d
        })
        .collect();
    print_row(name, load, lat, recall(&got));
}

fn print_row(name: &str, build: f64, lat: Vec<Duration>, recall: f64) {
    let l = latency(lat);
    let (p50, p99) = (l.p50_ms, l.p99_ms);
    println!("{name:<34} build/load {build:>6.1} s, p50/p99 {p50:>7.2}/{p99:>7.2} ms, recall@10 {recall:.3}");
}
