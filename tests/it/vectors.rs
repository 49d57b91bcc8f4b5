//! The metric test vectors (`tests/vectors/*.jsonl`, one record shape for every metric, written
//! from the reference libraries' recorded outputs by `datasets/fixtures/make_vectors.py`) through
//! the library's `Expr` face: each record's inputs become a frame, `expr::metric` with the
//! record's options (read as the metric's keyword arguments are) scores it in a lazy `select`,
//! and every expected value is checked within the record's tolerance. The Python reader
//! (`tests/python/test_vectors.py`) checks the same records through `pr.<metric>`.
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};

use polars::prelude::*;
use polars_rag::columnar::{catalogue, expr};
use polars_rag::registry::{MetricId, MetricKind, MetricOptions};
use serde_json::Value;

fn vector_files() -> Vec<PathBuf> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .expect("tests/vectors")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
}

/// A JSON value as a Polars value: numbers as Float64 (Int64 when integral), lists and objects
/// nested. A list whose items say nothing of their type (empty, or nulls only) holds strings,
/// the type of every text role.
fn any_value(value: &Value) -> AnyValue<'static> {
    match value {
        Value::Null => AnyValue::Null,
        Value::Bool(b) => AnyValue::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => AnyValue::Int64(i),
            None => AnyValue::Float64(n.as_f64().unwrap()),
        },
        Value::String(s) => AnyValue::StringOwned(s.as_str().into()),
        Value::Array(items) => AnyValue::List(column_of("", items)),
        Value::Object(fields) => {
            let values: Vec<AnyValue<'static>> = fields.values().map(any_value).collect();
            let fields: Vec<Field> = fields
                .iter()
                .zip(&values)
                .map(|((name, _), v)| Field::new(name.as_str().into(), v.dtype()))
                .collect();
            AnyValue::StructOwned(Box::new((values, fields)))
        }
    }
}

/// A column of JSON values (see [`any_value`]).
fn column_of(name: &str, values: &[Value]) -> Series {
    let values: Vec<AnyValue<'static>> = values.iter().map(any_value).collect();
    let series = Series::from_any_values(name.into(), &values, false).unwrap();
    match series.dtype() {
        DataType::Null => series.cast(&DataType::String).unwrap(),
        DataType::List(inner) if **inner == DataType::Null => series
            .cast(&DataType::List(Box::new(DataType::String)))
            .unwrap(),
        _ => series,
    }
}

/// A Polars value as JSON, to compare with the record's expected value.
fn json_of(value: AnyValue<'_>) -> Value {
    match value {
        AnyValue::Null => Value::Null,
        AnyValue::Boolean(b) => Value::Bool(b),
        AnyValue::String(s) => Value::String(s.to_string()),
        AnyValue::StringOwned(s) => Value::String(s.to_string()),
        AnyValue::List(items) => Value::Array(items.iter().map(json_of).collect()),
        AnyValue::Struct(_, _, fields) => Value::Object(
            fields
                .iter()
                .zip(value._iter_struct_av())
                .map(|(f, v)| (f.name().to_string(), json_of(v)))
                .collect(),
        ),
        AnyValue::StructOwned(payload) => {
            let (values, fields) = *payload;
            Value::Object(
                fields
                    .iter()
                    .zip(values)
                    .map(|(f, v)| (f.name().to_string(), json_of(v)))
                    .collect(),
            )
        }
        other => match other.extract::<f64>() {
            Some(x) => serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number),
            None => panic!("a value of type {} in a metric's output", other.dtype()),
        },
    }
}

/// `got` equals `want` within `tolerance` (numbers), field by field for the fields `want` names
/// (structs), item by item (lists).
fn check(got: &Value, want: &Value, tolerance: f64, at: &str) {
    match want {
        Value::Null => assert!(got.is_null(), "{at}: got {got}, want null"),
        Value::Number(w) => {
            let w = w.as_f64().unwrap();
            let g = got
                .as_f64()
                .unwrap_or_else(|| panic!("{at}: got {got}, want {w}"));
            assert!(
                (g - w).abs() <= tolerance,
                "{at}: got {g}, want {w} (tolerance {tolerance})"
            );
        }
        Value::Object(fields) => {
            for (name, w) in fields {
                let g = got
                    .get(name)
                    .unwrap_or_else(|| panic!("{at}: no field {name} in {got}"));
                check(g, w, tolerance, &format!("{at}.{name}"));
            }
        }
        Value::Array(items) => {
            let g = got
                .as_array()
                .unwrap_or_else(|| panic!("{at}: got {got}, want a list"));
            assert_eq!(g.len(), items.len(), "{at}: got {got}, want {want}");
            for (i, (g, w)) in g.iter().zip(items).enumerate() {
                check(g, w, tolerance, &format!("{at}[{i}]"));
            }
        }
        Value::Bool(_) | Value::String(_) => assert_eq!(got, want, "{at}"),
    }
}

/// The record's metric scored on its inputs through `expr::metric`, as JSON: the rows of a
/// row-wise metric, the one value of an aggregate.
fn score(record: &Value) -> Value {
    let metric: MetricId = record["metric"].as_str().unwrap().parse().unwrap();
    let info = metric.info();
    let roles = catalogue::input_columns(info.inputs);
    let inputs = record["inputs"].as_object().unwrap();
    let mut named: Vec<&str> = inputs.keys().map(String::as_str).collect();
    named.sort_unstable();
    let mut expected_roles = roles.to_vec();
    expected_roles.sort_unstable();
    assert_eq!(
        named, expected_roles,
        "{metric}: inputs are named {roles:?}"
    );
    let columns: Vec<Column> = roles
        .iter()
        .map(|role| column_of(role, inputs[*role].as_array().unwrap()).into())
        .collect();
    let frame = DataFrame::new_infer_height(columns).unwrap();
    let options = MetricOptions::for_metric(metric, record["options"].clone()).unwrap();
    let exprs: Vec<Expr> = roles.iter().map(|role| col(*role)).collect();
    let scored = frame
        .lazy()
        .select([expr::metric(metric, exprs, &options)])
        .collect()
        .unwrap();
    let column = scored
        .column(metric.as_str())
        .unwrap()
        .as_materialized_series();
    let rows: Vec<Value> = column.iter().map(json_of).collect();
    if info.kind == MetricKind::Aggregate {
        assert_eq!(rows.len(), 1, "{metric}: an aggregate gives one value");
        rows.into_iter().next().unwrap()
    } else {
        Value::Array(rows)
    }
}

#[test]
fn every_record_equals_its_reference() {
    let files = vector_files();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "nuggets.jsonl",
            "quoted_spans.jsonl",
            "rouge.jsonl",
            "sacrebleu.jsonl",
            "string_metrics.jsonl"
        ]
    );
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let record: Value = serde_json::from_str(line).unwrap();
            let keys: Vec<&str> = record
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(
                keys,
                [
                    "case",
                    "expected",
                    "inputs",
                    "metric",
                    "options",
                    "source",
                    "tolerance"
                ],
                "{}:{}",
                file.display(),
                n + 1
            );
            let at = format!(
                "{}:{} {} ({}; {})",
                file.file_name().unwrap().to_string_lossy(),
                n + 1,
                record["metric"],
                record["case"],
                record["source"]
            );
            let tolerance = record["tolerance"].as_f64().unwrap();
            check(&score(&record), &record["expected"], tolerance, &at);
            checked += 1;
        }
    }
    assert_eq!(checked, 574, "every record of the five files was checked");
}

#[test]
#[should_panic(expected = "tolerance")]
fn the_check_fails_where_the_reference_differs() {
    let record = serde_json::json!({
        "metric": "bleu",
        "inputs": {"answer": ["a b c d"], "references": [["a b c d"]]},
        "options": {},
    });
    check(&score(&record), &serde_json::json!([0.5]), 1e-12, "bleu");
}
