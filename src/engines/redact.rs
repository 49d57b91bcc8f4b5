//! What may be shown of a secret-bearing text: a base URL without the credentials of its
//! authority (used wherever a URL is printed, stored in a signature or put in an error), and a
//! server's text without the API key it was sent (a server that echoes its request).

/// `url` without the credentials of its authority: `http://user:secret@host/v1` is shown as
/// `http://***@host/v1`. Anything else is returned as it is.
///
/// ```
/// use polars_rag::engines::redact_url;
/// assert_eq!(redact_url("http://user:secret@127.0.0.1:8080/v1"), "http://***@127.0.0.1:8080/v1");
/// assert_eq!(redact_url("https://api.example/v1"), "https://api.example/v1");
/// ```
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let rest = &url[scheme_end..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{}***{}", &url[..scheme_end], &rest[at..]),
        None => url.to_string(),
    }
}

/// What stands where a secret was cut out of a text.
pub const REDACTED: &str = "[redacted]";

/// `text` with every occurrence of `secret` replaced by [`REDACTED`], ignoring ASCII case (a
/// server may echo a key upper-cased); borrowed when there is none. An empty secret cuts
/// nothing.
///
/// ```
/// use polars_rag::engines::cut_secret;
/// assert_eq!(cut_secret("key SK-AbC and sk-abc", "sk-abc"), "key [redacted] and [redacted]");
/// ```
pub fn cut_secret<'a>(text: &'a str, secret: &str) -> std::borrow::Cow<'a, str> {
    use std::borrow::Cow;
    if secret.is_empty() || text.len() < secret.len() {
        return Cow::Borrowed(text);
    }
    // ASCII lowercasing keeps every byte offset, so positions found in the lowered copy are
    // positions in `text`; a match starts and ends on character boundaries because `secret`
    // is valid UTF-8 and ASCII letters are the only bytes that differ.
    let lowered = text.to_ascii_lowercase();
    let wanted = secret.to_ascii_lowercase();
    let mut found = lowered.match_indices(wanted.as_str()).peekable();
    if found.peek().is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (at, _) in found {
        out.push_str(&text[from..at]);
        out.push_str(REDACTED);
        from = at + wanted.len();
    }
    out.push_str(&text[from..]);
    Cow::Owned(out)
}

/// Cuts `secret` (see [`cut_secret`]) out of every string of `value`, object keys included.
pub fn cut_secret_from_json(value: &mut serde_json::Value, secret: &str) {
    use serde_json::Value;
    if secret.is_empty() {
        return;
    }
    match value {
        Value::String(text) => {
            if let std::borrow::Cow::Owned(cut) = cut_secret(text, secret) {
                *text = cut;
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| cut_secret_from_json(item, secret)),
        Value::Object(fields) => {
            let leaking = fields
                .keys()
                .any(|name| matches!(cut_secret(name, secret), std::borrow::Cow::Owned(_)));
            if leaking {
                *fields = std::mem::take(fields)
                    .into_iter()
                    .map(|(name, field)| (cut_secret(&name, secret).into_owned(), field))
                    .collect();
            }
            fields
                .values_mut()
                .for_each(|field| cut_secret_from_json(field, secret));
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::{cut_secret, cut_secret_from_json, redact_url};

    #[test]
    fn secrets_are_cut_whatever_their_case() {
        assert_eq!(cut_secret("Bearer SK-Abc!", "sk-abc"), "Bearer [redacted]!");
        assert_eq!(
            cut_secret("é sk-abcsk-abc é", "sk-abc"),
            "é [redacted][redacted] é"
        );
        assert_eq!(cut_secret("nothing here", "sk-abc"), "nothing here");
        assert_eq!(cut_secret("anything", ""), "anything");
        let mut value = serde_json::json!({"a": ["x SK-ABC"], "sk-abc": 1, "n": 2});
        cut_secret_from_json(&mut value, "sk-abc");
        assert_eq!(
            value,
            serde_json::json!({"a": ["x [redacted]"], "[redacted]": 1, "n": 2})
        );
    }

    #[test]
    fn only_the_authority_loses_its_credentials() {
        assert_eq!(redact_url("http://u:pw@h:1/v1"), "http://***@h:1/v1");
        assert_eq!(redact_url("http://user@h/v1"), "http://***@h/v1");
        assert_eq!(redact_url("http://h/v1?u=a@b"), "http://h/v1?u=a@b");
        assert_eq!(redact_url("h:1@x"), "h:1@x");
    }
}
