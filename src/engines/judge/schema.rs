//! Validation of a judge's reply against the JSON schema its template declares.
//!
//! Structured output is requested from the server, but servers differ in how strictly they
//! enforce it (and the `json_object` fallback enforces nothing), so every reply is checked here.
//!
//! A card's schema is checked once, when the card is read ([`check_schema`]): a keyword this
//! validator does not implement is refused with its name, never ignored, because an ignored
//! keyword would let replies that break the schema through. The keywords implemented:
//!
//! - any value: `type` (object, string, boolean, number, integer, array, null, or a list of
//!   these), `enum` (non-empty), `const`, `anyOf`, `oneOf`, `allOf`, `not`;
//! - objects: `properties`, `required` (each name declared in `properties`),
//!   `additionalProperties` (`false` or a schema), `minProperties`, `maxProperties`;
//! - arrays: `items` (one schema for every item), `minItems`, `maxItems`, `uniqueItems`;
//! - strings: `minLength`, `maxLength` (in code points), `pattern` (a regular expression in the
//!   syntax of the `regex` crate, searched anywhere in the string as JSON Schema specifies;
//!   look-around and back-references are refused when the card is read);
//! - numbers: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` (numbers).
//!
//! Annotations (`title`, `description`, `default`, `examples`, `format`, `$schema`, `$id`,
//! `$comment`, `deprecated`, `readOnly`, `writeOnly`) are accepted and do not constrain. Refused:
//! `$ref` and `$defs` (a reply schema is written out whole), `patternProperties`, `prefixItems`,
//! `if` / `then` / `else` and every other keyword. Numbers compare by value, so `1` and `1.0`
//! are equal in `enum`, `const` and `uniqueItems`.
//!
//! ```
//! use polars_rag::engines::judge::schema::{check_schema, validate};
//! use serde_json::json;
//! let schema = json!({
//!     "type": "object",
//!     "required": ["verdict"],
//!     "additionalProperties": false,
//!     "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}}
//! });
//! assert!(validate(&json!({"verdict": "yes"}), &schema).is_ok());
//! let e = validate(&json!({"verdict": "maybe"}), &schema).unwrap_err().to_string();
//! assert!(e.contains("verdict") && e.contains("maybe"));
//! assert!(validate(&json!({}), &schema).unwrap_err().to_string().contains("missing required field `verdict`"));
//! // A keyword the validator does not implement is refused, naming it.
//! let e = check_schema(&json!({"type": "object", "properties": {"a": {"$ref": "#/x"}}})).unwrap_err().to_string();
//! assert!(e.contains("`$ref`") && e.contains("properties.a"), "{e}");
//! ```

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use regex::Regex;
use serde_json::{Map, Value};

const TYPE_NAMES: [&str; 7] = [
    "object", "string", "boolean", "number", "integer", "array", "null",
];

/// Keywords that describe and do not constrain.
const ANNOTATIONS: [&str; 11] = [
    "title",
    "description",
    "default",
    "examples",
    "format",
    "$schema",
    "$id",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// The keywords that constrain, as implemented here.
const KEYWORDS: [&str; 23] = [
    "type",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "properties",
    "required",
    "additionalProperties",
    "minProperties",
    "maxProperties",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
];

/// The longest `pattern` a card may hold: a reply schema needs short patterns, and a bound keeps
/// a hostile card from making the regular-expression compiler do unbounded work.
const MAX_PATTERN_CHARS: usize = 1_000;

/// Checks that `schema` uses only keywords this validator implements, each with a value of the
/// right kind. The error ([`ErrorKind::InvalidOptions`](crate::ErrorKind::InvalidOptions))
/// names the keyword and where in the schema it is.
pub fn check_schema(schema: &Value) -> crate::Result<()> {
    check_schema_at(schema, "schema")
        .map_err(|e| crate::Error::new(crate::ErrorKind::InvalidOptions, e))
}

/// Checks `value` against `schema`; the error
/// ([`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput)) names the path of the first
/// violation. A schema that [`check_schema`] refuses is refused here too.
pub fn validate(value: &Value, schema: &Value) -> crate::Result<()> {
    check(value, schema, "$").map_err(|e| crate::Error::new(crate::ErrorKind::InvalidInput, e))
}

fn check_schema_at(schema: &Value, at: &str) -> Result<(), String> {
    let Some(keywords) = schema.as_object() else {
        return Err(format!(
            "{at}: a schema must be a JSON object, not {}",
            describe(schema)
        ));
    };
    let non_negative = |key: &str, value: &Value| -> Result<(), String> {
        if value.as_u64().is_none() {
            return Err(format!(
                "{at}: keyword `{key}` must be a non-negative integer, not {}",
                describe(value)
            ));
        }
        Ok(())
    };
    let number = |key: &str, value: &Value| -> Result<(), String> {
        match value.as_f64() {
            Some(x) if x.is_finite() => Ok(()),
            _ => Err(format!(
                "{at}: keyword `{key}` must be a number, not {}",
                describe(value)
            )),
        }
    };
    let schema_list = |key: &str, value: &Value| -> Result<(), String> {
        match value.as_array() {
            Some(list) if !list.is_empty() => {
                for (i, sub) in list.iter().enumerate() {
                    check_schema_at(sub, &format!("{at}.{key}[{i}]"))?;
                }
                Ok(())
            }
            _ => Err(format!(
                "{at}: keyword `{key}` must be a non-empty list of schemas"
            )),
        }
    };
    for (key, value) in keywords {
        match key.as_str() {
            key if ANNOTATIONS.contains(&key) => {}
            "type" => {
                let names: Vec<&Value> = match value {
                    Value::Array(names) if !names.is_empty() => names.iter().collect(),
                    Value::String(_) => vec![value],
                    _ => {
                        return Err(format!(
                            "{at}: keyword `type` must be a type name or a non-empty list of them, not {}",
                            describe(value)
                        ));
                    }
                };
                for name in names {
                    if !name.as_str().is_some_and(|n| TYPE_NAMES.contains(&n)) {
                        return Err(format!(
                            "{at}: keyword `type`: {} is not a JSON type (one of {})",
                            describe(name),
                            TYPE_NAMES.join(", ")
                        ));
                    }
                }
            }
            "enum" => {
                if value.as_array().is_none_or(|list| list.is_empty()) {
                    return Err(format!(
                        "{at}: keyword `enum` must be a non-empty list (an empty one allows no reply)"
                    ));
                }
            }
            "const" => {}
            "anyOf" | "oneOf" | "allOf" => schema_list(key, value)?,
            "not" => check_schema_at(value, &format!("{at}.not"))?,
            "properties" => {
                let Some(properties) = value.as_object() else {
                    return Err(format!(
                        "{at}: keyword `properties` must be an object of schemas"
                    ));
                };
                for (name, sub) in properties {
                    check_schema_at(sub, &format!("{at}.properties.{name}"))?;
                }
            }
            "required" => {
                // Checked against the `properties` beside it; a subschema without any (an
                // `anyOf` branch saying which fields must be present) names fields declared
                // elsewhere.
                let declared = keywords.get("properties").and_then(Value::as_object);
                let Some(names) = value.as_array() else {
                    return Err(format!(
                        "{at}: keyword `required` must be a list of field names"
                    ));
                };
                for name in names {
                    let Some(name) = name.as_str() else {
                        return Err(format!(
                            "{at}: keyword `required`: {} is not a field name",
                            describe(name)
                        ));
                    };
                    if declared.is_some_and(|d| !d.contains_key(name)) {
                        return Err(format!(
                            "{at}: keyword `required` names `{name}`, which `properties` does not declare"
                        ));
                    }
                }
            }
            "additionalProperties" => match value {
                Value::Bool(_) => {}
                _ => check_schema_at(value, &format!("{at}.additionalProperties"))?,
            },
            "items" => {
                if value.is_array() {
                    return Err(format!(
                        "{at}: keyword `items` must be one schema for every item (the list form is not supported)"
                    ));
                }
                check_schema_at(value, &format!("{at}.items"))?;
            }
            "uniqueItems" => {
                if !value.is_boolean() {
                    return Err(format!("{at}: keyword `uniqueItems` must be true or false"));
                }
            }
            "minItems" | "maxItems" | "minLength" | "maxLength" | "minProperties"
            | "maxProperties" => non_negative(key, value)?,
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => number(key, value)?,
            "pattern" => {
                let Some(pattern) = value.as_str() else {
                    return Err(format!(
                        "{at}: keyword `pattern` must be a string, not {}",
                        describe(value)
                    ));
                };
                compiled(pattern).map_err(|e| format!("{at}: keyword `pattern`: {e}"))?;
            }
            other => {
                return Err(format!(
                    "{at}: keyword `{other}` is not supported by the reply validator; \
                     rewrite the schema without it (the supported keywords are listed in the docs \
                     of polars_rag::engines::judge::schema)"
                ));
            }
        }
    }
    Ok(())
}

/// The compiled form of `pattern`, compiled once per process (replies are checked per row).
fn compiled(pattern: &str) -> Result<Arc<Regex>, String> {
    // Shared, not cloned: a clone of a Regex starts with an empty pool of match caches.
    static PATTERNS: OnceLock<Mutex<HashMap<String, Arc<Regex>>>> = OnceLock::new();
    let patterns = PATTERNS.get_or_init(Default::default);
    if let Some(regex) = patterns
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(pattern)
    {
        return Ok(regex.clone());
    }
    let length = pattern.chars().count();
    if length > MAX_PATTERN_CHARS {
        return Err(format!(
            "the pattern has {length} characters; at most {MAX_PATTERN_CHARS} are allowed"
        ));
    }
    let regex = Arc::new(
        regex::RegexBuilder::new(pattern)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| {
                let first_line = e.to_string().lines().last().unwrap_or_default().to_string();
                format!(
                    "{} is not a supported regular expression ({first_line})",
                    describe(&Value::String(pattern.to_string()))
                )
            })?,
    );
    patterns
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(pattern.to_string(), Arc::clone(&regex));
    Ok(regex)
}

fn type_matches(value: &Value, name: &str) -> bool {
    match name {
        "object" => value.is_object(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "number" => value.is_number(),
        // The reply becomes an Int64 column: a larger integer could not be stored, so it is
        // refused here, with a reason, rather than becoming a null without one.
        "integer" => value.as_i64().is_some(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => false,
    }
}

fn describe(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// JSON equality with numbers compared by value (`1` equals `1.0`).
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => exact(x) == exact(y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, a)| y.get(k).is_some_and(|b| json_equal(a, b)))
        }
        _ => a == b,
    }
}

/// A number as an exact value: an integer (or an integral float) as `i128`, any other float
/// by its bits; so `1` equals `1.0`, and integers above 2^53 are not rounded to floats.
#[derive(PartialEq)]
enum Exact {
    Integer(i128),
    Float(u64),
}

fn exact(n: &serde_json::Number) -> Exact {
    if let Some(i) = n.as_i64() {
        return Exact::Integer(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Exact::Integer(i128::from(u));
    }
    let x = n.as_f64().unwrap_or(f64::NAN);
    if x.fract() == 0.0 && x.abs() < 1e38 {
        Exact::Integer(x as i128)
    } else {
        Exact::Float((x + 0.0).to_bits())
    }
}

/// A text that is equal for values [`json_equal`] calls equal, so that `uniqueItems` is one
/// pass with a set rather than a comparison of every pair.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Number(n) => match exact(n) {
            Exact::Integer(i) => out.push_str(&i.to_string()),
            Exact::Float(bits) => out.push_str(&format!("f{bits}")),
        },
        Value::Array(items) => {
            out.push('[');
            for item in items {
                canonical(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(fields) => {
            let sorted: std::collections::BTreeMap<&String, &Value> = fields.iter().collect();
            out.push('{');
            for (key, field) in sorted {
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(field, out);
                out.push(',');
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn check(value: &Value, schema: &Value, path: &str) -> Result<(), String> {
    let Some(schema) = schema.as_object() else {
        return Err(format!(
            "{path}: the schema here is {}, not a JSON object",
            describe(schema)
        ));
    };
    for (key, expected) in schema {
        match key.as_str() {
            "type" => {
                let names: Vec<&str> = match expected {
                    Value::String(name) => vec![name.as_str()],
                    Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
                    _ => Vec::new(),
                };
                if !names.iter().any(|name| type_matches(value, name)) {
                    if names.contains(&"integer") && value.as_u64().is_some() {
                        return Err(format!(
                            "{path}: {value} is outside the signed 64-bit integer range"
                        ));
                    }
                    return Err(format!(
                        "{path}: expected {}, got {}",
                        names.join(" or "),
                        describe(value)
                    ));
                }
            }
            "enum" => {
                let allowed = expected.as_array().map(Vec::as_slice).unwrap_or_default();
                if !allowed.iter().any(|a| json_equal(a, value)) {
                    let allowed: Vec<String> = allowed.iter().map(Value::to_string).collect();
                    return Err(format!(
                        "{path}: {} is not one of {}",
                        describe(value),
                        allowed.join(", ")
                    ));
                }
            }
            "const" if !json_equal(expected, value) => {
                return Err(format!(
                    "{path}: {} is not the constant {}",
                    describe(value),
                    describe(expected)
                ));
            }
            "anyOf" | "oneOf" | "allOf" => {
                let subs = expected.as_array().map(Vec::as_slice).unwrap_or_default();
                let mut first_failure = None;
                let mut passed = 0usize;
                for sub in subs {
                    match check(value, sub, path) {
                        Ok(()) => passed += 1,
                        Err(e) => {
                            first_failure.get_or_insert(e);
                        }
                    }
                }
                let why = first_failure.unwrap_or_default();
                match key.as_str() {
                    "anyOf" if passed == 0 => {
                        return Err(format!(
                            "{path}: matches none of the `anyOf` schemas (the first says: {why})"
                        ));
                    }
                    "oneOf" if passed != 1 => {
                        return Err(format!(
                            "{path}: matches {passed} of the `oneOf` schemas, exactly 1 required"
                        ));
                    }
                    "allOf" if passed != subs.len() => return Err(why),
                    _ => {}
                }
            }
            "not" if check(value, expected, path).is_ok() => {
                return Err(format!("{path}: matches the schema under `not`"));
            }
            known if KEYWORDS.contains(&known) || ANNOTATIONS.contains(&known) => {}
            // A schema that did not go through `check_schema` (a template built field by field)
            // is not half-applied: its unknown keyword is the reply's error.
            other => {
                return Err(format!(
                    "{path}: the schema uses keyword `{other}`, which the reply validator does not implement"
                ));
            }
        }
    }
    match value {
        Value::Object(fields) => check_object(fields, schema, path),
        Value::Array(items) => check_array(items, schema, path),
        Value::String(text) => check_string(text, schema, path),
        Value::Number(number) => {
            let x = number.as_f64().unwrap_or(f64::NAN);
            let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
            if let Some(min) = bound("minimum")
                && x < min
            {
                return Err(format!("{path}: {x} is below the minimum {min}"));
            }
            if let Some(max) = bound("maximum")
                && x > max
            {
                return Err(format!("{path}: {x} is above the maximum {max}"));
            }
            if let Some(min) = bound("exclusiveMinimum")
                && x <= min
            {
                return Err(format!(
                    "{path}: {x} is not above the exclusive minimum {min}"
                ));
            }
            if let Some(max) = bound("exclusiveMaximum")
                && x >= max
            {
                return Err(format!(
                    "{path}: {x} is not below the exclusive maximum {max}"
                ));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn check_object(
    fields: &Map<String, Value>,
    schema: &Map<String, Value>,
    path: &str,
) -> Result<(), String> {
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !fields.contains_key(name) {
                return Err(format!("{path}: missing required field `{name}`"));
            }
        }
    }
    let count = fields.len() as u64;
    if let Some(min) = schema.get("minProperties").and_then(Value::as_u64)
        && count < min
    {
        return Err(format!("{path}: {count} fields, at least {min} required"));
    }
    if let Some(max) = schema.get("maxProperties").and_then(Value::as_u64)
        && count > max
    {
        return Err(format!("{path}: {count} fields, at most {max} allowed"));
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, field) in fields {
        match (
            properties.and_then(|p| p.get(name)),
            schema.get("additionalProperties"),
        ) {
            (Some(field_schema), _) => check(field, field_schema, &format!("{path}.{name}"))?,
            (None, Some(Value::Bool(false))) => {
                return Err(format!("{path}: unexpected field `{name}`"));
            }
            (None, Some(extra @ Value::Object(_))) => {
                check(field, extra, &format!("{path}.{name}"))?
            }
            (None, _) => {}
        }
    }
    Ok(())
}

fn check_array(items: &[Value], schema: &Map<String, Value>, path: &str) -> Result<(), String> {
    let bound = |key: &str| schema.get(key).and_then(Value::as_u64);
    let count = items.len() as u64;
    if let Some(min) = bound("minItems")
        && count < min
    {
        return Err(format!("{path}: {count} items, at least {min} required"));
    }
    if let Some(max) = bound("maxItems")
        && count > max
    {
        return Err(format!("{path}: {count} items, at most {max} allowed"));
    }
    if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
        let mut seen = HashSet::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let mut text = String::new();
            canonical(item, &mut text);
            if !seen.insert(text) {
                return Err(format!(
                    "{path}[{i}]: {} repeats an earlier item; the items must be unique",
                    describe(item)
                ));
            }
        }
    }
    if let Some(item_schema) = schema.get("items") {
        for (i, item) in items.iter().enumerate() {
            check(item, item_schema, &format!("{path}[{i}]"))?;
        }
    }
    Ok(())
}

fn check_string(text: &str, schema: &Map<String, Value>, path: &str) -> Result<(), String> {
    let bound = |key: &str| schema.get(key).and_then(Value::as_u64);
    if bound("minLength").is_some() || bound("maxLength").is_some() {
        let length = text.chars().count() as u64;
        if let Some(min) = bound("minLength")
            && length < min
        {
            return Err(format!(
                "{path}: {length} characters, at least {min} required"
            ));
        }
        if let Some(max) = bound("maxLength")
            && length > max
        {
            return Err(format!(
                "{path}: {length} characters, at most {max} allowed"
            ));
        }
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        let regex = compiled(pattern).map_err(|e| format!("{path}: `pattern`: {e}"))?;
        if !regex.is_match(text) {
            return Err(format!(
                "{path}: {} does not match the pattern {}",
                describe(&Value::String(text.to_string())),
                describe(&Value::String(pattern.to_string()))
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_types_items_and_bounds() {
        let schema = json!({
            "type": "object",
            "properties": {
                "claims": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "score": {"type": "number", "minimum": 0, "maximum": 1},
                "note": {"type": ["string", "null"]}
            }
        });
        assert!(validate(
            &json!({"claims": ["a"], "score": 0.5, "note": null}),
            &schema
        )
        .is_ok());
        assert!(validate(&json!({"claims": [1]}), &schema)
            .unwrap_err()
            .to_string()
            .starts_with("$.claims[0]"));
        assert!(validate(&json!({"claims": []}), &schema)
            .unwrap_err()
            .to_string()
            .contains("at least 1"));
        assert!(validate(&json!({"score": 2}), &schema)
            .unwrap_err()
            .to_string()
            .contains("maximum"));
        assert!(validate(&json!([]), &schema)
            .unwrap_err()
            .to_string()
            .contains("expected object"));
        // Extra fields are allowed unless additionalProperties is false.
        assert!(validate(&json!({"other": 1}), &schema).is_ok());
    }

    /// Each keyword the validator implements rejects a reply that breaks it (and accepts one
    /// that keeps it); before these keywords were implemented, every such reply was accepted.
    #[test]
    fn every_implemented_keyword_constrains() {
        let cases = [
            (
                json!({"type": "string", "pattern": "^[A-Z]{2}$"}),
                json!("AB"),
                json!("abc"),
                "pattern",
            ),
            (
                json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
                json!(3),
                json!(true),
                "anyOf",
            ),
            (
                json!({"oneOf": [{"type": "number"}, {"type": "integer"}]}),
                json!(1.5),
                json!(2),
                "oneOf",
            ),
            (
                json!({"allOf": [{"type": "number"}, {"minimum": 1}]}),
                json!(2),
                json!(0),
                "minimum",
            ),
            (
                json!({"not": {"type": "null"}}),
                json!(1),
                json!(null),
                "not",
            ),
            (
                json!({"const": "yes"}),
                json!("yes"),
                json!("no"),
                "constant",
            ),
            (json!({"const": 1}), json!(1.0), json!(2), "constant"),
            (
                json!({"type": "string", "minLength": 2}),
                json!("ab"),
                json!("é"),
                "at least 2",
            ),
            (
                json!({"type": "number", "exclusiveMaximum": 1}),
                json!(0.5),
                json!(1),
                "exclusive maximum",
            ),
            (
                json!({"type": "number", "exclusiveMinimum": 0}),
                json!(0.5),
                json!(0),
                "exclusive minimum",
            ),
            (
                json!({"type": "array", "uniqueItems": true}),
                json!([1, 2]),
                json!([1, 1.0]),
                "unique",
            ),
            (
                json!({"type": "array", "uniqueItems": true}),
                json!([{"a": 1}, {"a": 2}]),
                json!([{"a": 1, "b": 2}, {"b": 2, "a": 1}]),
                "unique",
            ),
            (
                json!({"type": "object", "minProperties": 1}),
                json!({"a": 1}),
                json!({}),
                "at least 1",
            ),
            (
                json!({"type": "object", "maxProperties": 1}),
                json!({"a": 1}),
                json!({"a": 1, "b": 2}),
                "at most 1",
            ),
            (
                json!({"type": "object", "properties": {}, "additionalProperties": {"type": "integer"}}),
                json!({"x": 1}),
                json!({"x": "1"}),
                "expected integer",
            ),
            (json!({"enum": [1, 2]}), json!(2.0), json!(3), "not one of"),
            (
                json!({"type": "integer"}),
                json!(i64::MAX),
                json!(1u64 << 63),
                "signed 64-bit",
            ),
        ];
        for (schema, good, bad, says) in cases {
            check_schema(&schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
            assert!(
                validate(&good, &schema).is_ok(),
                "{schema} should accept {good}"
            );
            let e = validate(&bad, &schema)
                .expect_err(&format!("{schema} must reject {bad}"))
                .to_string();
            assert!(e.contains(says), "{schema} on {bad}: {e}");
        }
    }

    /// A schema the validator cannot honour is refused, naming the keyword and where it is.
    #[test]
    fn unsupported_or_malformed_schemas_are_refused_by_name() {
        let cases = [
            (
                json!({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}),
                "`$",
            ),
            (
                json!({"type": "object", "properties": {"a": {"patternProperties": {}}}}),
                "`patternProperties`",
            ),
            (json!({"if": {"type": "string"}}), "`if`"),
            (json!({"type": 3}), "`type`"),
            (json!({"type": "text"}), "not a JSON type"),
            (json!({"type": []}), "`type`"),
            (
                json!({"type": "object", "properties": {"a": "string"}}),
                "schema.properties.a: a schema must be a JSON object",
            ),
            (
                json!({"type": "object", "properties": {"a": {}}, "required": ["a", "b"]}),
                "`required` names `b`",
            ),
            (json!({"enum": []}), "`enum` must be a non-empty list"),
            (json!({"type": "string", "pattern": "(?=a)"}), "`pattern`"),
            (
                json!({"type": "string", "pattern": "a".repeat(1_001)}),
                "at most 1000",
            ),
            (
                json!({"type": "string", "minLength": -1}),
                "`minLength` must be a non-negative integer",
            ),
            (
                json!({"type": "number", "exclusiveMaximum": true}),
                "`exclusiveMaximum` must be a number",
            ),
            (
                json!({"type": "array", "items": [{"type": "string"}]}),
                "list form",
            ),
            (json!({"anyOf": []}), "`anyOf` must be a non-empty list"),
        ];
        for (schema, says) in cases {
            let e = check_schema(&schema)
                .expect_err(&format!("{schema} must be refused"))
                .to_string();
            assert!(e.contains(says), "{schema}: {e}");
        }
        // `required` in a branch without `properties` names fields declared beside the branch.
        let either = json!({"type": "object", "properties": {"a": {}, "b": {}},
                            "anyOf": [{"required": ["a"]}, {"required": ["b"]}]});
        check_schema(&either).unwrap();
        assert!(validate(&json!({"b": 1}), &either).is_ok());
        assert!(validate(&json!({}), &either)
            .unwrap_err()
            .to_string()
            .contains("anyOf"));
        // A schema that skipped the check is not half-applied.
        let e = validate(&json!(1), &json!({"if": {}}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("keyword `if`"), "{e}");
        // Integers above 2^53 are compared exactly.
        let big = json!({"enum": [9_007_199_254_740_992.0_f64]});
        assert!(validate(&json!(9_007_199_254_740_993_i64), &big).is_err());
        let unique = json!({"type": "array", "uniqueItems": true});
        assert!(validate(
            &json!([9_007_199_254_740_993_i64, 9_007_199_254_740_992.0_f64]),
            &unique
        )
        .is_ok());
        // Annotations are accepted.
        check_schema(&json!({"type": "string", "title": "t", "description": "d", "format": "uri", "examples": ["x"]})).unwrap();
    }
}
