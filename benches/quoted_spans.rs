//! Criterion benchmarks of the quoted-span kernel on the workload of BENCHMARKS.md: answers of
//! ~600 characters with 2–3 quotations, 5 sources of ~1,500 characters each.
//!
//! Run: `cargo bench --bench quoted_spans`

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use polars_rag::metrics::citation::{QuotedSpans, QuotedSpansOptions, Scratch};
use polars_rag::text::quotes::QuoteStyle;

const WORDS: &[&str] = &[
    "the",
    "committee",
    "approved",
    "a",
    "budget",
    "of",
    "twelve",
    "million",
    "for",
    "research",
    "into",
    "renewable",
    "energy",
    "and",
    "storage",
    "while",
    "critics",
    "argued",
    "that",
    "costs",
    "would",
    "rise",
    "faster",
    "than",
    "expected",
    "Parliament",
    "Europe",
    "Ministry",
    "grid",
];

/// A tiny deterministic generator (xorshift), so runs compare across machines.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 as usize
    }
    fn words(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| WORDS[self.next() % WORDS.len()])
            .collect::<Vec<_>>()
            .join(" ")
    }
}

struct Row {
    answer: String,
    sources: Vec<String>,
}

/// Rows whose quotes are verbatim (`found`) or invented (`absent`), the two kernel paths.
fn rows(n: usize, found: bool, seed: u64) -> Vec<Row> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|_| {
            let sources: Vec<String> = (0..5).map(|_| rng.words(220)).collect();
            let mut answer = String::new();
            let quotes = 2 + rng.next() % 2;
            for source in sources.iter().take(quotes) {
                answer.push_str(&rng.words(18));
                let quote = if found {
                    let words: Vec<&str> = source.split(' ').collect();
                    let at = rng.next() % (words.len() - 10);
                    words[at..at + 8].join(" ")
                } else {
                    format!("Invented {}", rng.words(7))
                };
                answer.push_str(&format!(" “{quote}” "));
            }
            Row { answer, sources }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("quoted_spans");
    for found in [true, false] {
        let data = rows(2_000, found, 42);
        let bytes: usize = data
            .iter()
            .map(|r| r.answer.len() + r.sources.iter().map(String::len).sum::<usize>())
            .sum();
        group.throughput(Throughput::Bytes(bytes as u64));
        for quotes in [QuoteStyle::Standard, QuoteStyle::Ragas] {
            let scorer = QuotedSpans::new(QuotedSpansOptions {
                quotes,
                ..Default::default()
            });
            let id = format!("{quotes:?}/{}", if found { "verbatim" } else { "invented" });
            group.bench_with_input(BenchmarkId::from_parameter(id), &data, |b, data| {
                let mut scratch = Scratch::default();
                b.iter(|| {
                    let mut matched = 0u32;
                    for r in data {
                        let s: Vec<&str> = r.sources.iter().map(String::as_str).collect();
                        matched += scorer.score(black_box(&r.answer), &s, &mut scratch).matched;
                    }
                    matched
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
