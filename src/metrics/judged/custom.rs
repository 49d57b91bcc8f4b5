//! Custom judges: a prompt template with named inputs and the JSON schema of its reply, given
//! as data (a TOML card, a JSON object, a Python dict), judged by the same engine as the
//! built-in judges (same rendering, cache keys, retries, validation and accounting). The reply
//! fields become the fields of the output: each schema type maps to one column type, so the
//! output's shape is known before any row is judged (Polars needs it at planning time).
//!
//! | schema type of a field | output type |
//! |---|---|
//! | `string` (or an `enum` of strings) | string |
//! | `integer` | 64-bit integer |
//! | `number` | 64-bit float |
//! | `boolean` | boolean |
//! | `array` of one of the above | list of it |
//! | anything else (`object`, nested arrays, no type) | the JSON text |
//!
//! A type list such as `["integer", "null"]` takes its non-null type. Besides its reply fields
//! the output has `weighted_score` when the template asks for a probability-weighted field (see
//! [`JudgeTemplate::weighted_score`]), and `judge_error`, the reason a row has no reply.
//!
//! ```
//! use polars_rag::metrics::judged::custom::{CustomJudgeOptions, ReplyKind};
//! let options = CustomJudgeOptions::from_toml_card(r#"
//!     id = "tone"
//!     version = "1"
//!     inputs = ["answer"]
//!     system = "Is the answer polite? Say so, and rate it from 1 to 5."
//!     [schema]
//!     type = "object"
//!     required = ["polite", "rating"]
//!     [schema.properties.polite]
//!     type = "boolean"
//!     [schema.properties.rating]
//!     type = "integer"
//!     enum = [1, 2, 3, 4, 5]
//! "#).unwrap();
//! let card = options.card().unwrap();
//! assert_eq!(card.id, "tone");
//! let fields = options.reply_fields().unwrap();
//! assert_eq!(fields, vec![("polite".to_string(), ReplyKind::Boolean), ("rating".to_string(), ReplyKind::Integer)]);
//! assert!(polars_rag::metrics::judged::custom::signature(&options).starts_with("tone|custom|"));
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engines::judge::template::JudgeTemplate;
use crate::engines::judge::JudgeSettings;

/// The output fields the engine adds after the reply's own fields; a custom template may not
/// declare reply fields of these names.
pub const RESERVED_FIELDS: [&str; 2] = ["weighted_score", "judge_error"];

/// A custom judge's card: the template itself, or its TOML text.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum CardSource {
    /// The template as a table / object (`[judges.x.template]`, a Python dict).
    Card(Box<JudgeTemplate>),
    /// The template's TOML text (a card file's content).
    Toml(String),
}

impl<'de> Deserialize<'de> for CardSource {
    /// A string is TOML text, a table is the card; a card that does not decode is reported
    /// with the field at fault (an untagged enum would only say that nothing matched).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Value::deserialize(deserializer)? {
            Value::String(text) => Ok(CardSource::Toml(text)),
            card @ Value::Object(_) => serde_json::from_value::<JudgeTemplate>(card)
                .map(|card| CardSource::Card(Box::new(card)))
                .map_err(|e| D::Error::custom(format!("judge template: {e}"))),
            other => Err(D::Error::custom(format!(
                "template must be a card (a table: id, version, inputs, system, schema) or its TOML text, got {other}"
            ))),
        }
    }
}

/// Options of a custom judge: the judge that runs it and the card it asks.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CustomJudgeOptions {
    /// The judge.
    pub judge: JudgeSettings,
    /// The card (required).
    pub template: Option<CardSource>,
}

/// The column type a reply field becomes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplyKind {
    /// A string (also an `enum` of strings).
    String,
    /// A 64-bit integer.
    Integer,
    /// A 64-bit float.
    Number,
    /// A boolean.
    Boolean,
    /// A list of values of one kind.
    List(Box<ReplyKind>),
    /// The field's JSON text (objects, nested arrays, untyped fields).
    Json,
}

impl ReplyKind {
    /// The kind a field's JSON schema maps to.
    pub fn of_schema(schema: &Value) -> ReplyKind {
        let named = match schema.get("type") {
            Some(Value::String(name)) => Some(name.as_str()),
            Some(Value::Array(names)) => {
                let mut non_null = names
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|name| *name != "null");
                match (non_null.next(), non_null.next()) {
                    (Some(only), None) => Some(only),
                    _ => None,
                }
            }
            _ => None,
        };
        match named {
            Some("string") => ReplyKind::String,
            Some("integer") => ReplyKind::Integer,
            Some("number") => ReplyKind::Number,
            Some("boolean") => ReplyKind::Boolean,
            Some("array") => match schema.get("items").map(ReplyKind::of_schema) {
                Some(
                    item @ (ReplyKind::String
                    | ReplyKind::Integer
                    | ReplyKind::Number
                    | ReplyKind::Boolean),
                ) => ReplyKind::List(Box::new(item)),
                _ => ReplyKind::Json,
            },
            None if schema
                .get("enum")
                .and_then(Value::as_array)
                .is_some_and(|values| {
                    !values.is_empty() && values.iter().all(Value::is_string)
                }) =>
            {
                ReplyKind::String
            }
            _ => ReplyKind::Json,
        }
    }
}

impl CustomJudgeOptions {
    /// Options for the card in TOML text `text`, with the default judge.
    pub fn from_toml_card(text: &str) -> crate::Result<Self> {
        let options = CustomJudgeOptions {
            judge: JudgeSettings::default(),
            template: Some(CardSource::Toml(text.to_string())),
        };
        options.card()?;
        Ok(options)
    }

    /// The card, checked: a template with inputs, an object schema, and no reply field named
    /// like a field the engine adds.
    pub fn card(&self) -> crate::Result<JudgeTemplate> {
        let card = match &self.template {
            None => return Err(crate::Error::options(
                "custom_judge: template is required (a card: id, version, inputs, system, schema)",
            )),
            Some(CardSource::Card(card)) => {
                // A card given as a table is checked as one read from text is.
                JudgeTemplate::from_json(
                    serde_json::to_value(card).map_err(|e| {
                        crate::Error::options(format!("custom_judge: template: {e}"))
                    })?,
                )?
            }
            Some(CardSource::Toml(text)) => JudgeTemplate::from_toml(text)?,
        };
        let fields = card.fields();
        // The id and the field names become column names, which Arrow hands across the plugin
        // boundary as C strings.
        if card.id.contains('\0') || fields.iter().any(|(name, _)| name.contains('\0')) {
            return Err(crate::Error::options(format!(
                "judge template `{}`: the id and reply field names cannot hold a NUL character",
                card.id.replace('\0', "\\0")
            )));
        }
        if let Some((name, _)) = fields
            .iter()
            .find(|(name, _)| RESERVED_FIELDS.contains(&name.as_str()))
        {
            return Err(crate::Error::options(format!(
                "judge template `{}`: reply field `{name}` is reserved for the engine's own output; rename it",
                card.id
            )));
        }
        // Keys that start with `_` are the engine's (e.g. the weighted score it adds to a reply);
        // a server's reply never sets them, so a card cannot ask for one.
        if let Some((name, _)) = fields.iter().find(|(name, _)| name.starts_with('_')) {
            return Err(crate::Error::options(format!(
                "judge template `{}`: reply field `{name}` starts with `_`, which is kept for the engine's own keys; \
                 rename it",
                card.id
            )));
        }
        if fields.is_empty() {
            return Err(crate::Error::options(format!(
                "judge template `{}`: the schema declares no reply fields",
                card.id
            )));
        }
        if let Some(weighted) = &card.weighted_score {
            let kind = card
                .schema
                .pointer(&format!("/properties/{weighted}"))
                .map(ReplyKind::of_schema);
            if kind != Some(ReplyKind::Integer) {
                return Err(crate::Error::options(format!(
                    "judge template `{}`: weighted_score names `{weighted}`, which is not an integer field of the schema",
                    card.id
                )));
            }
        }
        Ok(card)
    }

    /// The reply fields, sorted by name (as the schema's properties are read), with the column
    /// kind each becomes.
    pub fn reply_fields(&self) -> crate::Result<Vec<(String, ReplyKind)>> {
        let card = self.card()?;
        let properties = card
            .schema
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        Ok(properties
            .iter()
            .map(|(name, field)| (name.clone(), ReplyKind::of_schema(field)))
            .collect())
    }
}

/// The signature of a custom judge: its card's id, then the judge's signature (model, prompt
/// id, version and hash, temperature, seed, ...).
pub fn signature(options: &CustomJudgeOptions) -> String {
    match options.card() {
        Ok(card) => format!("{}|custom|{}", card.id, options.judge.signature(&card, 1)),
        Err(e) => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schema_types_map_to_column_kinds() {
        let kind = |schema: Value| ReplyKind::of_schema(&schema);
        assert_eq!(kind(json!({"type": "string"})), ReplyKind::String);
        assert_eq!(kind(json!({"enum": ["a", "b"]})), ReplyKind::String);
        assert_eq!(
            kind(json!({"type": ["integer", "null"]})),
            ReplyKind::Integer
        );
        assert_eq!(kind(json!({"type": "number"})), ReplyKind::Number);
        assert_eq!(
            kind(json!({"type": "array", "items": {"type": "boolean"}})),
            ReplyKind::List(Box::new(ReplyKind::Boolean))
        );
        assert_eq!(
            kind(json!({"type": "array", "items": {"type": "array"}})),
            ReplyKind::Json
        );
        assert_eq!(kind(json!({"type": "object"})), ReplyKind::Json);
        assert_eq!(
            kind(json!({"type": ["string", "integer"]})),
            ReplyKind::Json
        );
        assert_eq!(kind(json!({})), ReplyKind::Json);
    }

    fn card(schema: Value) -> CustomJudgeOptions {
        CustomJudgeOptions {
            judge: JudgeSettings::default(),
            template: Some(CardSource::Card(Box::new(
                JudgeTemplate::from_json(json!({
                    "id": "mine", "version": "1", "inputs": ["answer"],
                    "system": "Judge it.", "schema": schema
                }))
                .unwrap(),
            ))),
        }
    }

    #[test]
    fn reserved_and_empty_schemas_are_refused_by_name() {
        let reserved =
            card(json!({"type": "object", "properties": {"judge_error": {"type": "string"}}}));
        let e = reserved.card().unwrap_err().to_string();
        assert!(e.contains("`mine`") && e.contains("judge_error"), "{e}");
        let empty = card(json!({"type": "object", "properties": {}}));
        assert!(empty
            .card()
            .unwrap_err()
            .to_string()
            .contains("no reply fields"));
        let missing = CustomJudgeOptions::default();
        assert!(missing
            .card()
            .unwrap_err()
            .to_string()
            .contains("template is required"));
    }

    #[test]
    fn a_weighted_field_must_be_an_integer_field() {
        let mut options =
            card(json!({"type": "object", "properties": {"why": {"type": "string"}}}));
        if let Some(CardSource::Card(card)) = &mut options.template {
            card.weighted_score = Some("why".into());
        }
        assert!(options
            .card()
            .unwrap_err()
            .to_string()
            .contains("not an integer field"));
    }

    #[test]
    fn cards_as_text_and_as_tables_sign_alike() {
        let text = r#"
id = "mine"
version = "1"
inputs = ["answer"]
system = "Judge it."
[schema]
type = "object"
[schema.properties.ok]
type = "boolean"
"#;
        let from_text = CustomJudgeOptions::from_toml_card(text).unwrap();
        let table = CustomJudgeOptions {
            judge: JudgeSettings::default(),
            template: Some(CardSource::Card(Box::new(
                JudgeTemplate::from_toml(text).unwrap(),
            ))),
        };
        assert_eq!(signature(&from_text), signature(&table));
    }
}
