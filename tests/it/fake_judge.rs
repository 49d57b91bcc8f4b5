//! A scriptable OpenAI-compatible chat-completions server on loopback, for the judge engine's
//! tests. It judges `citation_support` requests by a fixed rule (the claim occurs in the span:
//! fully supported, quoting it; else not supported) and `answer_match` / `split_claims`
//! requests likewise, and injects faults named by markers in the claim text:
//!
//! * `#429`: the first attempt gets 429 with `Retry-After: 0`;
//! * `#500x2`: the first two attempts get 500;
//! * `#slow`: the first attempt sleeps 1.5 s before answering (past a 0.5 s timeout);
//! * `#close`: the first attempt's connection is closed without a reply;
//! * `#badjson`: every reply's content is not JSON;
//! * `#schema-once`: the first reply violates the schema, the re-ask is answered properly;
//! * `#schema`: every reply violates the schema;
//! * `#400`: a 400 that retrying cannot fix;
//! * `#retry-after-2`: the first attempt gets 429 with `Retry-After: 2`;
//! * `#retry-after-date`: the first attempt gets 429 with a `Retry-After` HTTP-date 3 s ahead;
//! * `#retry-after-huge`: every attempt gets 429 with `Retry-After: 1e308`;
//! * `#echo-key`: every attempt gets a 500 whose body echoes the request's `Authorization`;
//! * `#redirect`: a 302 to another address;
//! * `#gzip`: every reply is labelled `Content-Encoding: gzip` (not asked for).
//!
//! With `reject_json_schema`, requests asking for `response_format: json_schema` get a 400
//! naming it, as servers without structured output do.

// Each area of the tests uses a part of it, and a kernels-only build none.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

#[derive(Default)]
pub struct ServerState {
    pub requests: AtomicUsize,
    pub in_flight: AtomicUsize,
    pub max_in_flight: AtomicUsize,
    pub reject_json_schema: AtomicBool,
    pub attempts: Mutex<HashMap<String, usize>>,
    pub bodies: Mutex<Vec<Value>>,
    pub authorizations: Mutex<Vec<Option<String>>>,
    /// Extra time each reply takes (ms), to measure concurrency.
    pub delay_ms: AtomicUsize,
}

pub struct FakeJudge {
    pub base_url: String,
    pub state: Arc<ServerState>,
}

impl FakeJudge {
    pub fn start() -> FakeJudge {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let state = Arc::new(ServerState::default());
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = Arc::clone(&shared);
                std::thread::spawn(move || serve(stream, &state));
            }
        });
        FakeJudge { base_url, state }
    }

    pub fn requests(&self) -> usize {
        self.state.requests.load(Ordering::SeqCst)
    }
}

fn serve(stream: TcpStream, state: &ServerState) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0;
        let mut authorization = None;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').unwrap_or((header, ""));
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap_or(0),
                "authorization" => authorization = Some(value.trim().to_string()),
                _ => {}
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        state.requests.fetch_add(1, Ordering::SeqCst);
        state
            .authorizations
            .lock()
            .unwrap()
            .push(authorization.clone());
        state.bodies.lock().unwrap().push(request.clone());
        let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        state.max_in_flight.fetch_max(now, Ordering::SeqCst);
        let reply = respond(&request, state).map(|(status, headers, text)| {
            // `#echo-key`: a broken server that repeats the request's headers in its error.
            let echoed = text.replace("{authorization}", authorization.as_deref().unwrap_or(""));
            (status, headers, echoed)
        });
        state.in_flight.fetch_sub(1, Ordering::SeqCst);
        let mut writer = &stream;
        match reply {
            None => return, // close without a reply
            Some((status, headers, text)) => {
                let head = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{headers}\r\n",
                    text.len()
                );
                if writer
                    .write_all(head.as_bytes())
                    .and_then(|_| writer.write_all(text.as_bytes()))
                    .is_err()
                {
                    return;
                }
            }
        }
    }
}

fn completion(content: &str) -> String {
    json!({
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20}
    })
    .to_string()
}

fn respond(request: &Value, state: &ServerState) -> Option<(u16, String, String)> {
    let delay = state.delay_ms.load(Ordering::SeqCst);
    if delay > 0 {
        std::thread::sleep(Duration::from_millis(delay as u64));
    }
    if state.reject_json_schema.load(Ordering::SeqCst)
        && request
            .pointer("/response_format/type")
            .and_then(Value::as_str)
            == Some("json_schema")
    {
        return Some((
            400,
            String::new(),
            "{\"error\": \"response_format json_schema is not supported\"}".into(),
        ));
    }
    if let Some(input) = request.get("input").and_then(Value::as_array) {
        // An /embeddings request: a 3-dimensional vector per text (its length, its counts of
        // "a" and of "e").
        let data: Vec<Value> = input
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let text = text.as_str().unwrap_or("");
                let count = |c: char| text.chars().filter(|&x| x == c).count() as f64;
                json!({"index": i, "embedding": [text.chars().count() as f64, count('a'), count('e')]})
            })
            .collect();
        return Some((200, String::new(), json!({"data": data}).to_string()));
    }
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let data: Value = messages
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| serde_json::from_str(m["content"].as_str().unwrap_or("")).ok())
        .unwrap_or(Value::Null);
    let is_reask = messages.len() > 2;
    let marker_text = data
        .get("claim")
        .or(data.get("passage"))
        .or(data.get("answer"))
        .or(data.get("statements"))
        .or(data.get("reference"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let attempt = {
        let mut attempts = state.attempts.lock().unwrap();
        let n = attempts.entry(marker_text.clone()).or_insert(0);
        *n += 1;
        *n
    };
    let has = |m: &str| marker_text.contains(m);
    if has("#429") && attempt == 1 {
        return Some((
            429,
            "Retry-After: 0\r\n".into(),
            "{\"error\": \"slow down\"}".into(),
        ));
    }
    if has("#retry-after-2") && attempt == 1 {
        return Some((429, "Retry-After: 2\r\n".into(), "{}".into()));
    }
    if has("#retry-after-date") && attempt == 1 {
        let at = std::time::SystemTime::now() + Duration::from_secs(3);
        return Some((
            429,
            format!("Retry-After: {}\r\n", http_date(at)),
            "{}".into(),
        ));
    }
    if has("#retry-after-huge") {
        return Some((429, "Retry-After: 1e308\r\n".into(), "{}".into()));
    }
    if has("#echo-key") {
        return Some((
            500,
            String::new(),
            "{\"error\": \"bad header: {authorization}\"}".into(),
        ));
    }
    if has("#gzip") {
        return Some((
            200,
            "Content-Encoding: gzip\r\n".into(),
            "\u{1f}\u{8b}compressed".into(),
        ));
    }
    if has("#redirect") {
        return Some((
            302,
            "Location: http://127.0.0.1:9/elsewhere\r\n".into(),
            String::new(),
        ));
    }
    if has("#500x2") && attempt <= 2 {
        return Some((500, String::new(), "{\"error\": \"boom\"}".into()));
    }
    if has("#slow") && attempt == 1 {
        std::thread::sleep(Duration::from_millis(1500));
    }
    if has("#close") && attempt == 1 {
        return None;
    }
    if has("#400") {
        return Some((400, String::new(), "{\"error\": \"bad request\"}".into()));
    }
    if has("#badjson") {
        return Some((200, String::new(), completion("I think it is supported.")));
    }
    if has("#schema") && !(has("#schema-once") && is_reask) {
        return Some((200, String::new(), completion("{\"verdict\": \"maybe\"}")));
    }
    let rubric = messages.iter().any(|m| {
        m["role"] == "system"
            && m["content"]
                .as_str()
                .unwrap_or("")
                .contains("\nCriteria:\n")
    });
    if rubric {
        return Some((200, String::new(), rubric_reply(request)));
    }
    let content = judged_reply(&data);
    Some((200, String::new(), completion(&content.to_string())))
}

/// `at` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form of an HTTP-date.
pub fn http_date(at: std::time::SystemTime) -> String {
    let seconds = at.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        WEEKDAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

/// The statements of a text by the fake judge's rule: pieces between ". ", without a final ".".
fn statements(text: &str) -> Vec<String> {
    text.split(". ")
        .map(|s| s.trim().trim_end_matches('.').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The items of a numbered list ("1. first" per line), without their numbers.
fn listed(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| match line.split_once(". ") {
            Some((n, rest)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                rest.to_string()
            }
            _ => line.to_string(),
        })
        .collect()
}

/// The words of four letters or more of a text, lowercased.
fn long_words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 4)
        .map(String::from)
        .collect()
}

/// The [a-z0-9]+ words of a lowercased text.
fn ascii_words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

/// Whether `needle` occurs in `haystack`, ignoring case.
fn contains(haystack: &str, needle: &str) -> bool {
    haystack.to_lowercase().contains(&needle.to_lowercase())
}

/// The fake judge's reply to a request, by the inputs the card sends:
///
/// * `passage`, `term` (the tests' custom card): whether and how often the term occurs in the
///   passage, ignoring case, the share of its words, its first two words, and a nested object;
/// * `claim`, `cited_span` (citation_support): fully supported when the claim (before ` #`) is
///   in the span, quoting it; else not supported;
/// * `context`, `statements` (faithfulness_verdicts): each numbered statement is supported when
///   it occurs in the context, ignoring case;
/// * `contexts`, `reference` (context_recall): the reference's statements, each attributed when
///   it occurs in the contexts;
/// * `context`, `reference` / `context`, `answer` (context_precision / context_utilization):
///   useful when the reference (answer) occurs in the context;
/// * `truths`, `claims` (faithfulness_contradictions): "yes" when the claim occurs in the
///   truths, else "no"; `context` alone (faithfulness_truths): the context's statements;
/// * `answer`, `question_count` (answer_relevancy): the answer itself as each question,
///   noncommittal when it says "don't know";
/// * `question`, `answer`, `reference` (answer_match): a match when the answer contains the
///   reference;
/// * `question`, `answer` (faithfulness_statements) and `answer` (split_claims): the answer's
///   statements.
/// * `question`, `sources`, `nuggets` (create_nuggets): the nuggets so far and the sources'
///   statements not among them; `question`, `nugget` (nugget_importance): vital when a nugget
///   shares a word of four letters or more with the question; `nugget`, `answer`
///   (nugget_support): supported when the answer has all the nugget's words, partially with half.
fn judged_reply(data: &Value) -> Value {
    let text = |name: &str| data.get(name).and_then(Value::as_str);
    if let (Some(_), Some(sources), Some(so_far)) =
        (text("question"), text("sources"), text("nuggets"))
    {
        // Nuggets: those so far, then each statement of the sources not yet among them, cut.
        let mut nuggets = listed(so_far);
        for source in listed(sources) {
            for s in statements(&source) {
                if !nuggets.contains(&s) {
                    nuggets.push(s);
                }
            }
        }
        nuggets.truncate(
            text("max_nuggets")
                .and_then(|m| m.parse().ok())
                .unwrap_or(30),
        );
        return json!({"nuggets": nuggets});
    }
    if let (Some(question), Some(nugget)) = (text("question"), text("nugget")) {
        // Importance: vital when the nugget shares a word of four letters or more with the question.
        let asked = long_words(question);
        let vital = long_words(nugget).iter().any(|w| asked.contains(w));
        return json!({"label": if vital { "vital" } else { "okay" }, "reason": "by rule"});
    }
    if let (Some(nugget), Some(answer)) = (text("nugget"), text("answer")) {
        // Support: the share of the nugget's [a-z0-9]+ words in the answer: all, half or more, less.
        let known = ascii_words(answer);
        let wanted = ascii_words(nugget);
        let hits = wanted.iter().filter(|w| known.contains(w)).count();
        let label = if hits == wanted.len() {
            "support"
        } else if 2 * hits >= wanted.len() {
            "partial_support"
        } else {
            "not_support"
        };
        return json!({"label": label, "reason": "by rule"});
    }
    if let (Some(passage), Some(term)) = (text("passage"), text("term")) {
        // The custom card of the tests: whether and how often the term occurs, ignoring case.
        let count = passage.to_lowercase().matches(&term.to_lowercase()).count();
        let words: Vec<&str> = passage.split_whitespace().take(2).collect();
        return json!({
            "mentions": count > 0,
            "count": count,
            "share": count as f64 / passage.split_whitespace().count().max(1) as f64,
            "first_words": words,
            "detail": {"term": term},
            "tone": if count > 0 { "on_topic" } else { "off_topic" },
        });
    }
    if let (Some(claim), Some(span)) = (text("claim"), text("cited_span")) {
        let core = claim.split(" #").next().unwrap_or("");
        return if !core.is_empty() && span.contains(core) {
            json!({"verdict": "fully_supported", "supporting_phrase": core, "missing_or_extra": "", "decision_basis": "stated"})
        } else {
            json!({"verdict": "not_supported", "supporting_phrase": "", "missing_or_extra": "all", "decision_basis": "absent"})
        };
    }
    if let (Some(context), Some(listed)) = (text("context"), text("statements")) {
        let verdicts: Vec<Value> = listed
            .lines()
            .map(|line| {
                let statement = line.split_once(". ").map_or(line, |(_, rest)| rest);
                let supported = contains(context, statement);
                json!({"statement": statement, "reason": if supported { "stated" } else { "absent" }, "verdict": u8::from(supported)})
            })
            .collect();
        return json!({"verdicts": verdicts});
    }
    if let (Some(contexts), Some(reference)) = (text("contexts"), text("reference")) {
        let classifications: Vec<Value> = statements(reference)
            .into_iter()
            .map(|s| {
                let attributed = contains(contexts, &s);
                json!({"statement": s, "reason": "by rule", "attributed": u8::from(attributed)})
            })
            .collect();
        return json!({"classifications": classifications});
    }
    if let (Some(premise), Some(hypothesis)) = (text("premise"), text("hypothesis")) {
        // Entailment: every [a-z0-9]+ word of the lowercased hypothesis is one of the premise's.
        let words = |t: &str| -> Vec<String> {
            t.to_lowercase()
                .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
                .filter(|w| !w.is_empty())
                .map(String::from)
                .collect()
        };
        let known = words(premise);
        let entailed = words(hypothesis).iter().all(|w| known.contains(w));
        let label = if entailed { "entailment" } else { "neutral" };
        return json!({"label": label, "reason": "by rule"});
    }
    if let (Some(question), Some(passage)) = (text("question"), text("passage")) {
        // Relevance: the share of the question's words of four letters or more in the passage.
        let words = |t: &str| -> Vec<String> {
            t.to_lowercase()
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.chars().count() >= 4)
                .map(String::from)
                .collect()
        };
        let (asked, found) = (words(question), words(passage));
        let hits = asked.iter().filter(|w| found.contains(w)).count();
        let grade = match (hits, asked.len()) {
            (0, _) => 0,
            (h, n) if h == n => 3,
            (h, n) if 2 * h >= n => 2,
            _ => 1,
        };
        return json!({"grade": grade, "reason": "by rule"});
    }
    if let (Some(truths), Some(claims)) = (text("truths"), text("claims")) {
        let verdicts: Vec<Value> = claims
            .lines()
            .map(|line| {
                let claim = line.split_once(". ").map_or(line, |(_, rest)| rest);
                let agrees = contains(truths, claim);
                json!({"verdict": if agrees { "yes" } else { "no" }, "reason": if agrees { "" } else { "absent" }})
            })
            .collect();
        return json!({"verdicts": verdicts});
    }
    if let (Some(context), None) = (text("context"), text("question")) {
        let truths: Vec<String> = context.split("\n\n").flat_map(statements).collect();
        return json!({"truths": truths});
    }
    if let Some(context) = text("context") {
        let other = text("reference").or(text("answer")).unwrap_or("");
        let useful = !other.is_empty() && contains(context, other);
        return json!({"reason": "by rule", "verdict": u8::from(useful)});
    }
    if let (Some(answer), Some(count)) = (text("answer"), text("question_count")) {
        let n: usize = count.parse().unwrap_or(1);
        let noncommittal = u8::from(contains(answer, "don't know"));
        let questions: Vec<Value> = (0..n)
            .map(|_| json!({"question": answer, "noncommittal": noncommittal}))
            .collect();
        return json!({"questions": questions});
    }
    if let (Some(answer), Some(reference)) = (text("answer"), text("reference")) {
        let same = contains(answer, reference);
        return json!({"match": same, "reasoning": if same { "same" } else { "differs" }});
    }
    if let (Some(_), Some(answer)) = (text("question"), text("answer")) {
        return json!({"statements": statements(answer)});
    }
    if let Some(answer) = text("answer") {
        let claims: Vec<&str> = answer.split(". ").filter(|c| !c.is_empty()).collect();
        return json!({"claims": claims});
    }
    json!({})
}

/// The fake judge's reply to a rubric (g_eval) request: score 4 with a reason; when the request
/// asks for log-probabilities, the score token's candidates are 4 (60 %), 3 (30 %) and 5 (10 %),
/// so the weighted score is 3.8.
fn rubric_reply(request: &Value) -> String {
    let content = json!({"reason": "by rule", "score": 4}).to_string();
    let mut reply: Value = serde_json::from_str(&completion(&content)).unwrap();
    if request.get("logprobs") == Some(&Value::Bool(true)) {
        let at = content.find("\"score\":").unwrap() + "\"score\":".len();
        let candidate = |token: &str, p: f64| json!({"token": token, "logprob": p.ln()});
        reply["choices"][0]["logprobs"] = json!({"content": [
            {"token": &content[..at], "logprob": 0.0, "top_logprobs": []},
            {"token": "4", "logprob": 0.6f64.ln(), "top_logprobs": [candidate("4", 0.6), candidate("3", 0.3), candidate("5", 0.1)]},
            {"token": &content[at + 1..], "logprob": 0.0, "top_logprobs": []},
        ]});
    }
    reply.to_string()
}
