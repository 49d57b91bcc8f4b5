//! sacrebleu 2.6.0 parity: tokenizer, sentence/corpus BLEU, chrF, and the ragas and datapizza
//! wrappers built on them.

use crate::common;

use common::{section, strings};
use polars_rag::metrics::bleu::{
    bleu, datapizza_bleu_score, datapizza_corpus_bleu_score, score_from_stats, stats, BleuOptions,
    BleuStats,
};
use polars_rag::metrics::chrf::{chrf, ChrfOptions};
use polars_rag::text::sacrebleu::BleuTokenizer;
use serde_json::Value;

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= 1e-12, "{what}: {a} vs {b}");
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

#[test]
fn tokenizer_13a() {
    let cases = section("primitives.sacrebleu_tokenizer_13a");
    let mut out = String::new();
    for c in &cases {
        BleuTokenizer::Tok13a.tokenize_into(c["input"].as_str().unwrap(), &mut out);
        assert_eq!(out, c["output"].as_str().unwrap(), "{c}");
    }
    assert_eq!(cases.len(), 20);
}

fn check_bleu(s: &polars_rag::metrics::bleu::BleuScore, o: &Value) {
    close(s.score, o["score_0_100"].as_f64().unwrap() / 100.0, "score");
    assert_eq!(s.counts.to_vec(), u64s(&o["counts"]));
    assert_eq!(s.totals.to_vec(), u64s(&o["totals"]));
    for (p, q) in s
        .precisions
        .iter()
        .zip(o["precisions_0_100"].as_array().unwrap())
    {
        close(*p, q.as_f64().unwrap(), "precision");
    }
    close(s.bp, o["bp"].as_f64().unwrap(), "bp");
    assert_eq!(s.sys_len, o["sys_len"].as_u64().unwrap());
    assert_eq!(s.ref_len, o["ref_len"].as_u64().unwrap());
}

#[test]
fn sentence_bleu() {
    let cases = section("primitives.sacrebleu.sentence_bleu");
    for c in &cases {
        let refs = strings(&c["input"]["references"]);
        let refs: Vec<&str> = refs.iter().map(String::as_str).collect();
        let s = bleu(
            c["input"]["hypothesis"].as_str().unwrap(),
            &refs,
            &BleuOptions::default(),
        );
        check_bleu(&s, &c["output"]);
    }
    assert_eq!(cases.len(), 7);
}

/// sacrebleu's `corpus_bleu(hyps, streams)`: segment i is scored against `stream[i]` of every
/// stream, and `zip` stops at the shortest input.
fn corpus(hyps: &[String], streams: &[Vec<String>], opts: &BleuOptions) -> BleuStats {
    let n = streams
        .iter()
        .map(Vec::len)
        .chain([hyps.len()])
        .min()
        .unwrap();
    let mut total = BleuStats::default();
    for (i, h) in hyps.iter().take(n).enumerate() {
        let refs: Vec<&str> = streams.iter().map(|s| s[i].as_str()).collect();
        total.add(&stats(h, &refs, opts));
    }
    total
}

#[test]
fn corpus_bleu() {
    let cases = section("primitives.sacrebleu.corpus_bleu");
    for c in &cases {
        let hyps = strings(&c["input"]["hypotheses"]);
        let streams: Vec<Vec<String>> = c["input"]["references(streams)"]
            .as_array()
            .unwrap()
            .iter()
            .map(strings)
            .collect();
        let o = BleuOptions::corpus();
        let st = corpus(&hyps, &streams, &o);
        check_bleu(&score_from_stats(&st, &o), &c["output"]);
    }
    assert_eq!(cases.len(), 4);
}

#[test]
fn corpus_chrf() {
    let cases = section("primitives.sacrebleu.corpus_chrf([hyp],[[ref]])");
    for c in &cases {
        let s = chrf(
            c["input"]["hypothesis"].as_str().unwrap(),
            &[c["input"]["reference"].as_str().unwrap()],
            &ChrfOptions::default(),
        );
        close(s, c["output_0_100"].as_f64().unwrap() / 100.0, "chrf");
    }
    assert_eq!(cases.len(), 6);
}

/// ragas `BleuScore`: both texts split on `". "`, then
/// `corpus_bleu(response_sentences, [[r] for r in reference_sentences])`, i.e. only the first
/// response sentence is scored (zip over one-element streams), against every reference sentence.
/// `ChrfScore` is `corpus_chrf([response], [[reference]])`.
#[test]
fn ragas_bleu_and_chrf() {
    let cases = section("ragas.pairwise_string_metrics");
    let mut compared = 0;
    for c in &cases {
        let reference = c["input"]["reference"].as_str().unwrap();
        let response = c["input"]["response"].as_str().unwrap();
        let hyps: Vec<String> = response.split(". ").map(str::to_owned).collect();
        let streams: Vec<Vec<String>> = reference.split(". ").map(|r| vec![r.to_owned()]).collect();
        for (key, eff) in [
            ("BleuScore", false),
            ("BleuScore.use_effective_order", true),
        ] {
            if let Some(want) = c["outputs"][key]["output"].as_f64() {
                let o = BleuOptions {
                    effective_order: eff,
                    ..BleuOptions::corpus()
                };
                let s = score_from_stats(&corpus(&hyps, &streams, &o), &o);
                close(s.score, want, key);
                compared += 1;
            }
        }
        if let Some(want) = c["outputs"]["ChrfScore"]["output"].as_f64() {
            close(
                chrf(response, &[reference], &ChrfOptions::default()),
                want,
                "chrf",
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 60);
}

/// datapizza `bleu_score`: sacrebleu `sentence_bleu(retrieved, ground_truths)` with two wrapper
/// rules: no ground truth gives 0, and an empty hypothesis against only empty ground truths 1.
#[test]
fn datapizza_bleu_score_every_case() {
    let cases = section("datapizza.bleu_score");
    let mut scratch = polars_rag::metrics::bleu::Scratch::default();
    for c in &cases {
        let hyp = c["input"]["retrieved_chunk"].as_str().unwrap();
        let refs = strings(&c["input"]["ground_truth_chunks"]);
        let refs: Vec<&str> = refs.iter().map(String::as_str).collect();
        let got = datapizza_bleu_score(&mut scratch, hyp, &refs, &BleuOptions::default());
        close(
            got,
            c["output"].as_f64().unwrap(),
            c["description"].as_str().unwrap(),
        );
    }
    assert_eq!(cases.len(), 18);
}

/// datapizza `corpus_bleu_score`: the mean over ground truths of the best `bleu_score` of any
/// retrieved chunk against it alone; its `ValueError` without ground truth.
#[test]
fn datapizza_corpus_bleu_score_every_case() {
    let cases = section("datapizza.corpus_bleu_score");
    let mut scratch = polars_rag::metrics::bleu::Scratch::default();
    for c in &cases {
        let what = c["description"].as_str().unwrap();
        let hyps = strings(&c["input"]["retrieved_chunks"]);
        let refs = strings(&c["input"]["ground_truth_chunks"]);
        let hyps: Vec<&str> = hyps.iter().map(String::as_str).collect();
        let refs: Vec<&str> = refs.iter().map(String::as_str).collect();
        let got = datapizza_corpus_bleu_score(&mut scratch, &hyps, &refs, &BleuOptions::default());
        match c.get("error") {
            Some(err) => assert_eq!(
                got.as_ref().err().map(polars_rag::Error::message),
                err["message"].as_str(),
                "{what}"
            ),
            None => close(got.unwrap(), c["output"].as_f64().unwrap(), what),
        }
    }
    assert_eq!(cases.len(), 13);
}
