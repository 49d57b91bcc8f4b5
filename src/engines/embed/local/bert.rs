//! The BERT encoder of a sentence-embedding model, in f32 on the CPU, as Hugging Face's
//! `BertModel` computes it in inference: embeddings (word + position + token type 0, then
//! LayerNorm), `layers` post-norm transformer blocks (multi-head self-attention, exact-erf GELU
//! feed-forward).
//!
//! A batch is packed: the texts' tokens are stacked row after row with no padding. Every
//! operation but attention works token by token, and attention runs per text over its own rows,
//! so no work goes into padding. `BertModel` gives padding an attention weight of exactly 0, so
//! the real tokens' states are the same as in a padded batch.
//!
//! The dense layers are `gemm` calls into the buffers of a `Workspace` kept from one batch to
//! the next. Tensors allocated per operation, as candle's CPU backend does, were zero-filled and
//! page-faulted afresh by every layer: tens of megabytes per layer, about 5 % of the time.
//!
//! Weight names are those of `BertModel`'s safetensors (`embeddings.word_embeddings.weight`,
//! `encoder.layer.{i}.attention.self.query.weight`, ...), with or without a `bert.` prefix.

use std::collections::HashMap;
use std::sync::Mutex;

use candle_core::{DType, Tensor};

use super::fused::{self, ResidualLayerNorm, TextRows};
use super::Pooling;

/// The parts of `config.json` the forward pass reads.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct BertConfig {
    /// Width of every hidden state (384 for MiniLM-L6).
    pub hidden_size: usize,
    /// Transformer blocks.
    pub num_hidden_layers: usize,
    /// Attention heads per block.
    pub num_attention_heads: usize,
    /// Width of the feed-forward layer.
    pub intermediate_size: usize,
    /// Positions the model has embeddings for.
    pub max_position_embeddings: usize,
    /// LayerNorm's epsilon.
    #[serde(default = "default_layer_norm_eps")]
    pub layer_norm_eps: f64,
    /// Only `gelu` (exact) is supported.
    #[serde(default = "default_hidden_act")]
    pub hidden_act: String,
    /// Only `absolute` is supported.
    #[serde(default = "default_position_embedding_type")]
    pub position_embedding_type: String,
    /// `bert` (checked, so another architecture is refused rather than run wrongly).
    #[serde(default)]
    pub model_type: Option<String>,
}

impl BertConfig {
    /// Checks the sizes before anything is allocated from them: each within what an encoder of
    /// this kind can have (a config asking for 10^9 layers is refused, not allocated), and
    /// `layer_norm_eps` a small positive number.
    fn check_sizes(&self) -> Result<(), String> {
        let bounded = |name: &str, value: usize, most: usize| {
            if value == 0 || value > most {
                Err(format!("{name} is {value}; it must be in 1..={most}"))
            } else {
                Ok(())
            }
        };
        bounded("hidden_size", self.hidden_size, 1 << 16)?;
        bounded("num_hidden_layers", self.num_hidden_layers, 1 << 10)?;
        bounded("num_attention_heads", self.num_attention_heads, 1 << 10)?;
        bounded("intermediate_size", self.intermediate_size, 1 << 18)?;
        bounded(
            "max_position_embeddings",
            self.max_position_embeddings,
            1 << 20,
        )?;
        let eps = self.layer_norm_eps;
        if !(eps.is_finite() && eps > 0.0 && eps < 1.0 && (eps as f32) > 0.0) {
            return Err(format!(
                "layer_norm_eps is {eps}; it must be a small positive number (e.g. 1e-12)"
            ));
        }
        Ok(())
    }
}

fn default_layer_norm_eps() -> f64 {
    1e-12
}
fn default_hidden_act() -> String {
    "gelu".into()
}
fn default_position_embedding_type() -> String {
    "absolute".into()
}

/// A dense layer `x Wᵀ + b`. The weight is kept transposed (inputs × outputs, row-major), the
/// layout the matrix product reads along its rows; the bias is added by the fused operation
/// that follows the product.
struct Dense {
    weight_t: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

impl Dense {
    /// `out = input Wᵀ` for `rows` rows (`input`: rows × inputs, `out`: rows × outputs).
    fn product(&self, input: &[f32], rows: usize, out: &mut [f32]) {
        assert!(
            input.len() >= rows * self.inputs && out.len() >= rows * self.outputs,
            "dense: {} and {} values for {rows} rows of {} → {}",
            input.len(),
            out.len(),
            self.inputs,
            self.outputs
        );
        if rows == 0 {
            return;
        }
        // SAFETY: the three matrices lie inside their slices (asserted above), row-major with
        // the strides given; `out` is written, not read (`read_dst` false).
        unsafe {
            gemm::gemm(
                rows,
                self.outputs,
                self.inputs,
                out.as_mut_ptr(),
                1,
                self.outputs as isize,
                false,
                input.as_ptr(),
                1,
                self.inputs as isize,
                self.weight_t.as_ptr(),
                1,
                self.outputs as isize,
                0.0,
                1.0,
                false,
                false,
                false,
                fused::parallelism(),
            );
        }
    }
}

struct Block {
    /// Query, key and value projections in one (hidden → 3·hidden) layer: one matrix product.
    qkv: Dense,
    attention_output: Dense,
    /// LayerNorm of the attention output's bias and residual.
    attention_norm: ResidualLayerNorm,
    intermediate: Dense,
    output: Dense,
    /// LayerNorm of the output's bias and residual.
    output_norm: ResidualLayerNorm,
}

/// The buffers of one forward pass, grown to the largest batch seen and reused: the hidden
/// states, the wide products (query-key-value, then the intermediate layer), the attention
/// context and the attention block's output.
#[derive(Default)]
struct Workspace {
    states: Vec<f32>,
    wide: Vec<f32>,
    context: Vec<f32>,
    attended: Vec<f32>,
}

/// The first `len` values of `buffer`, growing it when it is shorter.
fn sized(buffer: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if buffer.len() < len {
        buffer.resize(len, 0.0);
    }
    &mut buffer[..len]
}

/// A loaded BERT encoder.
pub struct Bert {
    /// vocabulary × hidden.
    word_embeddings: Vec<f32>,
    /// max_positions × hidden.
    position_embeddings: Vec<f32>,
    /// LayerNorm of word + token type 0 (as its bias) + position (as its residual).
    embeddings_norm: ResidualLayerNorm,
    blocks: Vec<Block>,
    heads: usize,
    hidden: usize,
    vocabulary: usize,
    /// The longest sequence the position embeddings allow.
    pub max_positions: usize,
    /// Workspaces not in use (one per concurrent forward pass).
    workspaces: Mutex<Vec<Workspace>>,
}

/// Reads named tensors out of a loaded safetensors map, with the names' optional `bert.` prefix.
struct Weights {
    tensors: HashMap<String, Tensor>,
    prefix: &'static str,
}

impl Weights {
    /// The tensor called `name` (after the prefix), with its full key for messages.
    fn tensor(&self, name: &str) -> Result<(&Tensor, String), String> {
        let key = format!("{}{name}", self.prefix);
        match self.tensors.get(&key) {
            Some(tensor) => Ok((tensor, key)),
            None => Err(format!("tensor {key:?} is missing")),
        }
    }

    /// The values of a tensor of shape `shape`, as f32, row-major.
    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let (tensor, key) = self.tensor(name)?;
        if tensor.dims() != shape {
            return Err(format!(
                "tensor {key:?} has shape {:?}, the config implies {shape:?}",
                tensor.dims()
            ));
        }
        // Weights are floating point; an integer tensor converted would load as nonsense
        // weights without a word.
        if !matches!(
            tensor.dtype(),
            DType::F32 | DType::F16 | DType::BF16 | DType::F64
        ) {
            return Err(format!(
                "tensor {key:?} is stored as {:?}; weights must be floating point (F32, F16, BF16 or F64)",
                tensor.dtype()
            ));
        }
        let values = tensor
            .to_dtype(DType::F32)
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(|e| format!("tensor {key:?}: {e}"))?;
        // A NaN or infinite weight would turn every vector it touches into NaN.
        if let Some(at) = values.iter().position(|v| !v.is_finite()) {
            return Err(format!(
                "tensor {key:?} holds a value that is not finite (at flat index {at})"
            ));
        }
        Ok(values)
    }

    /// The number of rows of a table (vocabularies differ between models).
    fn rows(&self, name: &str) -> Result<usize, String> {
        Ok(self.tensor(name)?.0.dims().first().copied().unwrap_or(0))
    }

    /// The weights of a dense layer (stored outputs × inputs), and its bias.
    fn dense(
        &self,
        name: &str,
        outputs: usize,
        inputs: usize,
    ) -> Result<(Vec<f32>, Vec<f32>), String> {
        Ok((
            self.get(&format!("{name}.weight"), &[outputs, inputs])?,
            self.get(&format!("{name}.bias"), &[outputs])?,
        ))
    }

    fn norm(&self, name: &str, width: usize) -> Result<(Vec<f32>, Vec<f32>), String> {
        // Early BERT checkpoints call the LayerNorm parameters gamma and beta.
        match self.get(&format!("{name}.weight"), &[width]) {
            Ok(weight) => Ok((weight, self.get(&format!("{name}.bias"), &[width])?)),
            Err(first) => Ok((
                self.get(&format!("{name}.gamma"), &[width])
                    .map_err(|_| first)?,
                self.get(&format!("{name}.beta"), &[width])?,
            )),
        }
    }
}

/// A dense layer from its stored (outputs × inputs) weight and its bias.
fn dense_layer(weight: &[f32], bias: Vec<f32>, inputs: usize) -> Dense {
    let outputs = bias.len();
    let mut weight_t = vec![0f32; inputs * outputs];
    for (output, row) in weight.chunks_exact(inputs).enumerate() {
        for (input, &w) in row.iter().enumerate() {
            weight_t[input * outputs + output] = w;
        }
    }
    Dense {
        weight_t,
        bias,
        inputs,
        outputs,
    }
}

impl Bert {
    /// Builds the encoder from `config` and the tensors of a safetensors file. Errors say which
    /// tensor is missing or has the wrong shape, or which config value is unsupported.
    pub(crate) fn new(
        config: &BertConfig,
        tensors: HashMap<String, Tensor>,
    ) -> Result<Self, String> {
        if let Some(kind) = &config.model_type
            && kind != "bert"
        {
            return Err(format!(
                "model_type {kind:?} is not supported (only \"bert\")"
            ));
        }
        if config.hidden_act != "gelu" {
            return Err(format!(
                "hidden_act {:?} is not supported (only \"gelu\")",
                config.hidden_act
            ));
        }
        if config.position_embedding_type != "absolute" {
            return Err(format!(
                "position_embedding_type {:?} is not supported (only \"absolute\")",
                config.position_embedding_type
            ));
        }
        config.check_sizes()?;
        let hidden = config.hidden_size;
        let heads = config.num_attention_heads;
        if !hidden.is_multiple_of(heads) {
            return Err(format!(
                "hidden_size {hidden} is not a multiple of num_attention_heads {heads}"
            ));
        }
        let prefix = if tensors.contains_key("embeddings.word_embeddings.weight") {
            ""
        } else {
            "bert."
        };
        let weights = Weights { tensors, prefix };
        let vocabulary = weights.rows("embeddings.word_embeddings.weight")?;
        let word_embeddings =
            weights.get("embeddings.word_embeddings.weight", &[vocabulary, hidden])?;
        let position_embeddings = weights.get(
            "embeddings.position_embeddings.weight",
            &[config.max_position_embeddings, hidden],
        )?;
        let token_types = weights.rows("embeddings.token_type_embeddings.weight")?;
        if token_types == 0 {
            return Err("tensor \"embeddings.token_type_embeddings.weight\" has no rows".into());
        }
        let mut token_type_row = weights.get(
            "embeddings.token_type_embeddings.weight",
            &[token_types, hidden],
        )?;
        token_type_row.truncate(hidden);
        let eps = config.layer_norm_eps as f32;
        let residual_norm = |name: &str, bias: &[f32]| -> Result<ResidualLayerNorm, String> {
            let (gamma, beta) = weights.norm(name, hidden)?;
            Ok(ResidualLayerNorm {
                bias: bias.to_vec(),
                gamma,
                beta,
                eps,
            })
        };
        let embeddings_norm = residual_norm("embeddings.LayerNorm", &token_type_row)?;
        let mut blocks = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let at = |part: &str| format!("encoder.layer.{i}.{part}");
            let mut qkv_weight = Vec::with_capacity(3 * hidden * hidden);
            let mut qkv_bias = Vec::with_capacity(3 * hidden);
            for part in ["query", "key", "value"] {
                let (weight, bias) =
                    weights.dense(&at(&format!("attention.self.{part}")), hidden, hidden)?;
                qkv_weight.extend(weight);
                qkv_bias.extend(bias);
            }
            let (weight, bias) = weights.dense(&at("attention.output.dense"), hidden, hidden)?;
            let attention_output = dense_layer(&weight, bias, hidden);
            let (weight, bias) =
                weights.dense(&at("intermediate.dense"), config.intermediate_size, hidden)?;
            let intermediate = dense_layer(&weight, bias, hidden);
            let (weight, bias) =
                weights.dense(&at("output.dense"), hidden, config.intermediate_size)?;
            let output = dense_layer(&weight, bias, config.intermediate_size);
            blocks.push(Block {
                qkv: dense_layer(&qkv_weight, qkv_bias, hidden),
                attention_norm: residual_norm(
                    &at("attention.output.LayerNorm"),
                    &attention_output.bias,
                )?,
                attention_output,
                intermediate,
                output_norm: residual_norm(&at("output.LayerNorm"), &output.bias)?,
                output,
            });
        }
        Ok(Bert {
            word_embeddings,
            position_embeddings,
            embeddings_norm,
            blocks,
            heads,
            hidden,
            vocabulary,
            max_positions: config.max_position_embeddings,
            workspaces: Mutex::new(Vec::new()),
        })
    }

    /// One vector per text of token ids (`[CLS]` .. `[SEP]`, at most `max_positions` read):
    /// the last hidden states pooled, then L2-normalised when `normalize`. An id outside the
    /// vocabulary is an error.
    pub fn embed(
        &self,
        texts: &[&[u32]],
        pooling: Pooling,
        normalize: bool,
    ) -> Result<Vec<Vec<f32>>, String> {
        let mut rows = 0;
        let spans: Vec<TextRows> = texts
            .iter()
            .map(|ids| {
                let span = TextRows {
                    first: rows,
                    length: ids.len().min(self.max_positions),
                };
                rows += span.length;
                span
            })
            .collect();
        if let Some(&id) = texts
            .iter()
            .flat_map(|ids| ids.iter())
            .find(|&&id| id as usize >= self.vocabulary)
        {
            return Err(format!(
                "token id {id} is outside the model's vocabulary of {}",
                self.vocabulary
            ));
        }
        let pool = || self.workspaces.lock().unwrap_or_else(|p| p.into_inner());
        let mut workspace = pool().pop().unwrap_or_default();
        let states = self.encode(texts, &spans, rows, &mut workspace);
        let vectors = spans
            .iter()
            .map(|span| {
                let mut vector = pool_text(states, *span, self.hidden, pooling);
                if normalize {
                    l2_normalize(&mut vector);
                }
                vector
            })
            .collect();
        pool().push(workspace);
        Ok(vectors)
    }

    /// The last hidden states of a packed batch (`rows × hidden`, in `workspace`).
    fn encode<'w>(
        &self,
        texts: &[&[u32]],
        spans: &[TextRows],
        rows: usize,
        workspace: &'w mut Workspace,
    ) -> &'w [f32] {
        let hidden = self.hidden;
        let Workspace {
            states,
            wide,
            context,
            attended,
        } = workspace;
        let states = sized(states, rows * hidden);
        // Embeddings: word rows in `states`, position rows in `attended` as the residual of
        // the LayerNorm whose bias is token type 0's row.
        let positions = sized(attended, rows * hidden);
        for (ids, span) in texts.iter().zip(spans) {
            for (position, &id) in ids.iter().take(span.length).enumerate() {
                let row = (span.first + position) * hidden;
                states[row..row + hidden]
                    .copy_from_slice(&self.word_embeddings[id as usize * hidden..][..hidden]);
                positions[row..row + hidden]
                    .copy_from_slice(&self.position_embeddings[position * hidden..][..hidden]);
            }
        }
        fused::residual_layer_norm(states, positions, &self.embeddings_norm);
        for block in &self.blocks {
            let qkv = sized(wide, rows * block.qkv.outputs);
            block.qkv.product(states, rows, qkv);
            let context = sized(context, rows * hidden);
            fused::attention(qkv, context, spans, &block.qkv.bias, self.heads, hidden);
            let attended = sized(attended, rows * hidden);
            block.attention_output.product(context, rows, attended);
            fused::residual_layer_norm(attended, states, &block.attention_norm);
            let inner = sized(wide, rows * block.intermediate.outputs);
            block.intermediate.product(attended, rows, inner);
            fused::bias_gelu(inner, &block.intermediate.bias);
            block.output.product(inner, rows, states);
            fused::residual_layer_norm(states, attended, &block.output_norm);
        }
        states
    }
}

/// One text's vector from its rows of the hidden states: the mean of its tokens' states
/// (sentence-transformers' mean pooling, the count clamped to 1e-9, so no tokens gives zeros)
/// or its `[CLS]` state.
fn pool_text(states: &[f32], span: TextRows, hidden: usize, pooling: Pooling) -> Vec<f32> {
    let rows = &states[span.first * hidden..(span.first + span.length) * hidden];
    match pooling {
        Pooling::Mean => {
            let mut sum = vec![0f32; hidden];
            for row in rows.chunks_exact(hidden) {
                for (s, &v) in sum.iter_mut().zip(row) {
                    *s += v;
                }
            }
            let count = (span.length as f32).max(1e-9);
            for s in &mut sum {
                *s /= count;
            }
            sum
        }
        Pooling::Cls => rows
            .get(..hidden)
            .map_or_else(|| vec![0f32; hidden], <[f32]>::to_vec),
    }
}

/// The vector divided by its L2 norm, the norm clamped to 1e-12 (`torch.nn.functional.normalize`).
fn l2_normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
    for v in vector {
        *v /= norm;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A two-layer BERT of width 8 with pseudo-random weights (no model files needed).
    #[test]
    fn config_sizes_are_checked_before_anything_is_allocated() {
        let config = |key: &str, value: serde_json::Value| -> BertConfig {
            let mut base = serde_json::json!({"hidden_size": 8, "num_hidden_layers": 2,
                "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 16});
            if !key.is_empty() {
                base[key] = value;
            }
            serde_json::from_value(base).unwrap()
        };
        assert!(config("", serde_json::Value::Null).check_sizes().is_ok());
        let refused = |key: &str, value: serde_json::Value, says: &str| {
            let e = config(key, value).check_sizes().unwrap_err();
            assert!(e.contains(says), "{key}: {e}");
        };
        refused(
            "num_hidden_layers",
            1_000_000_000u64.into(),
            "num_hidden_layers is 1000000000",
        );
        refused(
            "num_hidden_layers",
            u64::MAX.into(),
            "num_hidden_layers is 18446744073709551615",
        );
        refused("hidden_size", 0.into(), "hidden_size is 0");
        refused("num_attention_heads", 0.into(), "num_attention_heads is 0");
        refused(
            "layer_norm_eps",
            (-1e-12).into(),
            "layer_norm_eps is -0.000000000001",
        );
        refused("layer_norm_eps", 1e-300.into(), "layer_norm_eps");
        let e = Bert::new(&config("num_attention_heads", 3.into()), HashMap::new())
            .err()
            .unwrap();
        assert!(e.contains("not a multiple of num_attention_heads 3"), "{e}");
    }

    fn tiny_bert() -> Bert {
        let (config, tensors) = tiny_parts();
        Bert::new(&config, tensors).unwrap()
    }

    /// An integer tensor where a weight belongs is refused by name and dtype, not converted.
    #[test]
    fn integer_weights_are_refused_naming_the_tensor() {
        let (config, mut tensors) = tiny_parts();
        let ints = Tensor::from_vec(vec![1i64; 8], &[8], &candle_core::Device::Cpu).unwrap();
        tensors.insert("embeddings.LayerNorm.bias".into(), ints);
        let e = Bert::new(&config, tensors).err().unwrap();
        assert!(
            e.contains("embeddings.LayerNorm.bias")
                && e.contains("I64")
                && e.contains("floating point"),
            "{e}"
        );
    }

    fn tiny_parts() -> (BertConfig, HashMap<String, Tensor>) {
        let config = BertConfig {
            hidden_size: 8,
            num_hidden_layers: 2,
            num_attention_heads: 2,
            intermediate_size: 16,
            max_position_embeddings: 12,
            layer_norm_eps: 1e-12,
            hidden_act: "gelu".into(),
            position_embedding_type: "absolute".into(),
            model_type: Some("bert".into()),
        };
        let mut state = 7u64;
        let mut tensors = HashMap::new();
        let mut add = |name: String, shape: &[usize]| {
            let values: Vec<f32> = (0..shape.iter().product::<usize>())
                .map(|_| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
                })
                .collect();
            let tensor = Tensor::from_vec(values, shape, &candle_core::Device::Cpu).unwrap();
            tensors.insert(name, tensor);
        };
        add("embeddings.word_embeddings.weight".into(), &[20, 8]);
        add("embeddings.position_embeddings.weight".into(), &[12, 8]);
        add("embeddings.token_type_embeddings.weight".into(), &[2, 8]);
        for part in ["weight", "bias"] {
            add(format!("embeddings.LayerNorm.{part}"), &[8]);
        }
        for i in 0..2 {
            let layer = format!("encoder.layer.{i}");
            for (name, outputs, inputs) in [
                ("attention.self.query", 8, 8),
                ("attention.self.key", 8, 8),
                ("attention.self.value", 8, 8),
                ("attention.output.dense", 8, 8),
                ("intermediate.dense", 16, 8),
                ("output.dense", 8, 16),
            ] {
                add(format!("{layer}.{name}.weight"), &[outputs, inputs]);
                add(format!("{layer}.{name}.bias"), &[outputs]);
            }
            for norm in ["attention.output.LayerNorm", "output.LayerNorm"] {
                add(format!("{layer}.{norm}.weight"), &[8]);
                add(format!("{layer}.{norm}.bias"), &[8]);
            }
        }
        (config, tensors)
    }

    #[test]
    fn a_text_embeds_the_same_alone_and_packed_with_others() {
        let bert = tiny_bert();
        let texts: [&[u32]; 4] = [
            &[1, 5, 9, 2],
            &[1, 3, 2],
            &[1, 7, 7, 7, 7, 7, 4, 2],
            &[1, 2],
        ];
        for pooling in [Pooling::Mean, Pooling::Cls] {
            let packed = bert.embed(&texts, pooling, true).unwrap();
            assert_eq!(packed.len(), 4);
            for (text, vector) in texts.iter().zip(&packed) {
                let alone = bert.embed(&[text], pooling, true).unwrap().remove(0);
                assert_eq!(vector.len(), 8);
                let norm: f32 = vector.iter().map(|v| v * v).sum();
                assert!((norm - 1.0).abs() < 1e-5, "normalised: {norm}");
                for (a, b) in vector.iter().zip(&alone) {
                    assert!((a - b).abs() < 1e-6, "{text:?}: {a} packed, {b} alone");
                }
            }
            // Texts differ, so their vectors do (the packing does not mix rows of texts).
            assert!(packed[0]
                .iter()
                .zip(&packed[1])
                .any(|(a, b)| (a - b).abs() > 1e-3));
        }
        // A larger batch after a smaller one reuses and grows the same workspace.
        let many: Vec<&[u32]> = texts.iter().cycle().take(40).copied().collect();
        let vectors = bert.embed(&many, Pooling::Mean, false).unwrap();
        let first = bert.embed(&texts, Pooling::Mean, false).unwrap();
        for (i, vector) in vectors.iter().enumerate() {
            for (a, b) in vector.iter().zip(&first[i % 4]) {
                assert!((a - b).abs() < 1e-6);
            }
        }
    }

    #[test]
    fn empty_texts_out_of_range_ids_and_long_texts() {
        let bert = tiny_bert();
        // No tokens: mean pooling gives zeros (the count is clamped), as sentence-transformers.
        let vectors = bert.embed(&[&[], &[1, 2]], Pooling::Mean, false).unwrap();
        assert_eq!(vectors[0], vec![0.0; 8]);
        assert!(vectors[1].iter().any(|v| *v != 0.0));
        assert!(bert.embed(&[], Pooling::Mean, true).unwrap().is_empty());
        let error = bert.embed(&[&[1, 20, 2]], Pooling::Mean, true).unwrap_err();
        assert!(
            error.contains("token id 20") && error.contains("vocabulary of 20"),
            "{error}"
        );
        // Past the position table only the first max_positions tokens are read.
        let long: Vec<u32> = (0..30).map(|i| 1 + i % 19).collect();
        let cut = bert.embed(&[&long], Pooling::Mean, false).unwrap();
        let first = bert.embed(&[&long[..12]], Pooling::Mean, false).unwrap();
        assert_eq!(cut, first);
    }
}
