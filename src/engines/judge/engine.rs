//! The judge itself: request building, the bounded pool, retries, validation, the cache and the
//! accounting (see the module documentation of [`crate::engines::judge`]).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::engines::progress::{Progress, Work};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::cache::{CachedReply, CallRecord, ReplyCache};
use super::logprobs::{self, TokenChoice, SCORE_CANDIDATES};
use super::schema::validate;
use super::template::{as_judged, JudgeTemplate, Message};
use super::transport::{read_api_key, Attempt, Retry, Transport};
use super::{JudgeSettings, ResolvedSettings, Usage, UsageByTemplate};

/// The SHA-256 of one request, as the key of the map that finds identical rows. Its bytes are
/// already uniformly distributed, so hashing it again (SipHash, by default) would be wasted work:
/// [`DigestHasher`] takes its first eight bytes as the hash.
#[derive(Clone, Copy, PartialEq, Eq)]
struct RequestDigest([u8; 32]);

impl Hash for RequestDigest {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let mut head = [0u8; 8];
        head.copy_from_slice(&self.0[..8]);
        state.write_u64(u64::from_le_bytes(head));
    }
}

/// The hasher of [`RequestDigest`] keys (see there).
#[derive(Default)]
struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used by `RequestDigest`; anything else is folded in (FNV-1a).
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
}

/// The judgement of one row: `None` for a row with a null input, `Some(Ok(reply))` with the
/// validated JSON reply, `Some(Err(reason))` when no valid reply could be had (the reason is an
/// [`ErrorKind::Engine`](crate::ErrorKind::Engine) error).
pub type RowReply = Option<crate::Result<Value>>;

/// An LLM judge: settings, HTTP client, cache, concurrency bound, budget and accounting.
pub struct Judge {
    resolved: ResolvedSettings,
    transport: Transport,
    cache: Option<ReplyCache>,
    in_flight: Slots,
    calls_made: AtomicU64,
    tokens_spent: AtomicU64,
    /// Set once the server has rejected `response_format: json_schema`.
    json_object_only: AtomicBool,
    /// Set once a failed cache write has been reported on stderr.
    cache_failure_reported: AtomicBool,
    usage: Mutex<UsageByTemplate>,
    /// When the judge first asked the server: `max_seconds` counts from here.
    first_request: std::sync::OnceLock<Instant>,
    /// Set once a request or a wait was cut short by `max_seconds`.
    deadline_reached: AtomicBool,
}

/// A counting semaphore: the judge's bound on requests in flight, shared by concurrent calls.
struct Slots {
    free: Mutex<usize>,
    released: Condvar,
}

impl Slots {
    /// A free slot, waited for; `None` when Ctrl-C comes first.
    fn acquire(&self) -> Option<SlotGuard<'_>> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            if crate::engines::interrupt::interrupted() {
                return None;
            }
            free = self
                .released
                .wait_timeout(free, crate::engines::interrupt::SLICE)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        *free -= 1;
        Some(SlotGuard(self))
    }
}

struct SlotGuard<'a>(&'a Slots);

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.0.released.notify_one();
    }
}

/// The judges of the process, one per distinct settings.
fn shared_judges() -> &'static Mutex<HashMap<String, Arc<Judge>>> {
    static JUDGES: OnceLock<Mutex<HashMap<String, Arc<Judge>>>> = OnceLock::new();
    JUDGES.get_or_init(Default::default)
}

/// Why a row was not judged.
#[derive(Clone)]
enum Failure {
    /// The row's reason (kept in its `judge_error`).
    Row(String),
    /// The budget was spent before the row's request could be made.
    Budget,
    /// Ctrl-C came: the call fails as a whole.
    Interrupted,
}

/// A distinct request's outcome and cost, as a worker reports it.
type Finished = (usize, Result<Value, Failure>, Spent);

/// What one request cost and gave.
#[derive(Default)]
struct Spent {
    calls: u64,
    retries: u64,
    prompt_tokens: u64,
    completion_tokens: u64,
    cache_write_failures: u64,
}

impl Judge {
    /// A judge for `settings` (errors name `metric`). Prefer [`Judge::shared`], which reuses
    /// one judge per distinct settings.
    pub fn new(settings: &JudgeSettings, metric: &str) -> crate::Result<Judge> {
        let resolved = settings.resolve(metric)?;
        let api_key = read_api_key(metric, "judge", resolved.api_key_env.as_deref())?;
        let transport = Transport::new(
            &resolved.base_url,
            Duration::from_secs_f64(settings.endpoint.timeout),
            api_key,
        )
        .keeping(settings.endpoint.max_concurrency);
        let cache = match &resolved.cache {
            Some(dir) => Some(ReplyCache::open(dir)?),
            None => None,
        };
        Ok(Judge {
            transport,
            cache,
            in_flight: Slots {
                free: Mutex::new(settings.endpoint.max_concurrency),
                released: Condvar::new(),
            },
            calls_made: AtomicU64::new(0),
            tokens_spent: AtomicU64::new(0),
            json_object_only: AtomicBool::new(false),
            cache_failure_reported: AtomicBool::new(false),
            usage: Mutex::new(UsageByTemplate::new()),
            first_request: std::sync::OnceLock::new(),
            deadline_reached: AtomicBool::new(false),
            resolved,
        })
    }

    /// The end of the judge's time budget (`max_seconds` after its first request), if any.
    fn deadline(&self) -> Option<Instant> {
        let seconds = self.resolved.settings.max_seconds?;
        let first = *self.first_request.get_or_init(Instant::now);
        Some(first + Duration::from_secs_f64(seconds))
    }

    /// The process's judge for `settings`, built on first use and reused afterwards (its
    /// budget and accounting are per process). Errors name `metric` and the setting.
    pub fn shared(settings: &JudgeSettings, metric: &str) -> crate::Result<Arc<Judge>> {
        let key = serde_json::to_string(settings).unwrap_or_default();
        let mut judges = shared_judges().lock().unwrap_or_else(|p| p.into_inner());
        if let Some(judge) = judges.get(&key) {
            return Ok(Arc::clone(judge));
        }
        let judge = Arc::new(Judge::new(settings, metric)?);
        judges.insert(key, Arc::clone(&judge));
        Ok(judge)
    }

    /// Forgets the process's judges, so that the next [`Judge::shared`] builds new ones with
    /// unspent budgets: a command-line job run inside a longer-lived process (the Python
    /// package's `polars-rag`, `pr.score`, a Ray worker scoring block after block) is one run,
    /// and its `max_calls`, `max_total_tokens` and `max_seconds` bound that run alone. Judges
    /// already handed out keep working.
    pub fn forget_shared() {
        shared_judges()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    /// The process's judge for `settings` if one has been used, without building one.
    pub fn existing(settings: &JudgeSettings) -> Option<Arc<Judge>> {
        let key = serde_json::to_string(settings).unwrap_or_default();
        shared_judges()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned()
    }

    /// The settings in effect (environment applied).
    pub fn settings(&self) -> &ResolvedSettings {
        &self.resolved
    }

    /// What this judge has spent so far, per template id.
    pub fn usage(&self) -> UsageByTemplate {
        self.usage.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The key of everything that determines the reply to one rendered request, but the user
    /// message: hashed once per call so that each row only hashes its own data.
    fn key_prefix(&self, template: &JudgeTemplate, system: &str, sample: u32) -> Sha256 {
        let settings = &self.resolved.settings;
        let head = json!({
            "base_url": self.resolved.base_url,
            "model": self.resolved.model,
            "template": template.id,
            "template_hash": template.prompt_hash(),
            "system": system,
            "schema": template.schema,
            "temperature": settings.temperature,
            "seed": self.seed_of(sample),
            "max_tokens": settings.max_tokens,
            "sample": sample,
        });
        let mut hasher = Sha256::new();
        hasher.update(head.to_string().as_bytes());
        hasher.update([0u8]);
        hasher
    }

    fn seed_of(&self, sample: u32) -> Option<u64> {
        self.resolved
            .settings
            .seed
            .map(|seed| seed.wrapping_add(u64::from(sample)))
    }

    /// Judges `rows` with `template`: each row gives its input values in the order of
    /// `template.inputs`, or `None` when one of them is null. `sample` numbers a repeated
    /// judgement of the same rows (a separate cache entry, sent `seed + sample`). `metric`
    /// names the caller in errors.
    ///
    /// Every row gets its own outcome; the call itself fails only when the budget runs out
    /// (replies received until then are cached, so a re-run with a larger budget resumes).
    pub fn judge_rows(
        &self,
        metric: &str,
        template: &JudgeTemplate,
        rows: &[Option<Vec<&str>>],
        sample: u32,
    ) -> crate::Result<Vec<RowReply>> {
        let started = Instant::now();
        let _claim_on_ctrl_c = crate::engines::interrupt::arm();
        let system = template.render_system();
        let prefix = self.key_prefix(template, &system, sample);

        // Render and key each row, in parallel: with every reply cached, rendering and hashing
        // are most of a row's cost. Identical requests are asked (and read) once.
        let keyed: Vec<Option<([u8; 32], String)>> = rows
            .par_iter()
            .map(|row| {
                row.as_ref().map(|values| {
                    let user = template.render_user(values);
                    let mut hasher = prefix.clone();
                    hasher.update(user.as_bytes());
                    (hasher.finalize().into(), user)
                })
            })
            .collect();
        let mut requests: Vec<(String, String)> = Vec::new(); // (key, user message)
        let mut request_of_row: Vec<Option<usize>> = Vec::with_capacity(rows.len());
        let mut index_of_key: HashMap<RequestDigest, usize, BuildHasherDefault<DigestHasher>> =
            HashMap::default();
        for row in keyed {
            let Some((digest, user)) = row else {
                request_of_row.push(None);
                continue;
            };
            let index = *index_of_key
                .entry(RequestDigest(digest))
                .or_insert_with(|| {
                    requests.push((super::template::hex(&digest), user));
                    requests.len() - 1
                });
            request_of_row.push(Some(index));
        }
        drop(index_of_key);

        let mut usage = Usage {
            rows: request_of_row.iter().flatten().count() as u64,
            ..Usage::default()
        };
        let mut outcomes: Vec<Option<Result<Value, Failure>>> =
            (0..requests.len()).map(|_| None).collect();

        let max_items = self.resolved.settings.max_reply_items;
        if let Some(cache) = &self.cache {
            let keys: Vec<&str> = requests.iter().map(|(key, _)| key.as_str()).collect();
            // A cached reply is re-validated (in parallel): a cache edited by hand is not
            // trusted blindly.
            outcomes = cache
                .get_many(&keys)?
                .into_par_iter()
                .map(|cached| cached_value(&cached?.reply, template, max_items).map(Ok))
                .collect();
        }
        let hits: u64 = outcomes.iter().filter(|o| o.is_some()).count() as u64;
        // Rows answered by the cache or by an identical row need no call.
        let calls_needed = requests.len() as u64 - hits;
        Progress::planned(Work::Judge, usage.rows, usage.rows - calls_needed);

        let missing: Vec<usize> = (0..requests.len())
            .filter(|&i| outcomes[i].is_none())
            .collect();
        if !missing.is_empty() {
            let next = AtomicU64::new(0);
            let results: Mutex<Vec<Finished>> = Mutex::new(Vec::new());
            let workers = self
                .resolved
                .settings
                .endpoint
                .max_concurrency
                .min(missing.len());
            std::thread::scope(|scope| {
                for _ in 0..workers {
                    scope.spawn(|| loop {
                        let position = next.fetch_add(1, Ordering::Relaxed) as usize;
                        let Some(&index) = missing.get(position) else {
                            break;
                        };
                        let (key, user) = &requests[index];
                        let (outcome, spent) = self.ask(template, &system, user, key, sample);
                        Progress::finished(Work::Judge, 1);
                        results
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push((index, outcome, spent));
                    });
                }
            });
            for (index, outcome, spent) in results.into_inner().unwrap_or_else(|p| p.into_inner()) {
                usage.calls += spent.calls;
                usage.retries += spent.retries;
                usage.cache_write_failures += spent.cache_write_failures;
                usage.prompt_tokens = usage.prompt_tokens.saturating_add(spent.prompt_tokens);
                usage.completion_tokens = usage
                    .completion_tokens
                    .saturating_add(spent.completion_tokens);
                outcomes[index] = Some(outcome);
            }
        }

        // Repeated rows count as hits of the first.
        usage.cache_hits = hits + (usage.rows - requests.len() as u64);
        let budget_spent = outcomes
            .iter()
            .filter(|o| matches!(o, Some(Err(Failure::Budget))))
            .count();
        usage.failures = outcomes
            .iter()
            .filter(|o| matches!(o, Some(Err(_))))
            .count() as u64;
        usage.seconds = started.elapsed().as_secs_f64();
        self.usage
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(template.id.clone())
            .or_default()
            .add(&usage);

        let interrupted = outcomes
            .iter()
            .filter(|o| matches!(o, Some(Err(Failure::Interrupted))))
            .count();
        if interrupted > 0 {
            return Err(crate::Error::new(
                crate::ErrorKind::Interrupted,
                format!(
                    "{metric}: {}: {interrupted} of {} distinct rows were not judged; replies received \
                     so far are cached",
                    crate::engines::interrupt::INTERRUPTED_MESSAGE,
                    requests.len()
                ),
            ));
        }
        if budget_spent > 0 {
            let settings = &self.resolved.settings;
            let limit = match (settings.max_calls, settings.max_total_tokens) {
                (Some(calls), _) if self.calls_made.load(Ordering::Relaxed) >= calls => {
                    format!("max_calls = {calls}")
                }
                (_, Some(tokens)) if self.tokens_spent.load(Ordering::Relaxed) >= tokens => {
                    format!("max_total_tokens = {tokens}")
                }
                _ if self.deadline_reached.load(Ordering::Relaxed) => {
                    format!("max_seconds = {}", settings.max_seconds.unwrap_or_default())
                }
                (_, Some(tokens)) => format!("max_total_tokens = {tokens}"),
                _ => "the budget".to_string(),
            };
            return Err(crate::Error::new(
                crate::ErrorKind::BudgetSpent,
                format!(
                    "{metric}: the judge's budget is spent ({limit}; {} calls and {} tokens spent): {budget_spent} of {} \
                     distinct rows were not judged. Replies received so far are cached; raise the budget and run \
                     again to resume",
                    self.calls_made.load(Ordering::Relaxed),
                    self.tokens_spent.load(Ordering::Relaxed),
                    requests.len(),
                ),
            ));
        }

        // Each reply is cloned only for the rows that repeat it; its last row takes it.
        let mut uses_left: Vec<u32> = vec![0; outcomes.len()];
        for &i in request_of_row.iter().flatten() {
            uses_left[i] += 1;
        }
        Ok(request_of_row
            .into_iter()
            .map(|index| {
                index.map(|i| {
                    uses_left[i] -= 1;
                    let outcome = if uses_left[i] == 0 {
                        outcomes[i].take()
                    } else {
                        outcomes[i].clone()
                    };
                    match outcome {
                        Some(Ok(value)) => Ok(value),
                        Some(Err(Failure::Row(reason))) => Err(crate::Error::engine(reason)),
                        Some(Err(Failure::Budget | Failure::Interrupted)) | None => {
                            Err(crate::Error::engine("not judged"))
                        }
                    }
                })
            })
            .collect())
    }

    /// Whether one more request fits the budget; reserves it when it does.
    fn reserve_call(&self) -> bool {
        let settings = &self.resolved.settings;
        if let Some(tokens) = settings.max_total_tokens
            && self.tokens_spent.load(Ordering::Relaxed) >= tokens
        {
            return false;
        }
        match settings.max_calls {
            Some(limit) => self
                .calls_made
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |made| {
                    (made < limit).then_some(made + 1)
                })
                .is_ok(),
            None => {
                self.calls_made.fetch_add(1, Ordering::Relaxed);
                true
            }
        }
    }

    /// One distinct request: asked (with retries), validated, re-asked once when invalid,
    /// cached when valid.
    fn ask(
        &self,
        template: &JudgeTemplate,
        system: &str,
        user: &str,
        key: &str,
        sample: u32,
    ) -> (Result<Value, Failure>, Spent) {
        let mut spent = Spent::default();
        let asked = Instant::now();
        let max_items = self.resolved.settings.max_reply_items;
        let mut messages: Vec<Message> =
            vec![("system", system.to_string()), ("user", user.to_string())];
        let mut outcome = Err(Failure::Row(String::new()));
        for round in 0..2 {
            let (content, tokens) = match self.complete(template, &messages, sample, &mut spent) {
                Ok(reply) => reply,
                Err(failure) => return (Err(failure), spent),
            };
            match read_reply(&content, template, max_items, |value| {
                self.transport.redact_reply(value)
            }) {
                Ok(mut value) => {
                    if let (Some(field), Some(tokens)) = (&template.weighted_score, &tokens)
                        && let Some(candidates) =
                            logprobs::field_candidates(&content, tokens, field)
                    {
                        let mut candidates = logprobs::record(candidates);
                        self.transport.redact_reply(&mut candidates);
                        value[SCORE_CANDIDATES] = candidates;
                    }
                    outcome = Ok(value);
                    break;
                }
                Err(problem) => {
                    // The problem quotes the reply's head, and becomes the row's reason.
                    let problem = self.transport.redact(&problem);
                    outcome = Err(Failure::Row(if round == 0 {
                        problem.clone()
                    } else {
                        format!("invalid reply, asked twice: {problem}")
                    }));
                    // Ask once more, showing the model its reply and what is wrong with it.
                    messages.push(("assistant", content));
                    messages.push((
                        "user",
                        format!(
                            "That reply is not valid: {problem}. Reply again with only one JSON object that \
                             matches the schema."
                        ),
                    ));
                }
            }
        }
        if let (Ok(value), Some(cache)) = (&mut outcome, &self.cache) {
            let reply = CachedReply {
                reply: value.to_string(),
                prompt_tokens: spent.prompt_tokens,
                completion_tokens: spent.completion_tokens,
            };
            // The messages hold a re-asked reply as the server sent it.
            let mut sent = Value::Array(
                messages
                    .iter()
                    .map(|(role, content)| json!({"role": role, "content": content}))
                    .collect(),
            );
            self.transport.redact_reply(&mut sent);
            let call = CallRecord {
                template_hash: template.prompt_hash(),
                base_url: crate::engines::redact_url(&self.resolved.base_url),
                sample,
                messages: sent.to_string(),
                latency_ms: asked.elapsed().as_secs_f64() * 1000.0,
            };
            // Another run may have stored a reply to the same request meanwhile: the first
            // stored wins, and this run returns it too, so that every run agrees with what the
            // cache will serve a re-run.
            let usable = |stored: &str| cached_value(stored, template, max_items).is_some();
            match cache.store(
                key,
                &template.id,
                &self.resolved.model,
                &reply,
                Some(&call),
                &usable,
            ) {
                Ok(stored) if stored.reply != reply.reply => {
                    if let Some(first) = cached_value(&stored.reply, template, max_items) {
                        *value = first;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    // The judgement stands; only the cache write failed. It is counted in the usage
                    // (`cache_write_failures`) and said once on stderr: a re-run will ask again.
                    spent.cache_write_failures += 1;
                    if !self.cache_failure_reported.swap(true, Ordering::Relaxed) {
                        eprintln!(
                            "polars-rag: warning: the judge cache could not be written ({e}); judgements \
                             are kept but not cached, so a re-run asks the server again"
                        );
                    }
                }
            }
        }
        // A row's reason may quote what the server sent.
        let outcome = outcome.map_err(|failure| match failure {
            Failure::Row(reason) => Failure::Row(self.transport.redact(&reason)),
            other => other,
        });
        (outcome, spent)
    }

    /// One chat completion (with retries): the reply's message content, and its tokens with
    /// their top candidates when the template asked for them and the server gave them.
    fn complete(
        &self,
        template: &JudgeTemplate,
        messages: &[Message],
        sample: u32,
        spent: &mut Spent,
    ) -> Result<Completion, Failure> {
        let settings = &self.resolved.settings;
        let mut attempt = 0u32;
        let deadline = self.deadline();
        loop {
            if crate::engines::interrupt::interrupted() {
                return Err(Failure::Interrupted);
            }
            let asked_json_schema = !self.json_object_only.load(Ordering::Relaxed);
            let body = self.request_body(template, messages, sample);
            // A request the deadline leaves no time for is not counted as a call.
            if deadline.is_some_and(|d| Instant::now() >= d) {
                self.deadline_reached.store(true, Ordering::Relaxed);
                return Err(Failure::Budget);
            }
            if !self.reserve_call() {
                return Err(Failure::Budget);
            }
            spent.calls += 1;
            let result = match self.in_flight.acquire() {
                Some(_slot) => self.transport.post(&body, deadline),
                None => Attempt::Interrupted,
            };
            let (reason, retry_after) = match result {
                Attempt::Reply(text) => {
                    return self.read_completion(&text, spent).map_err(Failure::Row)
                }
                Attempt::SchemaFormatRejected if asked_json_schema => {
                    // The judge switches to json_object for good (the schema is in the system
                    // message anyway); ask again at once.
                    self.json_object_only.store(true, Ordering::Relaxed);
                    continue;
                }
                Attempt::SchemaFormatRejected => {
                    return Err(Failure::Row(
                        "the server rejected the request's response_format".into(),
                    ))
                }
                Attempt::Fatal(reason) => return Err(Failure::Row(reason)),
                Attempt::PastDeadline => {
                    self.deadline_reached.store(true, Ordering::Relaxed);
                    return Err(Failure::Budget);
                }
                Attempt::Interrupted => return Err(Failure::Interrupted),
                Attempt::Retry {
                    reason,
                    retry_after,
                } => (reason, retry_after),
            };
            if attempt >= settings.endpoint.max_retries {
                return Err(Failure::Row(format!(
                    "{reason} (after {} attempts)",
                    attempt + 1
                )));
            }
            spent.retries += 1;
            self.transport
                .wait_before_retry(
                    retry_after,
                    settings.endpoint.retry_base_delay,
                    attempt,
                    settings.endpoint.max_retry_wait,
                    deadline,
                )
                .map_err(|stopped| match stopped {
                    Retry::Refused(why) => Failure::Row(format!("{reason}: {why}")),
                    Retry::PastDeadline => {
                        self.deadline_reached.store(true, Ordering::Relaxed);
                        Failure::Budget
                    }
                    Retry::Interrupted => Failure::Interrupted,
                })?;
            attempt += 1;
        }
    }

    fn request_body(&self, template: &JudgeTemplate, messages: &[Message], sample: u32) -> String {
        let settings = &self.resolved.settings;
        let messages: Vec<Value> = messages
            .iter()
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect();
        let response_format = if self.json_object_only.load(Ordering::Relaxed) {
            json!({"type": "json_object"})
        } else {
            template.response_format()
        };
        let mut body = json!({
            "model": self.resolved.model,
            "messages": messages,
            "temperature": settings.temperature,
            "max_tokens": settings.max_tokens,
            "response_format": response_format,
        });
        if let Some(seed) = self.seed_of(sample) {
            body["seed"] = json!(seed);
        }
        if template.weighted_score.is_some() {
            body["logprobs"] = json!(true);
            body["top_logprobs"] = json!(20);
        }
        body.to_string()
    }

    /// The message content of a chat-completions reply (and its tokens' candidates, when it
    /// has them), and its token counts.
    fn read_completion(&self, text: &str, spent: &mut Spent) -> Result<Completion, String> {
        let reply: Value = serde_json::from_str(text)
            .map_err(|e| format!("the server's reply is not JSON: {e}"))?;
        let tokens = |name: &str| {
            reply
                .pointer(&format!("/usage/{name}"))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        let (prompt, completion) = (tokens("prompt_tokens"), tokens("completion_tokens"));
        // Counts come from the server: they saturate rather than wrap, so that a hostile count
        // cannot carry the total back under the `max_total_tokens` budget.
        spent.prompt_tokens = spent.prompt_tokens.saturating_add(prompt);
        spent.completion_tokens = spent.completion_tokens.saturating_add(completion);
        let _ = self
            .tokens_spent
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |total| {
                Some(total.saturating_add(prompt.saturating_add(completion)))
            });
        let choice = reply
            .pointer("/choices/0")
            .ok_or("the server's reply has no choices")?;
        if choice.get("finish_reason").and_then(Value::as_str) == Some("length") {
            return Err("the reply was cut off at max_tokens".into());
        }
        let content = choice
            .pointer("/message/content")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or("the server's reply has no message content")?;
        Ok((content, logprobs::tokens_of_reply(&reply)))
    }
}

/// A reply's message content, and its tokens with their top candidates when it has them.
type Completion = (String, Option<Vec<(String, Vec<TokenChoice>)>>);

/// A cached reply's value when it is still valid against the template's schema: a cache
/// edited by hand is not trusted blindly.
fn cached_value(reply: &str, template: &JudgeTemplate, max_items: usize) -> Option<Value> {
    let value = serde_json::from_str::<Value>(reply).ok()?;
    validate(&as_judged(&value), &template.schema).ok()?;
    within_list_bound(&value, max_items).ok()?;
    Some(value)
}

/// An error giving the size of the longest list in `value` (and where it is) when it holds
/// more than `max_items` items ([`JudgeSettings::max_reply_items`]).
fn within_list_bound(value: &Value, max_items: usize) -> Result<(), String> {
    fn longest<'a>(value: &'a Value, at: &mut Vec<&'a str>, found: &mut Option<(String, usize)>) {
        match value {
            Value::Array(items) => {
                if found.as_ref().is_none_or(|(_, n)| items.len() > *n) {
                    *found = Some((at.join("."), items.len()));
                }
                items.iter().for_each(|item| longest(item, at, found));
            }
            Value::Object(fields) => {
                for (name, field) in fields {
                    at.push(name);
                    longest(field, at, found);
                    at.pop();
                }
            }
            _ => {}
        }
    }
    let mut found = None;
    longest(value, &mut Vec::new(), &mut found);
    match found {
        Some((field, n)) if n > max_items => Err(format!(
            "the reply lists {n} items{}, more than max_reply_items = {max_items} (each item \
             costs requests of its own; raise the setting if such long lists are expected)",
            if field.is_empty() {
                String::new()
            } else {
                format!(" in `{field}`")
            }
        )),
        _ => Ok(()),
    }
}

/// The JSON object of a reply's content (a Markdown code fence around it is tolerated), with
/// `redact` applied to it (the API key cut out), validated against the template's schema.
fn read_reply(
    content: &str,
    template: &JudgeTemplate,
    max_items: usize,
    redact: impl FnOnce(&mut Value),
) -> Result<Value, String> {
    let trimmed = content.trim();
    let unfenced = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.trim_end().strip_suffix("```"))
        .unwrap_or(trimmed);
    let value: Value = serde_json::from_str(unfenced.trim()).map_err(|e| {
        let head: String = trimmed.chars().take(80).collect();
        format!("the reply is not a JSON object ({e}): {head:?}")
    })?;
    let mut value = value;
    redact(&mut value);
    validate(&value, &template.schema)
        .map_err(|e| format!("the reply does not match the schema: {e}"))?;
    within_list_bound(&value, max_items)?;
    // Keys starting with `_` belong to the engine (`_score_candidates`): whatever a server puts
    // there is dropped, so a reply cannot spoof them.
    if let Some(object) = value.as_object_mut() {
        object.retain(|key, _| !key.starts_with('_'));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_in_code_fences_are_read_and_others_refused() {
        let card = JudgeTemplate::builtin("answer_match").unwrap();
        let fenced = "```json\n{\"match\": true, \"reasoning\": \"same\"}\n```";
        assert_eq!(
            read_reply(fenced, card, 200, |_| {}).unwrap()["match"],
            true
        );
        assert!(read_reply("yes", card, 200, |_| {})
            .unwrap_err()
            .contains("not a JSON object"));
        assert!(read_reply(
            "{\"match\": \"yes\", \"reasoning\": \"\"}",
            card,
            200,
            |_| {}
        )
        .unwrap_err()
        .contains("schema"));
    }

    #[test]
    fn a_reply_cannot_set_the_engines_own_keys() {
        // A card whose schema allows fields it does not declare (custom cards may).
        let card = JudgeTemplate::from_toml(
            "id = \"open\"\nversion = \"1\"\ninputs = [\"answer\"]\nsystem = \"Grade.\"\n\
             [schema]\ntype = \"object\"\nrequired = [\"score\"]\n\
             [schema.properties.score]\ntype = \"integer\"\n",
        )
        .unwrap();
        let spoof =
            "{\"score\": 3, \"_weighted_score\": 99, \"_score_candidates\": [[\"9\", 1.0]]}";
        let value = read_reply(spoof, &card, 200, |_| {}).unwrap();
        assert!(value.get("_weighted_score").is_none(), "{value}");
        assert!(value.get(SCORE_CANDIDATES).is_none(), "{value}");
        assert_eq!(value["score"], 3);
    }

    #[test]
    fn backoff_doubles_within_jitter_and_is_capped() {
        for attempt in 0..5 {
            let d = crate::engines::judge::transport::backoff(0.1, attempt).as_secs_f64();
            let ceiling = 0.1 * 2f64.powi(attempt as i32);
            assert!(
                d >= ceiling / 2.0 - 1e-9 && d <= ceiling + 1e-9,
                "{attempt}: {d}"
            );
        }
        assert!(crate::engines::judge::transport::backoff(1.0, 40).as_secs_f64() <= 60.0);
    }
}
