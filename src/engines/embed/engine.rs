//! The embedder: backend, cache, batching, accounting (see [`crate::engines::embed`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::engines::progress::{Progress, Work};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use super::cache::{vector_key, CachedVector, VectorCache};
use super::remote::RemoteModel;
use super::{Backend, EmbedSettings, EmbedUsage, ResolvedEmbedSettings, ENGINE_VERSION};

enum Model {
    // Boxed: the loaded model is far larger than the client.
    #[cfg(feature = "embed")]
    Local(Box<super::local::LocalModel>),
    Remote(RemoteModel),
}

/// A sentence embedder: its model, cache and accounting. Build it with [`Embedder::shared`].
pub struct Embedder {
    model: Model,
    model_signature: String,
    cache: Option<VectorCache>,
    resolved: ResolvedEmbedSettings,
    dimensions: OnceLock<usize>,
    usage: Mutex<EmbedUsage>,
}

fn shared_embedders() -> &'static Mutex<HashMap<String, Arc<Embedder>>> {
    static EMBEDDERS: OnceLock<Mutex<HashMap<String, Arc<Embedder>>>> = OnceLock::new();
    EMBEDDERS.get_or_init(|| Mutex::new(HashMap::new()))
}

fn engine_error(message: String) -> crate::Error {
    crate::Error::new(crate::ErrorKind::Engine, message)
}

/// One distinct text to embed: where its vector goes and its cache key.
struct Pending<'a> {
    text: &'a str,
    slot: usize,
    key: String,
}

fn texts_of<'a>(batch: &[&Pending<'a>]) -> Vec<&'a str> {
    batch.iter().map(|p| p.text).collect()
}

impl Embedder {
    /// Builds an embedder: loads the local model or sets up the client, opens the cache.
    pub fn new(settings: &EmbedSettings, metric: &str) -> crate::Result<Embedder> {
        let resolved = settings.resolve(metric)?;
        let model = match &resolved.backend {
            #[cfg(feature = "embed")]
            Backend::Local(directory) => {
                Model::Local(Box::new(super::local::LocalModel::load(directory)?))
            }
            #[cfg(not(feature = "embed"))]
            Backend::Local(directory) => {
                return Err(engine_error(format!(
                    "{metric}: this build has no local embedding model (feature `embed`); cannot \
                     load {}. Give a `base_url` for a server instead",
                    directory.display()
                )))
            }
            Backend::Remote {
                base_url,
                model,
                api_key_env,
            } => Model::Remote(RemoteModel::new(
                metric,
                base_url,
                model,
                api_key_env.as_deref(),
                settings,
            )?),
        };
        let model_signature = match &model {
            #[cfg(feature = "embed")]
            Model::Local(local) => local.signature(),
            Model::Remote(remote) => remote.signature(),
        };
        let dimensions = OnceLock::new();
        #[cfg(feature = "embed")]
        if let Model::Local(local) = &model {
            let _ = dimensions.set(local.dimensions);
        }
        let cache = match &resolved.cache {
            Some(directory) => Some(VectorCache::open(directory)?),
            None => None,
        };
        Ok(Embedder {
            model,
            model_signature,
            cache,
            resolved,
            dimensions,
            usage: Mutex::new(EmbedUsage::default()),
        })
    }

    /// The process's embedder for these settings, built on first use (a model is loaded once).
    pub fn shared(settings: &EmbedSettings, metric: &str) -> crate::Result<Arc<Embedder>> {
        let resolved = settings.resolve(metric)?;
        let key = format!("{:?}|{:?}", resolved.backend, settings);
        if let Some(existing) = shared_embedders()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(Arc::clone(existing));
        }
        // Loading happens outside the lock; two threads racing keep the first one stored.
        let built = Arc::new(Embedder::new(settings, metric)?);
        let mut embedders = shared_embedders().lock().unwrap_or_else(|p| p.into_inner());
        Ok(Arc::clone(embedders.entry(key).or_insert(built)))
    }

    /// The process's embedder for these settings if one was built (for its usage).
    pub fn existing(settings: &EmbedSettings) -> Option<Arc<Embedder>> {
        let resolved = settings.resolve("embed").ok()?;
        let key = format!("{:?}|{:?}", resolved.backend, settings);
        shared_embedders()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned()
    }

    /// The settings it runs with.
    pub fn settings(&self) -> &ResolvedEmbedSettings {
        &self.resolved
    }

    /// The signature recorded with scores: backend, model (weights hash, pooling, normalisation,
    /// token limit, truncation for a local model) and engine version.
    pub fn signature(&self) -> String {
        format!(
            "embed|{}|engine:polars-rag-embed-{ENGINE_VERSION}",
            self.model_signature
        )
    }

    /// What this embedder has done in the process so far.
    pub fn usage(&self) -> EmbedUsage {
        self.usage.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The width of the vectors (a server is asked once, through the cache, when not yet known).
    pub fn dimensions(&self, metric: &str) -> crate::Result<usize> {
        if let Some(&known) = self.dimensions.get() {
            return Ok(known);
        }
        let probe = self.embed(metric, &[Some("dimension probe")])?;
        let width = probe
            .into_iter()
            .flatten()
            .next()
            .map(|v| v.len())
            .ok_or_else(|| {
                engine_error(format!("{metric}: the embedding server returned nothing"))
            })?;
        Ok(*self.dimensions.get_or_init(|| width))
    }

    /// The local model's token ids of `text` (`None` for a remote model).
    #[cfg(feature = "embed")]
    pub fn token_ids(&self, text: &str) -> crate::Result<Option<Vec<u32>>> {
        match &self.model {
            Model::Local(local) => Ok(Some(local.tokens(text)?.ids)),
            Model::Remote(_) => Ok(None),
        }
    }

    /// Embeds texts: `None` stays `None`; every vector has the same width. An error names
    /// `metric` and why the embedding failed (a remote batch that failed after its retries, a
    /// model error, a cache that cannot be opened or written).
    pub fn embed(
        &self,
        metric: &str,
        texts: &[Option<&str>],
    ) -> crate::Result<Vec<Option<Vec<f32>>>> {
        let started = Instant::now();
        let _claim_on_ctrl_c = crate::engines::interrupt::arm();
        let mut usage = EmbedUsage::default();
        let mut slots: Vec<Option<usize>> = vec![None; texts.len()];
        let mut distinct: Vec<Pending> = Vec::new();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (row, text) in texts.iter().enumerate() {
            let Some(text) = text else { continue };
            usage.texts += 1;
            let slot = *seen.entry(text).or_insert_with(|| {
                distinct.push(Pending {
                    text,
                    slot: distinct.len(),
                    key: vector_key(&self.model_signature, text),
                });
                distinct.len() - 1
            });
            slots[row] = Some(slot);
        }
        usage.distinct = distinct.len() as u64;
        let mut vectors: Vec<Option<CachedVector>> = match &self.cache {
            Some(cache) => {
                let keys: Vec<String> = distinct.iter().map(|p| p.key.clone()).collect();
                cache.get_many(&keys)?
            }
            None => vec![None; distinct.len()],
        };
        usage.cache_hits = vectors.iter().filter(|v| v.is_some()).count() as u64;
        let mut missing: Vec<&Pending> = distinct
            .iter()
            .filter(|p| vectors[p.slot].is_none())
            .collect();
        if self.resolved.settings.sort_by_length {
            // Longest first, as sentence-transformers orders its batches: less padding for a
            // remote server (the local model packs its batches and has none).
            missing.sort_by_key(|p| std::cmp::Reverse(p.text.chars().count()));
        }
        Progress::planned(Work::Embed, usage.texts, usage.texts - missing.len() as u64);
        let batches: Vec<&[&Pending]> = missing.chunks(self.resolved.settings.batch_size).collect();
        let embedded = self.embed_batches(metric, &batches, &mut usage)?;
        let mut fresh: Vec<(&str, &CachedVector)> = Vec::new();
        for (pending, value) in missing.iter().zip(&embedded) {
            vectors[pending.slot] = Some(value.clone());
        }
        for (pending, value) in missing.iter().zip(&embedded) {
            fresh.push((&pending.key, value));
        }
        usage.embedded = embedded.len() as u64;
        usage.truncated = vectors.iter().flatten().filter(|v| v.truncated).count() as u64;
        let width = vectors.iter().flatten().map(|v| v.vector.len()).next();
        if let Some(width) = width {
            if let Some(other) = vectors.iter().flatten().find(|v| v.vector.len() != width) {
                return Err(engine_error(format!(
                    "{metric}: the embedding model returned vectors of {width} and {} dimensions",
                    other.vector.len()
                )));
            }
            if let Some(&known) = self.dimensions.get()
                && known != width
            {
                return Err(engine_error(format!(
                    "{metric}: the embedding model returned {width} dimensions, earlier {known}"
                )));
            }
        }
        if let (Some(cache), false) = (&self.cache, fresh.is_empty()) {
            cache.put_many(&self.model_signature, &fresh)?;
        }
        usage.seconds = started.elapsed().as_secs_f64();
        self.usage
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .add(&usage);
        Ok(slots
            .iter()
            .map(|slot| slot.and_then(|s| vectors[s].as_ref().map(|v| v.vector.clone())))
            .collect())
    }

    /// Embeds the batches in order: one forward pass each (local), or up to `max_concurrency`
    /// requests in flight (remote).
    fn embed_batches(
        &self,
        metric: &str,
        batches: &[&[&Pending]],
        usage: &mut EmbedUsage,
    ) -> crate::Result<Vec<CachedVector>> {
        match &self.model {
            #[cfg(feature = "embed")]
            Model::Local(local) => {
                let mut out = Vec::new();
                for batch in batches {
                    // Ctrl-C is the engine's during the call: acted on between batches.
                    if crate::engines::interrupt::interrupted() {
                        return Err(crate::Error::new(
                            crate::ErrorKind::Interrupted,
                            format!(
                                "{metric}: {}",
                                crate::engines::interrupt::INTERRUPTED_MESSAGE
                            ),
                        ));
                    }
                    let tokens = texts_of(batch)
                        .iter()
                        .map(|text| local.tokens(text))
                        .collect::<crate::Result<Vec<_>>>()?;
                    usage.tokens += tokens.iter().map(|t| t.ids.len() as u64).sum::<u64>();
                    usage.calls += 1;
                    let done = local.embed_tokens(&tokens)?;
                    Progress::finished(Work::Embed, tokens.len() as u64);
                    out.extend(
                        done.vectors
                            .into_iter()
                            .zip(done.truncated)
                            .map(|(vector, truncated)| CachedVector { vector, truncated }),
                    );
                }
                Ok(out)
            }
            Model::Remote(remote) => {
                let next = AtomicUsize::new(0);
                let results: Mutex<Vec<Option<Result<super::remote::RemoteBatch, String>>>> =
                    Mutex::new((0..batches.len()).map(|_| None).collect());
                let workers = self
                    .resolved
                    .settings
                    .endpoint
                    .max_concurrency
                    .min(batches.len());
                std::thread::scope(|scope| {
                    for _ in 0..workers {
                        scope.spawn(|| loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(batch) = batches.get(i) else { break };
                            let outcome = remote.embed_batch(&texts_of(batch));
                            Progress::finished(Work::Embed, batch.len() as u64);
                            results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(outcome);
                        });
                    }
                });
                let mut out = Vec::new();
                for (i, outcome) in results
                    .into_inner()
                    .unwrap_or_else(|p| p.into_inner())
                    .into_iter()
                    .enumerate()
                {
                    let done = outcome
                        .unwrap_or_else(|| Err("not embedded".into()))
                        .map_err(|reason| {
                            let kind = if reason == crate::engines::interrupt::INTERRUPTED_MESSAGE {
                                crate::ErrorKind::Interrupted
                            } else {
                                crate::ErrorKind::Engine
                            };
                            crate::Error::new(
                                kind,
                                format!(
                                    "{metric}: embedding batch {} of {} failed: {reason}",
                                    i + 1,
                                    batches.len()
                                ),
                            )
                        })?;
                    usage.calls += done.calls;
                    usage.tokens += done.tokens;
                    out.extend(done.vectors.into_iter().map(|vector| CachedVector {
                        vector,
                        truncated: false,
                    }));
                }
                Ok(out)
            }
        }
    }
}

/// The model as the quote locator's embedding stage (`cosine` of each quote and its span).
impl super::TextEmbedder for Embedder {
    fn embed(&self, texts: &[&str]) -> crate::Result<Vec<Vec<f64>>> {
        let rows: Vec<Option<&str>> = texts.iter().map(|t| Some(*t)).collect();
        let vectors = Embedder::embed(self, "locate_quotes", &rows)?;
        Ok(vectors
            .into_iter()
            .map(|v| v.unwrap_or_default().into_iter().map(f64::from).collect())
            .collect())
    }
}
