//! The BERT encoder of a sentence-embedding model, on candle's CPU tensors: embeddings (word +
//! position + token type 0, then LayerNorm), `layers` post-norm transformer blocks (multi-head
//! self-attention with the padding masked out, exact-erf GELU feed-forward), as Hugging Face's
//! `BertModel` computes them in inference, in f32.
//!
//! Weight names are those of `BertModel`'s safetensors (`embeddings.word_embeddings.weight`,
//! `encoder.layer.{i}.attention.self.query.weight`, ...), with or without a `bert.` prefix.

use std::collections::HashMap;

use candle_core::{DType, Device, Tensor, D};

use super::fused::{Attention, BiasGelu, ResidualLayerNorm};

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

fn default_layer_norm_eps() -> f64 {
    1e-12
}
fn default_hidden_act() -> String {
    "gelu".into()
}
fn default_position_embedding_type() -> String {
    "absolute".into()
}

/// A dense layer `x Wᵀ + b`, the weight kept as stored (out × in) and used transposed. The
/// bias is also kept as values for the fused operations that add it.
struct Dense {
    weight_t: Tensor,
    bias: Tensor,
    bias_values: Vec<f32>,
}

impl Dense {
    /// `x Wᵀ` without the bias (a fused operation adds it).
    fn product(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        x.matmul(&self.weight_t)
    }
}

struct LayerNorm {
    weight: Tensor,
    bias: Tensor,
    eps: f32,
}

impl LayerNorm {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        candle_nn::ops::layer_norm(x, &self.weight, &self.bias, self.eps)
    }

    /// The fused `LayerNorm(product + dense.bias + residual)` of a block, prepared at load.
    fn after(&self, dense: &Dense) -> Result<ResidualLayerNorm, String> {
        Ok(ResidualLayerNorm {
            bias: dense.bias_values.clone(),
            gamma: self.weight.to_vec1().map_err(s)?,
            beta: self.bias.to_vec1().map_err(s)?,
            eps: self.eps,
        })
    }
}

struct Block {
    /// Query, key and value projections in one (3·hidden × hidden) weight: one matrix product.
    qkv: Dense,
    attention_output: Dense,
    /// LayerNorm of the attention output's bias and residual.
    attention_norm: ResidualLayerNorm,
    intermediate: Dense,
    /// The intermediate layer's bias and GELU.
    gelu: BiasGelu,
    output: Dense,
    /// LayerNorm of the output's bias and residual.
    output_norm: ResidualLayerNorm,
}

/// A loaded BERT encoder.
pub struct Bert {
    word_embeddings: Tensor,
    position_embeddings: Tensor,
    token_type_row: Tensor,
    embeddings_norm: LayerNorm,
    blocks: Vec<Block>,
    heads: usize,
    hidden: usize,
    /// The longest sequence the position embeddings allow.
    pub max_positions: usize,
}

/// Reads named tensors out of a loaded safetensors map, with the names' optional `bert.` prefix.
struct Weights {
    tensors: HashMap<String, Tensor>,
    prefix: &'static str,
}

impl Weights {
    fn get(&self, name: &str, shape: &[usize]) -> Result<Tensor, String> {
        let key = format!("{}{name}", self.prefix);
        let tensor = self
            .tensors
            .get(&key)
            .ok_or_else(|| format!("tensor {key:?} is missing"))?;
        if tensor.dims() != shape {
            return Err(format!(
                "tensor {key:?} has shape {:?}, the config implies {shape:?}",
                tensor.dims()
            ));
        }
        tensor
            .to_dtype(DType::F32)
            .map_err(|e| format!("tensor {key:?}: {e}"))
    }

    fn dense(&self, name: &str, out: usize, inp: usize) -> Result<Dense, String> {
        let bias = self.get(&format!("{name}.bias"), &[out])?;
        Ok(Dense {
            weight_t: self
                .get(&format!("{name}.weight"), &[out, inp])?
                .t()
                .map_err(s)?,
            bias_values: bias.to_vec1().map_err(s)?,
            bias,
        })
    }

    fn norm(&self, name: &str, width: usize, eps: f64) -> Result<LayerNorm, String> {
        // Early BERT checkpoints call the LayerNorm parameters gamma and beta.
        let (weight, bias) = match self.get(&format!("{name}.weight"), &[width]) {
            Ok(weight) => (weight, self.get(&format!("{name}.bias"), &[width])?),
            Err(first) => (
                self.get(&format!("{name}.gamma"), &[width])
                    .map_err(|_| first)?,
                self.get(&format!("{name}.beta"), &[width])?,
            ),
        };
        Ok(LayerNorm {
            weight,
            bias,
            eps: eps as f32,
        })
    }
}

fn s(e: candle_core::Error) -> String {
    e.to_string()
}

impl Bert {
    /// Builds the encoder from `config` and the tensors of a safetensors file. Errors say which
    /// tensor is missing or has the wrong shape, or which config value is unsupported.
    pub fn new(config: &BertConfig, tensors: HashMap<String, Tensor>) -> Result<Self, String> {
        if let Some(kind) = &config.model_type {
            if kind != "bert" {
                return Err(format!(
                    "model_type {kind:?} is not supported (only \"bert\")"
                ));
            }
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
        let hidden = config.hidden_size;
        let heads = config.num_attention_heads;
        if heads == 0 || hidden == 0 || !hidden.is_multiple_of(heads) {
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
        let word_embeddings = weights.get_any_rows("embeddings.word_embeddings.weight", hidden)?;
        let position_embeddings = weights.get(
            "embeddings.position_embeddings.weight",
            &[config.max_position_embeddings, hidden],
        )?;
        let token_type_row = weights
            .get_any_rows("embeddings.token_type_embeddings.weight", hidden)?
            .narrow(0, 0, 1)
            .map_err(s)?;
        let eps = config.layer_norm_eps;
        let embeddings_norm = weights.norm("embeddings.LayerNorm", hidden, eps)?;
        let mut blocks = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let at = |part: &str| format!("encoder.layer.{i}.{part}");
            let q = weights.dense(&at("attention.self.query"), hidden, hidden)?;
            let k = weights.dense(&at("attention.self.key"), hidden, hidden)?;
            let v = weights.dense(&at("attention.self.value"), hidden, hidden)?;
            let bias = Tensor::cat(&[&q.bias, &k.bias, &v.bias], 0).map_err(s)?;
            let qkv = Dense {
                weight_t: Tensor::cat(&[&q.weight_t, &k.weight_t, &v.weight_t], 1).map_err(s)?,
                bias_values: bias.to_vec1().map_err(s)?,
                bias,
            };
            let attention_output = weights.dense(&at("attention.output.dense"), hidden, hidden)?;
            let intermediate =
                weights.dense(&at("intermediate.dense"), config.intermediate_size, hidden)?;
            let output = weights.dense(&at("output.dense"), hidden, config.intermediate_size)?;
            blocks.push(Block {
                qkv,
                attention_norm: weights
                    .norm(&at("attention.output.LayerNorm"), hidden, eps)?
                    .after(&attention_output)?,
                attention_output,
                gelu: BiasGelu {
                    bias: intermediate.bias_values.clone(),
                },
                intermediate,
                output_norm: weights
                    .norm(&at("output.LayerNorm"), hidden, eps)?
                    .after(&output)?,
                output,
            });
        }
        Ok(Bert {
            word_embeddings,
            position_embeddings,
            token_type_row,
            embeddings_norm,
            blocks,
            heads,
            hidden,
            max_positions: config.max_position_embeddings,
        })
    }

    /// The last hidden states of a batch (`batch × length × hidden`). `ids` and `mask` are
    /// `batch × length`, row-major; `mask` is 1 for a token and 0 for padding.
    pub fn forward(
        &self,
        ids: Vec<u32>,
        mask: &[f32],
        batch: usize,
        length: usize,
    ) -> candle_core::Result<Tensor> {
        let device = Device::Cpu;
        let hidden = self.hidden;
        let ids = Tensor::from_vec(ids, batch * length, &device)?;
        let words = self.word_embeddings.index_select(&ids, 0)?;
        let positions = self.position_embeddings.narrow(0, 0, length)?;
        let mut x = words
            .reshape((batch, length, hidden))?
            .broadcast_add(&positions)?
            .broadcast_add(&self.token_type_row)?;
        x = self.embeddings_norm.forward(&x)?;
        // Padding gets the most negative f32 added to its attention scores, as BertModel does,
        // so its softmax weight is exactly 0.
        let mask_bias: Vec<f32> = mask
            .iter()
            .map(|&m| if m > 0.0 { 0.0 } else { f32::MIN })
            .collect();
        let rows = batch * length;
        for block in &self.blocks {
            let flat = x.reshape((rows, hidden))?;
            let attention = Attention {
                mask: &mask_bias,
                bias: &block.qkv.bias_values,
                batch,
                length,
                heads: self.heads,
                hidden,
            };
            let context = block.qkv.product(&flat)?.apply_op1_no_bwd(&attention)?;
            let attended = block
                .attention_output
                .product(&context)?
                .apply_op2_no_bwd(&flat, &block.attention_norm)?;
            let inner = block
                .intermediate
                .product(&attended)?
                .apply_op1_no_bwd(&block.gelu)?;
            x = block
                .output
                .product(&inner)?
                .apply_op2_no_bwd(&attended, &block.output_norm)?
                .reshape((batch, length, hidden))?;
        }
        Ok(x)
    }
}

impl Weights {
    /// A 2-D table of any number of rows of width `width` (vocabularies differ between models).
    fn get_any_rows(&self, name: &str, width: usize) -> Result<Tensor, String> {
        let key = format!("{}{name}", self.prefix);
        let rows = self
            .tensors
            .get(&key)
            .ok_or_else(|| format!("tensor {key:?} is missing"))?
            .dims()
            .first()
            .copied()
            .unwrap_or(0);
        self.get(name, &[rows, width])
    }
}

/// Mean of the token states where `mask` is 1 (sentence-transformers' mean pooling: the sum
/// divided by the token count clamped to 1e-9), one row per text.
pub fn mean_pool(
    states: &Tensor,
    mask: &[f32],
    batch: usize,
    length: usize,
) -> candle_core::Result<Tensor> {
    let mask = Tensor::from_vec(mask.to_vec(), (batch, length, 1), &Device::Cpu)?;
    let summed = states.broadcast_mul(&mask)?.sum(1)?;
    let counts = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?;
    summed.broadcast_div(&counts)
}

/// The `[CLS]` state of each text (CLS pooling).
pub fn cls_pool(states: &Tensor) -> candle_core::Result<Tensor> {
    states.narrow(1, 0, 1)?.squeeze(1)
}

/// Each row divided by its L2 norm, the norm clamped to 1e-12 (`torch.nn.functional.normalize`).
pub fn l2_normalize(rows: &Tensor) -> candle_core::Result<Tensor> {
    let norms = rows
        .sqr()?
        .sum_keepdim(D::Minus1)?
        .sqrt()?
        .clamp(1e-12f32, f32::MAX)?;
    rows.broadcast_div(&norms)
}
