//! Model shapes: what a forward pass reads and computes, from the sizes a
//! Hugging Face `config.json` gives (a built-in short list of popular models, or
//! a config the user hands over). Dense and mixture-of-experts models, grouped-query
//! attention and DeepSeek's multi-head latent attention (MLA).

/// Multi-head latent attention (DeepSeek-V2/V3): the KV cache holds one
/// compressed latent and a shared rope key per token and layer, whatever the heads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mla {
    pub kv_lora_rank: u64,
    /// 0: queries are projected directly (no low-rank query).
    pub q_lora_rank: u64,
    pub qk_nope_head_dim: u64,
    pub qk_rope_head_dim: u64,
    pub v_head_dim: u64,
}

/// Mixture of experts: `experts` routed experts per MoE layer, `per_token` of them per token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moe {
    pub experts: u64,
    pub per_token: u64,
    /// Each routed expert's intermediate size.
    pub intermediate: u64,
    /// Experts every token goes through (DeepSeek's shared experts), of `intermediate` each.
    pub shared_experts: u64,
    /// A shared expert of its own size (Qwen2-MoE's `shared_expert_intermediate_size`).
    pub shared_intermediate: u64,
    /// The first layers that are dense (DeepSeek's `first_k_dense_replace`).
    pub dense_layers: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    pub name: String,
    pub layers: u64,
    pub hidden: u64,
    pub heads: u64,
    pub kv_heads: u64,
    pub head_dim: u64,
    /// The dense MLP's intermediate size (dense layers of a MoE too).
    pub intermediate: u64,
    pub vocab: u64,
    pub tied_embeddings: bool,
    pub mla: Option<Mla>,
    pub moe: Option<Moe>,
    /// The checkpoint's weight format (`bf16`, `fp8`, `mxfp4`, `int4`).
    pub weight_dtype: &'static str,
}

/// Bytes per value of a dtype as engines name it (`auto` and unknown: 2,
/// BF16/FP16). MXFP4 and NVFP4 carry a scale per block of 32 and 16 values.
pub fn dtype_bytes(dtype: &str) -> f64 {
    let d = dtype.to_ascii_lowercase();
    let d = d.trim_start_matches("torch.");
    if d.contains("mxfp4") {
        4.25 / 8.0
    } else if d.contains("nvfp4") || d.contains("fp4") {
        4.5 / 8.0
    } else if d.contains("fp8") || d.contains("int8") || d.contains("w8a8") || d == "e4m3" {
        1.0
    } else if ["int4", "awq", "gptq", "w4a16", "bitsandbytes", "bnb"]
        .iter()
        .any(|k| d.contains(k))
    {
        0.5
    } else if d.contains("float32") || d == "fp32" {
        4.0
    } else {
        2.0
    }
}

impl Shape {
    fn attention_params(&self) -> f64 {
        let h = self.hidden as f64;
        match self.mla {
            Some(m) => {
                let heads = self.heads as f64;
                let qk = (m.qk_nope_head_dim + m.qk_rope_head_dim) as f64;
                let q = if m.q_lora_rank > 0 {
                    h * m.q_lora_rank as f64 + m.q_lora_rank as f64 * heads * qk
                } else {
                    h * heads * qk
                };
                let kv_a = h * (m.kv_lora_rank + m.qk_rope_head_dim) as f64;
                let kv_b =
                    m.kv_lora_rank as f64 * heads * (m.qk_nope_head_dim + m.v_head_dim) as f64;
                let o = heads * m.v_head_dim as f64 * h;
                q + kv_a + kv_b + o
            }
            None => {
                let q = (self.heads * self.head_dim) as f64;
                let kv = (self.kv_heads * self.head_dim) as f64;
                h * q * 2.0 + h * kv * 2.0
            }
        }
    }

    fn mlp(&self, intermediate: u64) -> f64 {
        // Gated MLP (SwiGLU): gate, up and down projections.
        3.0 * self.hidden as f64 * intermediate as f64
    }

    /// Parameters of one routed expert.
    pub fn expert_params(&self) -> f64 {
        self.moe.map_or(0.0, |m| self.mlp(m.intermediate))
    }

    /// Routed experts' parameters in all MoE layers (0 for a dense model).
    pub fn routed_params(&self) -> f64 {
        self.moe.map_or(0.0, |m| {
            (self.layers - m.dense_layers.min(self.layers)) as f64
                * m.experts as f64
                * self.expert_params()
        })
    }

    /// Every parameter but the routed experts': attention, dense and shared MLPs,
    /// routers, norms, the output head (and the input embedding, when `embedding`).
    pub fn dense_params(&self, embedding: bool) -> f64 {
        let h = self.hidden as f64;
        let layers = self.layers as f64;
        let per_layer_mlp = match self.moe {
            None => layers * self.mlp(self.intermediate),
            Some(m) => {
                let dense = m.dense_layers.min(self.layers) as f64;
                let moe = layers - dense;
                dense * self.mlp(self.intermediate)
                    + moe
                        * (h * m.experts as f64
                            + m.shared_experts as f64 * self.mlp(m.intermediate)
                            + self.mlp(m.shared_intermediate))
            }
        };
        let head = self.vocab as f64 * h;
        let embed = if embedding && !self.tied_embeddings {
            head
        } else {
            0.0
        };
        layers * (self.attention_params() + 2.0 * h) + per_layer_mlp + head + embed
    }

    pub fn total_params(&self) -> f64 {
        self.dense_params(true) + self.routed_params()
    }

    /// Parameters a token goes through: the dense part and `per_token` experts per MoE layer.
    pub fn active_params(&self) -> f64 {
        let routed = self.moe.map_or(0.0, |m| {
            (self.layers - m.dense_layers.min(self.layers)) as f64
                * m.per_token as f64
                * self.expert_params()
        });
        self.dense_params(false) + routed
    }

    /// Weight bytes of the whole model in `dtype`. MXFP4 checkpoints (gpt-oss)
    /// quantize only the experts; the rest stays BF16.
    pub fn weight_bytes(&self, dtype: &str, embedding: bool) -> (f64, f64) {
        let b = dtype_bytes(dtype);
        let dense_b = if dtype.to_ascii_lowercase().contains("mxfp4") && self.moe.is_some() {
            2.0
        } else {
            b
        };
        (
            self.dense_params(embedding) * dense_b,
            self.routed_params() * b,
        )
    }

    /// KV-cache values per token over all layers, summed over heads: K and V
    /// for each KV head, or MLA's latent and rope key.
    pub fn kv_values_per_token(&self) -> f64 {
        match self.mla {
            Some(m) => (self.layers * (m.kv_lora_rank + m.qk_rope_head_dim)) as f64,
            None => (2 * self.layers * self.kv_heads * self.head_dim) as f64,
        }
    }

    /// KV bytes per token each GPU of a `tp`-way tensor-parallel group holds: KV
    /// heads are split across it (a head is copied where there are fewer heads
    /// than GPUs), MLA's latent is copied to every GPU.
    pub fn kv_bytes_per_token_per_gpu(&self, kv_dtype: &str, tp: u64) -> f64 {
        let b = dtype_bytes(kv_dtype);
        match self.mla {
            Some(_) => self.kv_values_per_token() * b,
            None => {
                let tp = tp.max(1);
                let heads_per_gpu = self.kv_heads.div_ceil(tp).max(1);
                (2 * self.layers * heads_per_gpu * self.head_dim) as f64 * b
            }
        }
    }

    /// Attention FLOPs of one prompt token at position `pos`: its query against
    /// `pos` keys and values (QKᵀ and AV, two FLOPs a multiply-add).
    pub fn attention_flops_per_token(&self, pos: f64) -> f64 {
        let (qk, v) = match self.mla {
            Some(m) => (
                (m.qk_nope_head_dim + m.qk_rope_head_dim) as f64,
                m.v_head_dim as f64,
            ),
            None => (self.head_dim as f64, self.head_dim as f64),
        };
        2.0 * self.layers as f64 * self.heads as f64 * (qk + v) * pos
    }
}

struct Builtin {
    /// Squashed names (letters and digits, lower case) a model path may contain.
    keys: &'static [&'static str],
    shape: fn() -> Shape,
}

#[allow(clippy::too_many_arguments)]
fn dense(
    name: &str,
    layers: u64,
    hidden: u64,
    heads: u64,
    kv_heads: u64,
    head_dim: u64,
    intermediate: u64,
    vocab: u64,
) -> Shape {
    Shape {
        name: name.to_string(),
        layers,
        hidden,
        heads,
        kv_heads,
        head_dim,
        intermediate,
        vocab,
        tied_embeddings: false,
        mla: None,
        moe: None,
        weight_dtype: "bf16",
    }
}

fn moe(mut s: Shape, experts: u64, per_token: u64, intermediate: u64) -> Shape {
    s.moe = Some(Moe {
        experts,
        per_token,
        intermediate,
        shared_experts: 0,
        shared_intermediate: 0,
        dense_layers: 0,
    });
    s
}

fn deepseek_v3(name: &str) -> Shape {
    Shape {
        name: name.to_string(),
        layers: 61,
        hidden: 7168,
        heads: 128,
        kv_heads: 128,
        head_dim: 128,
        intermediate: 18432,
        vocab: 129280,
        tied_embeddings: false,
        mla: Some(Mla {
            kv_lora_rank: 512,
            q_lora_rank: 1536,
            qk_nope_head_dim: 128,
            qk_rope_head_dim: 64,
            v_head_dim: 128,
        }),
        moe: Some(Moe {
            experts: 256,
            per_token: 8,
            intermediate: 2048,
            shared_experts: 1,
            shared_intermediate: 0,
            dense_layers: 3,
        }),
        weight_dtype: "fp8",
    }
}

fn gpt_oss(name: &str, layers: u64, experts: u64) -> Shape {
    let mut s = moe(
        dense(name, layers, 2880, 64, 8, 64, 2880, 201088),
        experts,
        4,
        2880,
    );
    s.weight_dtype = "mxfp4";
    s
}

/// The built-in models, from their Hugging Face `config.json`s.
#[rustfmt::skip]
const BUILTINS: &[Builtin] = &[
    Builtin { keys: &["llama318b", "llama38b", "metallama318b", "llama3.18b"], shape: || dense("Llama-3.1-8B", 32, 4096, 32, 8, 128, 14336, 128256) },
    Builtin { keys: &["llama3170b", "llama3370b", "llama370b"], shape: || dense("Llama-3.1-70B", 80, 8192, 64, 8, 128, 28672, 128256) },
    Builtin { keys: &["llama31405b", "llama3405b"], shape: || dense("Llama-3.1-405B", 126, 16384, 128, 8, 128, 53248, 128256) },
    Builtin { keys: &["qwen257b"], shape: || dense("Qwen2.5-7B", 28, 3584, 28, 4, 128, 18944, 152064) },
    Builtin { keys: &["qwen2532b"], shape: || dense("Qwen2.5-32B", 64, 5120, 40, 8, 128, 27648, 152064) },
    Builtin { keys: &["qwen2572b"], shape: || dense("Qwen2.5-72B", 80, 8192, 64, 8, 128, 29568, 152064) },
    Builtin { keys: &["qwen38b"], shape: || dense("Qwen3-8B", 36, 4096, 32, 8, 128, 12288, 151936) },
    Builtin { keys: &["qwen332b"], shape: || dense("Qwen3-32B", 64, 5120, 64, 8, 128, 25600, 151936) },
    Builtin { keys: &["qwen330ba3b"], shape: || moe(dense("Qwen3-30B-A3B", 48, 2048, 32, 4, 128, 6144, 151936), 128, 8, 768) },
    Builtin { keys: &["qwen3235ba22b"], shape: || moe(dense("Qwen3-235B-A22B", 94, 4096, 64, 4, 128, 12288, 151936), 128, 8, 1536) },
    Builtin { keys: &["deepseekv3", "deepseekr1"], shape: || deepseek_v3("DeepSeek-V3") },
    Builtin { keys: &["mixtral8x7b"], shape: || moe(dense("Mixtral-8x7B", 32, 4096, 32, 8, 128, 14336, 32000), 8, 2, 14336) },
    Builtin { keys: &["gptoss120b"], shape: || gpt_oss("gpt-oss-120b", 36, 128) },
    Builtin { keys: &["gptoss20b"], shape: || gpt_oss("gpt-oss-20b", 24, 32) },
];

/// The built-in models' names, for lists and messages.
pub fn builtin_names() -> Vec<String> {
    BUILTINS.iter().map(|b| (b.shape)().name).collect()
}

/// The built-in model a name or a model path names (`Llama-3.1-8B`,
/// `/models/meta-llama/Llama-3.1-8B-Instruct`, `deepseek-ai/DeepSeek-R1-0528`):
/// the longest built-in name the path's last part contains. A name that says the
/// checkpoint is quantized (`-FP8`, `-AWQ`) sets its weight dtype.
pub fn builtin(path: &str) -> Option<Shape> {
    let last = path
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path);
    let k = crate::model::hardware::squash(last);
    let (_, b) = BUILTINS
        .iter()
        .flat_map(|b| b.keys.iter().map(move |key| (key, b)))
        .filter(|(key, _)| k.contains(&crate::model::hardware::squash(key)))
        .max_by_key(|(key, _)| key.len())?;
    let mut s = (b.shape)();
    if let Some(d) = quantization_in_name(&k) {
        s.weight_dtype = d;
    }
    Some(s)
}

fn quantization_in_name(k: &str) -> Option<&'static str> {
    if k.contains("mxfp4") {
        Some("mxfp4")
    } else if k.contains("nvfp4") || k.contains("fp4") {
        Some("nvfp4")
    } else if k.contains("fp8") || k.contains("w8a8") || k.contains("int8") {
        Some("fp8")
    } else if ["awq", "gptq", "int4", "w4a16", "bnb4bit"]
        .iter()
        .any(|q| k.contains(q))
    {
        Some("int4")
    } else {
        None
    }
}

/// A Hugging Face `config.json`, dense or MoE, GQA or MLA; a multimodal config's
/// `text_config`. Err says which required size is missing.
pub fn from_config_json(text: &str) -> Result<Shape, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not a JSON config: {e}"))?;
    let top = &v;
    let v = v
        .get("text_config")
        .filter(|t| t.is_object())
        .unwrap_or(top);
    let u = |k: &str| {
        v.get(k)
            .and_then(|x| x.as_u64())
            .or_else(|| top.get(k).and_then(|x| x.as_u64()))
    };
    let need = |k: &str| {
        u(k).filter(|n| *n > 0)
            .ok_or_else(|| format!("config.json has no `{k}`"))
    };
    let layers = need("num_hidden_layers")?;
    let hidden = need("hidden_size")?;
    let heads = need("num_attention_heads")?;
    let kv_heads = u("num_key_value_heads").filter(|n| *n > 0).unwrap_or(heads);
    // MLA's heads have their own sizes; its `head_dim` (for the rope part, where
    // given) is not the value head's.
    let head_dim = match u("kv_lora_rank").filter(|n| *n > 0) {
        Some(_) => u("v_head_dim").unwrap_or(hidden / heads),
        None => u("head_dim").filter(|n| *n > 0).unwrap_or(hidden / heads),
    };
    let intermediate = u("intermediate_size").unwrap_or(4 * hidden);
    let vocab = u("vocab_size").unwrap_or(0);
    let tied = v
        .get("tie_word_embeddings")
        .or_else(|| top.get("tie_word_embeddings"))
        .and_then(|x| x.as_bool())
        .unwrap_or(false);
    let mla = u("kv_lora_rank")
        .filter(|n| *n > 0)
        .map(|kv_lora_rank| Mla {
            kv_lora_rank,
            q_lora_rank: u("q_lora_rank").unwrap_or(0),
            qk_nope_head_dim: u("qk_nope_head_dim").unwrap_or(head_dim),
            qk_rope_head_dim: u("qk_rope_head_dim").unwrap_or(0),
            v_head_dim: u("v_head_dim").unwrap_or(head_dim),
        });
    let experts = u("n_routed_experts")
        .or_else(|| u("num_local_experts"))
        .or_else(|| u("num_experts"))
        .filter(|n| *n > 1);
    let moe = experts.map(|experts| Moe {
        experts,
        per_token: u("num_experts_per_tok")
            .or_else(|| u("experts_per_token"))
            .or_else(|| u("moe_topk"))
            .unwrap_or(2)
            .clamp(1, experts),
        intermediate: u("moe_intermediate_size").unwrap_or(intermediate),
        shared_experts: u("n_shared_experts").unwrap_or(0),
        shared_intermediate: u("shared_expert_intermediate_size").unwrap_or(0),
        dense_layers: u("first_k_dense_replace").unwrap_or(0),
    });
    let q = v
        .get("quantization_config")
        .or_else(|| top.get("quantization_config"));
    let method = q
        .and_then(|q| q.get("quant_method"))
        .and_then(|m| m.as_str())
        .map(str::to_ascii_lowercase);
    let bits = q.and_then(|q| q.get("bits")).and_then(|b| b.as_u64());
    let weight_dtype = match (method.as_deref(), bits) {
        (Some(m), _) if m.contains("mxfp4") => "mxfp4",
        (Some(m), _) if m.contains("fp8") => "fp8",
        (Some(m), _) if m.contains("fp4") => "nvfp4",
        (Some(_), Some(8)) => "int8",
        (Some(_), Some(b)) if b <= 4 => "int4",
        (Some("awq" | "gptq" | "bitsandbytes"), _) => "int4",
        _ => "bf16",
    };
    let name = top
        .get("_name_or_path")
        .and_then(|n| n.as_str())
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .or_else(|| {
            top.get("architectures")
                .and_then(|a| a.get(0))
                .and_then(|a| a.as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| "config.json".to_string());
    Ok(Shape {
        name,
        layers,
        hidden,
        heads,
        kv_heads,
        head_dim,
        intermediate,
        vocab,
        tied_embeddings: tied,
        mla,
        moe,
        weight_dtype,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_8b_has_8_billion_parameters_and_128_kib_of_kv_per_token() {
        let s = builtin("meta-llama/Llama-3.1-8B-Instruct").unwrap();
        assert_eq!(s.name, "Llama-3.1-8B");
        // 32 × (attention 41.9 M + MLP 176.2 M + norms) + 2 × 525.3 M embeddings.
        assert!(
            (s.total_params() / 1e9 - 8.03).abs() < 0.01,
            "{}",
            s.total_params()
        );
        assert_eq!(s.kv_bytes_per_token_per_gpu("auto", 1), 131072.0);
        assert_eq!(s.kv_bytes_per_token_per_gpu("fp8_e4m3", 2), 32768.0);
        // 8 KV heads over 16 GPUs: each GPU keeps a copy of one.
        assert_eq!(s.kv_bytes_per_token_per_gpu("auto", 16), 16384.0);
    }

    #[test]
    fn deepseek_v3_counts_671_billion_parameters_37_active_and_a_latent_kv() {
        let s = builtin("deepseek-ai/DeepSeek-R1-0528").unwrap();
        assert_eq!(s.weight_dtype, "fp8");
        assert!(
            (s.total_params() / 1e9 - 671.0).abs() < 3.0,
            "{}",
            s.total_params()
        );
        assert!(
            (s.active_params() / 1e9 - 37.0).abs() < 1.5,
            "{}",
            s.active_params()
        );
        // 61 layers × (512 + 64) values × 2 bytes, on every GPU of the group.
        assert_eq!(s.kv_bytes_per_token_per_gpu("bf16", 8), 70272.0);
    }

    #[test]
    fn model_paths_pick_the_longest_builtin_name_and_the_quantization_they_state() {
        assert_eq!(
            builtin("/models/Qwen2.5-72B-Instruct-AWQ").unwrap().name,
            "Qwen2.5-72B"
        );
        assert_eq!(
            builtin("/models/Qwen2.5-72B-Instruct-AWQ")
                .unwrap()
                .weight_dtype,
            "int4"
        );
        assert_eq!(
            builtin("Qwen/Qwen2.5-7B-Instruct").unwrap().name,
            "Qwen2.5-7B"
        );
        assert_eq!(
            builtin("RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8")
                .unwrap()
                .weight_dtype,
            "fp8"
        );
        assert_eq!(
            builtin("mistralai/Mixtral-8x7B-Instruct-v0.1")
                .unwrap()
                .moe
                .unwrap()
                .experts,
            8
        );
        assert!(builtin("facebook/opt-125m").is_none());
        for n in builtin_names() {
            assert_eq!(builtin(&n).map(|s| s.name), Some(n));
        }
    }

    #[test]
    fn a_config_json_reads_dense_moe_and_mla_shapes() {
        let llama = r#"{"architectures":["LlamaForCausalLM"],"hidden_size":4096,"intermediate_size":14336,
            "num_attention_heads":32,"num_hidden_layers":32,"num_key_value_heads":8,"vocab_size":128256,
            "tie_word_embeddings":false,"torch_dtype":"bfloat16"}"#;
        let s = from_config_json(llama).unwrap();
        let b = builtin("llama-3.1-8b").unwrap();
        assert_eq!(
            (s.layers, s.head_dim, s.total_params()),
            (b.layers, b.head_dim, b.total_params())
        );
        let ds = r#"{"_name_or_path":"deepseek-ai/DeepSeek-V3","hidden_size":7168,"intermediate_size":18432,
            "moe_intermediate_size":2048,"n_routed_experts":256,"n_shared_experts":1,"num_experts_per_tok":8,
            "first_k_dense_replace":3,"num_attention_heads":128,"num_key_value_heads":128,"num_hidden_layers":61,
            "kv_lora_rank":512,"q_lora_rank":1536,"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,
            "vocab_size":129280,"quantization_config":{"quant_method":"fp8","fmt":"e4m3"}}"#;
        let s = from_config_json(ds).unwrap();
        let mut b = builtin("deepseek-v3").unwrap();
        b.name = s.name.clone();
        assert_eq!(s, b);
        assert!(from_config_json(r#"{"hidden_size":10}"#)
            .unwrap_err()
            .contains("num_hidden_layers"));
        assert!(from_config_json("not json").is_err());
    }
}
