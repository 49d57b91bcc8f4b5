//! Times the local model's forward pass on one batch (32 texts of ~135 tokens, the RAG chunk
//! size of benches/embed_speed.py), for profiling: `cargo bench --features embed --bench
//! embed_forward -- MODEL_DIR`.

use std::time::Instant;

use polars_rag::engines::embed::local::LocalModel;

fn main() {
    let dir = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .or_else(|| std::env::var("POLARS_RAG_EMBED_MODEL").ok())
        .expect("model directory");
    let model = LocalModel::load(std::path::Path::new(&dir)).unwrap();
    let words = "the state of the union address was given to congress and the nation about jobs prices and the economy"
        .split(' ')
        .collect::<Vec<_>>();
    let texts: Vec<String> = (0..32)
        .map(|i| {
            (0..110)
                .map(|j| words[(i * 7 + j * 3) % words.len()])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let tokens: usize = refs
        .iter()
        .map(|t| model.tokens(t).unwrap().ids.len())
        .sum();
    model.embed_batch(&refs).unwrap();
    // A file of texts, one per line (benches/embed_speed.py's chunks): embedded as the engine
    // does it, sorted by length in batches of 32.
    if let Ok(path) = std::env::var("EMBED_TEXTS") {
        let text = std::fs::read_to_string(path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let mut sorted = lines.clone();
        sorted.sort_by_key(|t| std::cmp::Reverse(t.chars().count()));
        let start = Instant::now();
        for batch in sorted.chunks(32) {
            model.embed_batch(batch).unwrap();
        }
        let seconds = start.elapsed().as_secs_f64();
        println!(
            "{} texts: {:.2} s, {:.1} texts/s",
            lines.len(),
            seconds,
            lines.len() as f64 / seconds
        );
        return;
    }
    let runs = 5;
    let start = Instant::now();
    for _ in 0..runs {
        model.embed_batch(&refs).unwrap();
    }
    let seconds = start.elapsed().as_secs_f64() / runs as f64;
    println!(
        "batch of 32 texts, {} tokens each: {:.3} s per batch, {:.1} texts/s",
        tokens / 32,
        seconds,
        32.0 / seconds
    );
}
