//! What may be shown of a secret-bearing text: a base URL without the credentials of its
//! authority. Used wherever a URL is printed, stored in a signature or put in an error.

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

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn only_the_authority_loses_its_credentials() {
        assert_eq!(redact_url("http://u:pw@h:1/v1"), "http://***@h:1/v1");
        assert_eq!(redact_url("http://user@h/v1"), "http://***@h/v1");
        assert_eq!(redact_url("http://h/v1?u=a@b"), "http://h/v1?u=a@b");
        assert_eq!(redact_url("h:1@x"), "h:1@x");
    }
}
