//! Criterion benchmarks of the answer-metric kernels on one thread: 1,000 pairs of 60-token
//! answers and references per iteration (the workload of `benches/compare_answer_metrics.py`).
//!
//! Run: `cargo bench --bench answer_metrics`

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use polars_rag::metrics::{bleu, chrf, rouge};

/// Deterministic pairs: 60 words each, the answer a shifted and half-shuffled copy of the
/// reference so scores spread.
fn pairs(n: usize) -> Vec<(String, String)> {
    let vocabulary: Vec<String> = (0..2_000)
        .map(|i| format!("w{}x{}", i % 97, i / 97))
        .collect();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as usize
    };
    let text: Vec<&str> = (0..50_000)
        .map(|_| vocabulary[next() % vocabulary.len()].as_str())
        .collect();
    (0..n)
        .map(|_| {
            let start = next() % (text.len() - 100);
            let shift = next() % 20;
            let reference = text[start..start + 60].join(" ");
            let mut answer: Vec<&str> = text[start + shift..start + shift + 60].to_vec();
            for i in 30..60 {
                let j = 30 + next() % 30;
                answer.swap(i, j);
            }
            (answer.join(", "), reference)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let data = pairs(1_000);
    let mut group = c.benchmark_group("answer_metrics");
    group.throughput(Throughput::Elements(data.len() as u64));
    let bleu_options = bleu::BleuOptions::default();
    group.bench_function("bleu", |b| {
        let mut scratch = bleu::Scratch::default();
        b.iter(|| {
            data.iter()
                .map(|(a, r)| {
                    scratch
                        .bleu(black_box(a), &[r.as_str()], &bleu_options)
                        .score
                })
                .sum::<f64>()
        })
    });
    // The pairs of `benches/compare_answer_metrics.py` (or any others), one `answer\treference`
    // per line, when `POLARS_RAG_BENCH_PAIRS` names such a file.
    if let Some(file) = std::env::var_os("POLARS_RAG_BENCH_PAIRS") {
        let text = std::fs::read_to_string(file).expect("POLARS_RAG_BENCH_PAIRS: unreadable");
        let file_pairs: Vec<(&str, &str)> = text
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .take(data.len())
            .collect();
        let mut scratch = bleu::Scratch::default();
        group.bench_function("bleu (pairs file)", |b| {
            b.iter(|| {
                file_pairs
                    .iter()
                    .map(|&(a, r)| scratch.bleu(black_box(a), &[r], &bleu_options).score)
                    .sum::<f64>()
            })
        });
    }
    let chrf_options = chrf::ChrfOptions::default();
    group.bench_function("chrf", |b| {
        let mut scratch = chrf::Scratch::default();
        b.iter(|| {
            data.iter()
                .map(|(a, r)| scratch.chrf(black_box(a), &[r.as_str()], &chrf_options))
                .sum::<f64>()
        })
    });
    let rouge_options = rouge::RougeOptions {
        use_stemmer: true,
        ..Default::default()
    };
    group.bench_function("rouge (stemmer)", |b| {
        let mut scratch = rouge::Scratch::default();
        b.iter(|| {
            data.iter()
                .map(|(a, r)| {
                    scratch
                        .rouge(black_box(a), &[r.as_str()], &rouge_options)
                        .rouge_l
                        .fmeasure
                })
                .sum::<f64>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
