//! Benchmarks of the paired-comparison statistics (`polars_rag::compare::stats`).
//!
//! Run: `cargo bench --bench stats`
//!
//! The target workload of the `compare` command, 1,000,000 items × 10 metrics × 1,000
//! resamples, takes seconds per run, too long for criterion's repeated samples: under
//! `cargo bench` it is timed once, on 2 threads, and printed first. Criterion then measures a
//! tenth of it (100,000 items) on 1 and 2 threads, the t-test on 1,000,000 items and the corpus
//! variant on BLEU-like statistics.

use std::time::Instant;

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use polars_rag::compare::stats::{
    bootstrap_corpus, paired_resampling, paired_t_test, ResampleOptions,
};

/// `metrics` columns of `n` deterministic deltas (different per metric, mean near 0).
fn deltas(n: usize, metrics: usize) -> Vec<Vec<f64>> {
    (0..metrics)
        .map(|m| {
            (0..n)
                .map(|i| 0.3 * ((i * (m + 3)) as f64 * 0.618).sin() + 0.001 * m as f64)
                .collect()
        })
        .collect()
}

fn options(threads: usize) -> ResampleOptions {
    ResampleOptions {
        resamples: 1000,
        seed: 1,
        threads,
        ..Default::default()
    }
}

/// The full workload, timed once (only under `cargo bench`, not `cargo test --benches`).
fn full_scale_once() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let (n, metrics, threads) = (1_000_000, 10, 2);
    let data = deltas(n, metrics);
    let columns: Vec<&[f64]> = data.iter().map(|c| c.as_slice()).collect();
    let start = Instant::now();
    let results = paired_resampling(&columns, &options(threads));
    let seconds = start.elapsed().as_secs_f64();
    black_box(results);
    eprintln!(
        "paired_resampling, {n} items x {metrics} metrics x 1000 resamples, {threads} threads: \
         {seconds:.2} s ({:.2} ns per item-metric-resample per thread)",
        seconds * 1e9 * threads as f64 / (n * metrics * 1000) as f64
    );
}

fn bench(c: &mut Criterion) {
    full_scale_once();

    let (n, metrics) = (100_000, 10);
    let data = deltas(n, metrics);
    let columns: Vec<&[f64]> = data.iter().map(|c| c.as_slice()).collect();
    let mut group = c.benchmark_group("paired_resampling 100k items x 10 metrics x 1000 resamples");
    group.sample_size(10);
    group.throughput(Throughput::Elements((n * metrics * 1000) as u64));
    for threads in [1, 2] {
        group.bench_with_input(BenchmarkId::new("threads", threads), &threads, |b, &t| {
            b.iter(|| paired_resampling(black_box(&columns), &options(t)))
        });
    }
    group.finish();

    let baseline: Vec<f64> = (0..1_000_000)
        .map(|i| 0.5 + 0.25 * (i as f64).cos())
        .collect();
    let candidate: Vec<f64> = baseline
        .iter()
        .enumerate()
        .map(|(i, b)| b + 0.3 * (i as f64).sin() + 0.001)
        .collect();
    let mut group = c.benchmark_group("paired_t_test");
    group.throughput(Throughput::Elements(baseline.len() as u64));
    group.bench_function("1M items", |b| {
        b.iter(|| paired_t_test(black_box(&baseline), black_box(&candidate)))
    });
    group.finish();

    // Corpus BLEU-like statistics: 4 match counts, 4 totals, 2 lengths per item.
    let n = 100_000;
    let stats = |shift: f64| -> Vec<Vec<f64>> {
        (0..10)
            .map(|j| {
                (0..n)
                    .map(|i| (10.0 + 8.0 * ((i * (j + 1)) as f64 * 0.37 + shift).sin()).floor())
                    .collect()
            })
            .collect()
    };
    let (base, cand) = (stats(0.0), stats(0.2));
    let base: Vec<&[f64]> = base.iter().map(|c| c.as_slice()).collect();
    let cand: Vec<&[f64]> = cand.iter().map(|c| c.as_slice()).collect();
    let bleu = |s: &[f64]| {
        let log_precision: f64 = (0..4).map(|k| (s[k] / s[4 + k]).ln()).sum::<f64>() / 4.0;
        let brevity = if s[8] < s[9] { 1.0 - s[9] / s[8] } else { 0.0 };
        100.0 * (log_precision + brevity).exp()
    };
    let mut group =
        c.benchmark_group("bootstrap_corpus 100k items x 10 statistics x 1000 resamples");
    group.sample_size(10);
    group.throughput(Throughput::Elements((n * 10 * 1000) as u64));
    group.bench_function("2 threads", |b| {
        b.iter(|| bootstrap_corpus(black_box(&base), black_box(&cand), bleu, &options(2)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
