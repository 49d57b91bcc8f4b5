//! Validation of a judge's reply against the JSON schema its template declares.
//!
//! Structured output is requested from the server, but servers differ in how strictly they
//! enforce it (and the `json_object` fallback enforces nothing), so every reply is checked here.
//! The supported subset is what judge templates use: `type` (object, string, boolean, number,
//! integer, array, null, or a list of these), `properties`, `required`, `additionalProperties:
//! false`, `enum`, `items`, `minimum` / `maximum`, `minItems` / `maxItems` and `maxLength`.
//! Other keywords are ignored.
//!
//! ```
//! use polars_rag::engines::judge::schema::validate;
//! use serde_json::json;
//! let schema = json!({
//!     "type": "object",
//!     "required": ["verdict"],
//!     "additionalProperties": false,
//!     "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}}
//! });
//! assert!(validate(&json!({"verdict": "yes"}), &schema).is_ok());
//! let e = validate(&json!({"verdict": "maybe"}), &schema).unwrap_err();
//! assert!(e.contains("verdict") && e.contains("maybe"));
//! assert!(validate(&json!({}), &schema).unwrap_err().contains("missing required field `verdict`"));
//! ```

use serde_json::Value;

/// Checks `value` against `schema`; the error names the path of the first violation.
pub fn validate(value: &Value, schema: &Value) -> Result<(), String> {
    check(value, schema, "$")
}

fn type_matches(value: &Value, name: &str) -> bool {
    match name {
        "object" => value.is_object(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "number" => value.is_number(),
        "integer" => value.as_i64().is_some() || value.as_u64().is_some(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn describe(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

fn check(value: &Value, schema: &Value, path: &str) -> Result<(), String> {
    let Some(schema) = schema.as_object() else {
        return Ok(());
    };
    if let Some(expected) = schema.get("type") {
        let names: Vec<&str> = match expected {
            Value::String(name) => vec![name.as_str()],
            Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !names.is_empty() && !names.iter().any(|name| type_matches(value, name)) {
            return Err(format!(
                "{path}: expected {}, got {}",
                names.join(" or "),
                describe(value)
            ));
        }
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        let allowed: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return Err(format!(
            "{path}: {} is not one of {}",
            describe(value),
            allowed.join(", ")
        ));
    }
    match value {
        Value::Object(fields) => {
            if let Some(Value::Array(required)) = schema.get("required") {
                for name in required.iter().filter_map(Value::as_str) {
                    if !fields.contains_key(name) {
                        return Err(format!("{path}: missing required field `{name}`"));
                    }
                }
            }
            let properties = schema.get("properties").and_then(Value::as_object);
            for (name, field) in fields {
                match properties.and_then(|p| p.get(name)) {
                    Some(field_schema) => check(field, field_schema, &format!("{path}.{name}"))?,
                    None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                        return Err(format!("{path}: unexpected field `{name}`"));
                    }
                    None => {}
                }
            }
        }
        Value::Array(items) => {
            let bound = |key: &str| schema.get(key).and_then(Value::as_u64);
            if let Some(min) = bound("minItems")
                && (items.len() as u64) < min
            {
                return Err(format!(
                    "{path}: {} items, at least {min} required",
                    items.len()
                ));
            }
            if let Some(max) = bound("maxItems")
                && items.len() as u64 > max
            {
                return Err(format!(
                    "{path}: {} items, at most {max} allowed",
                    items.len()
                ));
            }
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(item, item_schema, &format!("{path}[{i}]"))?;
                }
            }
        }
        Value::String(text) => {
            if let Some(max) = schema.get("maxLength").and_then(Value::as_u64) {
                let length = text.chars().count() as u64;
                if length > max {
                    return Err(format!(
                        "{path}: {length} characters, at most {max} allowed"
                    ));
                }
            }
        }
        Value::Number(number) => {
            let x = number.as_f64().unwrap_or(f64::NAN);
            if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
                && x < min
            {
                return Err(format!("{path}: {x} is below the minimum {min}"));
            }
            if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
                && x > max
            {
                return Err(format!("{path}: {x} is above the maximum {max}"));
            }
        }
        _ => {}
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
            .starts_with("$.claims[0]"));
        assert!(validate(&json!({"claims": []}), &schema)
            .unwrap_err()
            .contains("at least 1"));
        assert!(validate(&json!({"score": 2}), &schema)
            .unwrap_err()
            .contains("maximum"));
        assert!(validate(&json!([]), &schema)
            .unwrap_err()
            .contains("expected object"));
        // Extra fields are allowed unless additionalProperties is false.
        assert!(validate(&json!({"other": 1}), &schema).is_ok());
    }
}
