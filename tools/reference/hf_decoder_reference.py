"""An independent float64 reference for attnscope's decoder families: llama (Llama 2/3/3.1/3.2,
TinyLlama, SmolLM), mistral, qwen2, qwen3, gemma2, gemma3_text, smollm3, olmo2, gpt_neox and phi3.

Written after Hugging Face transformers' modeling_llama.py, modeling_mistral.py, modeling_qwen2.py,
modeling_qwen3.py, modeling_gemma2.py, modeling_gemma3.py, modular_smollm3.py and
configuration_smollm3.py, modular_olmo2.py, configuration_gpt_neox.py and modular_gpt_neox.py,
configuration_phi3.py and modeling_phi3.py, modeling_rope_utils.py and masking_utils.py (eager attention, the path that returns attention
weights), in plain PyTorch
without any attnscope code. One class per concept, the family differences spelled out where HF
spells them. Run with /usr/bin/python3 (Debian's python3-torch).
"""
import json
import math
import os

import torch
import torch.nn.functional as F

from safetensors_np import read_safetensors


# ---- weights ------------------------------------------------------------------------------------

def read_checkpoint(folder):
    """name -> (float32 numpy array, dtype) for model.safetensors or its shards."""
    index = os.path.join(folder, "model.safetensors.index.json")
    files = ["model.safetensors"]
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    tensors = {}
    for name in files:
        tensors.update(read_safetensors(os.path.join(folder, name)))
    return tensors


def file_dtype(folder):
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    return {"float32": torch.float32, "float16": torch.float16,
            "bfloat16": torch.bfloat16}[cfg.get("torch_dtype", "float32")]


# ---- rope (modeling_rope_utils.py) --------------------------------------------------------------

def rope_inv_freq(head_dim, base, scaling):
    """inv_freq of the default rule, then the rope_scaling rule ("linear", "llama3")."""
    inv = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    if not scaling:
        return inv
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind == "default":
        return inv
    if kind == "linear":
        return inv / scaling["factor"]
    if kind == "llama3":
        factor = scaling["factor"]
        low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
        old_len = scaling["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old_len / low, old_len / high
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > low_wavelen, inv / factor, inv)
        smooth = (old_len / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
        return torch.where(medium, smoothed, scaled)
    raise ValueError(f"rope_scaling {kind} not in the reference")


def longrope_inv_freq(dim, base, scaling, max_positions, original):
    """modeling_rope_utils.py _compute_longrope_parameters: the short and the long frequencies
    1 / (ext_factor[i] · base^(2i/dim)) and the attention factor that multiplies cos and sin (given,
    else sqrt(1 + ln(factor) / ln(original)) with factor given, else max / original; 1 when
    factor <= 1)."""
    exponent = torch.arange(0, dim, 2, dtype=torch.float64) / dim
    short_factor = torch.tensor(scaling["short_factor"], dtype=torch.float64)
    long_factor = torch.tensor(scaling["long_factor"], dtype=torch.float64)
    assert short_factor.shape[0] == dim // 2 and long_factor.shape[0] == dim // 2
    factor = scaling.get("factor") or max_positions / original
    attention = scaling.get("attention_factor")
    if attention is None:
        attention = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))
    return 1.0 / (short_factor * base ** exponent), 1.0 / (long_factor * base ** exponent), attention


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rope(x, inv_freq, positions, attention_factor=None):
    """x [heads, n, dh]; HF's cos/sin of cat(freqs, freqs) over the first 2·len(inv_freq)
    dimensions, the rest passed through (partial rotary: modular_gpt_neox.py apply_rotary_pos_emb's
    q_rot / q_pass); LongRoPE multiplies cos and sin by its attention factor
    (Phi3RotaryEmbedding.forward's attention_scaling)."""
    freqs = positions[:, None].to(torch.float64) * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    if attention_factor is not None:
        cos, sin = cos * attention_factor, sin * attention_factor
    rot = emb.shape[-1]
    x_rot, x_pass = x[..., :rot], x[..., rot:]
    rotated = x_rot * cos.to(x.dtype) + rotate_half(x_rot) * sin.to(x.dtype)
    return torch.cat((rotated, x_pass), dim=-1)


# ---- the description each family's config maps to ----------------------------------------------

class Spec:
    def __init__(self, cfg):
        self.kind = cfg["model_type"]
        # Gemma 3's multimodal checkpoints run their text model (text_config_of flattened it).
        t = "gemma3_text" if self.kind == "gemma3" else self.kind
        self.layers = cfg["num_hidden_layers"]
        self.hidden = cfg["hidden_size"]
        self.heads = cfg["num_attention_heads"]
        self.kv_heads = cfg.get("num_key_value_heads") or self.heads
        self.head_dim = cfg.get("head_dim") or self.hidden // self.heads
        # Phi-3 (configuration_phi3.py, modeling_phi3.py): Llama's layers with one qkv_proj (rows
        # q | k | v) and one gate_up_proj (rows gate | up), never a bias, RMSNorm eps 1e-5 by default,
        # partial rotary and LongRoPE, a sliding window on every layer when the config sets one.
        self.phi3 = t == "phi3"
        self.eps = cfg.get("layer_norm_eps", 1e-5) if t == "gpt_neox" else cfg.get(
            "rms_norm_eps", 1e-5 if self.phi3 else 1e-6)
        self.gemma = t in ("gemma2", "gemma3_text")
        self.qk_norm = t in ("qwen3", "gemma3_text")
        # OLMo 2 (modular_olmo2.py): no norm before attention or the MLP, RMSNorm on their outputs;
        # q and k normed over the whole projection before the split into heads.
        self.olmo2 = t == "olmo2"
        # GPT-NeoX (configuration_gpt_neox.py, modular_gpt_neox.py): LayerNorms with biases, one
        # query_key_value per head, a plain GELU MLP with biases, attention and MLP in parallel,
        # rotary on the first rotary_pct of each head.
        self.neox = t == "gpt_neox"
        self.layer_norm = self.neox
        self.parallel = self.neox and cfg.get("use_parallel_residual", True)
        self.qkv_bias = t == "qwen2" or cfg.get("attention_bias", self.neox)
        self.o_bias = cfg.get("attention_bias", self.neox) and t != "qwen2"
        self.mlp_bias = self.neox or cfg.get("mlp_bias", False)
        if self.phi3:  # Phi3Attention and Phi3MLP build no bias whatever the config says
            self.qkv_bias = self.o_bias = self.mlp_bias = False
        act = cfg.get("hidden_activation") or cfg.get("hidden_act", "gelu" if self.neox else "silu")
        self.act = act
        self.tied = cfg.get("tie_word_embeddings", self.gemma)
        self.scale = (cfg["query_pre_attn_scalar"] ** -0.5) if self.gemma else self.head_dim ** -0.5
        self.attn_softcap = cfg.get("attn_logit_softcapping") if t == "gemma2" else None
        self.final_softcap = cfg.get("final_logit_softcapping") if self.gemma else None
        # transformers 5 keeps both in rope_parameters.
        params = cfg.get("rope_parameters") or {}
        base = cfg.get("rope_theta", params.get("rope_theta", 10000.0))
        scaling = cfg.get("rope_scaling") or (params or None)
        rotary = self.head_dim
        if self.neox:  # GPTNeoXAttention.rotary_ndims = int(head_size * rotary_pct)
            base = params.get("rope_theta", cfg.get("rotary_emb_base", 10000.0))
            rotary = int(self.head_dim * params.get("partial_rotary_factor", cfg.get("rotary_pct", 0.25)))
        self.rope_layers = [True] * self.layers  # SmolLM3 sets its NoPE layers below
        # LongRoPE (Phi-3): the long frequencies for a sequence longer than original_max_position_
        # embeddings, cos and sin times attention_factor.
        self.long_inv_freq, self.original_max, self.attention_factor = None, None, None
        if self.phi3:
            # Phi3Config.convert_rope_params_to_dict: rope_scaling (or rope_parameters), "su" and
            # "yarn" renamed longrope; rotary dims int(head_dim * partial_rotary_factor).
            partial = params.get("partial_rotary_factor", cfg.get("partial_rotary_factor", 1.0))
            rotary = int(self.head_dim * partial)
            kind = (scaling or {}).get("rope_type", (scaling or {}).get("type", "default"))
            if kind in ("su", "yarn", "longrope"):
                self.original_max = (scaling.get("original_max_position_embeddings")
                                     or cfg.get("original_max_position_embeddings", 4096))
                short, self.long_inv_freq, self.attention_factor = longrope_inv_freq(
                    rotary, base, scaling, cfg["max_position_embeddings"], self.original_max)
                scaling = None
        self.global_inv_freq = rope_inv_freq(rotary, base, scaling)
        if self.long_inv_freq is not None:
            self.global_inv_freq = short
        self.local_inv_freq = self.global_inv_freq
        # Which layers look through a sliding window, and how wide it is.
        window = cfg.get("sliding_window")
        if t in ("mistral", "phi3"):
            self.windows = [window] * self.layers
        elif t in ("qwen2", "qwen3"):
            types = cfg.get("layer_types") or [
                "sliding_attention" if cfg.get("use_sliding_window") and i >= cfg.get("max_window_layers", 0)
                else "full_attention" for i in range(self.layers)]
            self.windows = [window if ty == "sliding_attention" else None for ty in types]
        elif t == "gemma2":
            types = cfg.get("layer_types") or [
                "sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(self.layers)]
            self.windows = [window if ty == "sliding_attention" else None for ty in types]
        elif t == "gemma3_text":
            pattern = cfg.get("sliding_window_pattern", 6)
            types = cfg.get("layer_types") or [
                "sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(self.layers)]
            self.windows = [window if ty == "sliding_attention" else None for ty in types]
            # Local layers: rope_local_base_freq without scaling (Gemma3's rotary_emb_local).
            self.local_inv_freq = rope_inv_freq(self.head_dim, cfg.get("rope_local_base_freq", 10000.0), None)
        elif t == "smollm3":
            # configuration_smollm3.py: no_rope_layers[i] = 1 rotates layer i (default: all but
            # every no_rope_layer_interval-th); sliding only with use_sliding_window, on the
            # layer_types it names (default: the NoPE layers).
            self.rope_layers = [bool(v) for v in (cfg.get("no_rope_layers") or [
                int((i + 1) % cfg.get("no_rope_layer_interval", 4) != 0) for i in range(self.layers)])][:self.layers]
            types = cfg.get("layer_types") or [
                "sliding_attention" if cfg.get("use_sliding_window") and window is not None and not self.rope_layers[i]
                else "full_attention" for i in range(self.layers)]
            use = cfg.get("use_sliding_window", False)
            self.windows = [window if use and ty == "sliding_attention" else None for ty in types]
        else:
            self.windows = [None] * self.layers


class Names:
    """Where a family's checkpoint keeps its tensors: LlamaForCausalLM's model.layers.N.self_attn.*
    and mlp.{gate,up,down}_proj, or GPTNeoXForCausalLM's gpt_neox.layers.N.attention.* and
    mlp.dense_* (GPTNeoXModel saves them without the gpt_neox. prefix)."""

    def __init__(self, spec, tensors):
        if spec.neox:
            t = "gpt_neox." if "gpt_neox.embed_in.weight" in tensors else ""
            self.embed, self.final_norm, self.lm_head = t + "embed_in.weight", t + "final_layer_norm", "embed_out.weight"
            self.prefix = t + "layers."
            self.o = "attention.dense"
            self.input_norm, self.mlp_norm = "input_layernorm", "post_attention_layernorm"
        else:
            self.embed, self.final_norm, self.lm_head = "model.embed_tokens.weight", "model.norm", "lm_head.weight"
            self.prefix = "model.layers."
            self.o = "self_attn.o_proj"
            self.input_norm, self.mlp_norm = "input_layernorm", "post_attention_layernorm"

    def layer(self, l):
        return f"{self.prefix}{l}."


def phi3_inv_freq(spec, n):
    """The frequencies of a sequence of n tokens: LongRoPE's long ones when n outgrows
    original_max_position_embeddings (dynamic_rope_update's longrope_frequency_update with seq_len =
    max(position_ids) + 1 = n for a whole sequence), the short (or only) ones otherwise."""
    if spec.long_inv_freq is not None and n > spec.original_max:
        return spec.long_inv_freq
    return spec.global_inv_freq


def rms_norm(x, w, eps, gemma):
    """Llama: w * normed; Gemma: normed * (1 + w). Both normalise by the root mean square."""
    normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return normed * (1.0 + w) if gemma else w * normed


def activation(name, x):
    if name == "silu":
        return F.silu(x)
    if name in ("gelu_pytorch_tanh", "gelu_new", "gelu_fast"):
        return F.gelu(x, approximate="tanh")
    if name == "gelu":
        return F.gelu(x)
    raise ValueError(name)


def attention_mask(n, window, past=0):
    """True where key j is visible to query i (masking_utils: causal, and within the window:
    j > i - window)."""
    q = torch.arange(past, past + n)[:, None]
    k = torch.arange(0, past + n)[None, :]
    visible = k <= q
    if window is not None:
        visible &= k > q - window
    return visible


# ---- Gemma 3: sparse configs and the multimodal checkpoints --------------------------------------

# Gemma3TextConfig.__init__'s defaults (configuration_gemma3.py): the released configs name only
# what differs (gemma-3-4b's text_config: five keys).
GEMMA3_TEXT_DEFAULTS = {
    "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
    "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 131072, "rms_norm_eps": 1e-6,
    "pad_token_id": 0, "eos_token_id": 1, "bos_token_id": 2, "tie_word_embeddings": True,
    "rope_theta": 1000000.0, "attention_bias": False, "query_pre_attn_scalar": 256, "sliding_window": 4096,
    "final_logit_softcapping": None, "attn_logit_softcapping": None, "rope_scaling": None,
    "rope_local_base_freq": 10000.0, "sliding_window_pattern": 6,
}


def text_config_of(cfg):
    """The config the text model runs on: config.json itself; a gemma3_text one with
    Gemma3TextConfig's defaults filled in; for Gemma3ForConditionalGeneration (model_type "gemma3",
    Gemma3Config) its text_config so filled, kept under model_type "gemma3", with the top level's
    bos/eos ids where it sets them (GenerationConfig.from_model_config reads the top level first,
    the text config for what it leaves unset) and no final softcap
    (Gemma3ForConditionalGeneration.forward applies none; modeling_gemma3.py)."""
    t = cfg.get("model_type")
    if t == "gemma3_text":
        return {**GEMMA3_TEXT_DEFAULTS, **cfg}
    if t != "gemma3":
        return cfg
    text = {**GEMMA3_TEXT_DEFAULTS, **(cfg.get("text_config") or {})}
    for key in ("bos_token_id", "eos_token_id"):
        if cfg.get(key) is not None:
            text[key] = cfg[key]
    text["model_type"] = "gemma3"
    text["final_logit_softcapping"] = None
    return text


def text_model_tensors(tensors):
    """A Gemma3ForConditionalGeneration checkpoint's text model under Gemma3ForCausalLM's names:
    modeling_gemma3.py's _checkpoint_conversion_mapping takes the released "language_model.model."
    to transformers 5's "model.language_model." and "language_model.lm_head" to "lm_head"; both
    become "model." here. The vision tower and the projector are dropped."""
    out = {}
    for name, value in tensors.items():
        for old, new in (("language_model.model.", "model."), ("model.language_model.", "model."),
                         ("language_model.lm_head.", "lm_head.")):
            if name.startswith(old):
                out[new + name[len(old):]] = value
                break
        else:
            if name.startswith("lm_head."):
                out[name] = value
    return out


class DecoderReference:
    def __init__(self, folder, compute_dtype=torch.float64):
        """compute_dtype float64 for golden data; bench/compare_pytorch.py times it in float32."""
        with open(os.path.join(folder, "config.json")) as f:
            self.cfg = text_config_of(json.load(f))
        self.spec = Spec(self.cfg)
        self.dtype = file_dtype(folder)
        self.compute_dtype = compute_dtype
        raw = read_checkpoint(folder)
        if self.cfg["model_type"] == "gemma3":
            raw = text_model_tensors(raw)
        self.names = Names(self.spec, raw)
        self.w = {}
        for k in list(raw):
            self.w[k] = torch.from_numpy(raw.pop(k)).to(compute_dtype)

    def get(self, name):
        return self.w[name]

    def linear(self, x, name, bias):
        y = x @ self.get(name + ".weight").T
        return y + self.get(name + ".bias") if bias else y

    def norm(self, x, name, gemma=None):
        """The family's norm of module `name`: RMSNorm (Gemma's (1 + w)), or LayerNorm with its bias
        (GPT-NeoX)."""
        s = self.spec
        if s.layer_norm:
            return F.layer_norm(x, (x.shape[-1],), self.get(name + ".weight"), self.get(name + ".bias"), s.eps)
        return rms_norm(x, self.get(name + ".weight"), s.eps, s.gemma if gemma is None else gemma)

    def qkv(self, h, p):
        """q [heads, n, dh], k and v [kv_heads, n, dh] of the normed input h [n, d]; OLMo 2 norms q
        and k over the whole projection first (Olmo2Attention.forward); GPT-NeoX splits one
        projection viewed [n, heads, 3·dh] (GPTNeoXAttention.forward)."""
        s = self.spec
        n = h.shape[0]
        if s.neox:
            qkv = self.linear(h, p + "attention.query_key_value", s.qkv_bias)
            qkv = qkv.view(n, s.heads, 3 * s.head_dim).transpose(0, 1)
            return qkv.chunk(3, dim=-1)
        if s.phi3:  # Phi3Attention.forward: one projection sliced at query_pos and after k
            qkv = self.linear(h, p + "self_attn.qkv_proj", False)
            query_pos, kv = s.heads * s.head_dim, s.kv_heads * s.head_dim
            q, k, v = qkv[:, :query_pos], qkv[:, query_pos:query_pos + kv], qkv[:, query_pos + kv:]
        else:
            q = self.linear(h, p + "self_attn.q_proj", s.qkv_bias)
            k = self.linear(h, p + "self_attn.k_proj", s.qkv_bias)
            v = self.linear(h, p + "self_attn.v_proj", s.qkv_bias)
        if s.olmo2:
            q = rms_norm(q, self.get(p + "self_attn.q_norm.weight"), s.eps, False)
            k = rms_norm(k, self.get(p + "self_attn.k_norm.weight"), s.eps, False)
        return (q.view(n, s.heads, s.head_dim).transpose(0, 1),
                k.view(n, s.kv_heads, s.head_dim).transpose(0, 1),
                v.view(n, s.kv_heads, s.head_dim).transpose(0, 1))

    def mlp(self, h, p):
        """down(act(gate(h)) · up(h)), or GPT-NeoX's dense_4h_to_h(act(dense_h_to_4h(h)))."""
        s = self.spec
        if s.neox:
            return self.linear(activation(s.act, self.linear(h, p + "mlp.dense_h_to_4h", True)),
                               p + "mlp.dense_4h_to_h", True)
        if s.phi3:  # Phi3MLP.forward: gate, up = gate_up_proj(h).chunk(2); up · act(gate)
            gate, up = self.linear(h, p + "mlp.gate_up_proj", False).chunk(2, dim=-1)
            return self.linear(up * activation(s.act, gate), p + "mlp.down_proj", False)
        m = activation(s.act, self.linear(h, p + "mlp.gate_proj", s.mlp_bias)) * \
            self.linear(h, p + "mlp.up_proj", s.mlp_bias)
        return self.linear(m, p + "mlp.down_proj", s.mlp_bias)

    def run(self, ids, scores_hook=None, softmax=None, ctx_hook=None):
        """The forward pass on `ids`, with optional hooks (intervention_reference.py): scores_hook(
        scores, layer) before the softmax, softmax(scores) instead of torch.softmax, ctx_hook(ctx,
        layer) on weights·V [heads, n, dh]. Returns attention [L][heads, n, n], rotated q [L][heads,
        n, dh] and k [L][kv_heads, n, dh], v [L][kv_heads, n, dh], ctx [L][heads, n, dh], residual
        [L + 1][n, d], attn_out [L][n, d] (the output projection with any bias, before a post-norm),
        mlp_out [L][n, d] (what the MLP adds, after any post-norm) and logits [n, V]."""
        s, names = self.spec, self.names
        n = len(ids)
        pos = torch.arange(n)
        x = self.get(names.embed)[torch.tensor(ids)]
        if s.gemma:
            # Gemma scales the embeddings by sqrt(hidden) in the weights' dtype (the normalizer is a
            # tensor of that dtype), so a bf16 checkpoint multiplies by the bf16-rounded value.
            x = x * torch.tensor(s.hidden ** 0.5, dtype=self.dtype).to(self.compute_dtype)
        out = {"attention": [], "q": [], "k": [], "v": [], "ctx": [], "residual": [x], "attn_out": [],
               "mlp_out": []}
        group = s.heads // s.kv_heads
        for l in range(s.layers):
            p = names.layer(l)
            h = x if s.olmo2 else self.norm(x, p + names.input_norm)
            q, k, v = self.qkv(h, p)
            if s.qk_norm:  # per head (Qwen3, Gemma 3)
                q = rms_norm(q, self.get(p + "self_attn.q_norm.weight"), s.eps, s.gemma)
                k = rms_norm(k, self.get(p + "self_attn.k_norm.weight"), s.eps, s.gemma)
            window = s.windows[l]
            inv_freq = s.local_inv_freq if window is not None else s.global_inv_freq
            if s.phi3:  # one rotary embedding for every layer, LongRoPE's by the length
                inv_freq = phi3_inv_freq(s, n)
            if s.rope_layers[l]:  # SmolLM3's NoPE layers rotate nothing
                q = apply_rope(q, inv_freq, pos, s.attention_factor)
                k = apply_rope(k, inv_freq, pos, s.attention_factor)
            out["q"].append(q)
            out["k"].append(k)
            out["v"].append(v)
            k_rep = k.repeat_interleave(group, dim=0)  # repeat_kv
            v_rep = v.repeat_interleave(group, dim=0)
            scores = q @ k_rep.transpose(-1, -2) * s.scale
            if s.attn_softcap is not None:
                scores = torch.tanh(scores / s.attn_softcap) * s.attn_softcap
            scores = scores.masked_fill(~attention_mask(n, window), float("-inf"))
            if scores_hook:
                scores = scores_hook(scores, l)
            weights = softmax(scores) if softmax else torch.softmax(scores, dim=-1)
            out["attention"].append(weights)
            ctx = weights @ v_rep
            if ctx_hook:
                ctx = ctx_hook(ctx, l)
            out["ctx"].append(ctx)
            a = self.linear(ctx.transpose(0, 1).reshape(n, s.heads * s.head_dim), p + names.o, s.o_bias)
            out["attn_out"].append(a)
            if s.parallel:  # x + attn(ln1(x)) + mlp(ln2(x)) (GPTNeoXLayer, use_parallel_residual)
                h = self.norm(x, p + names.mlp_norm)
                x = x + a
            elif s.gemma:
                x = x + rms_norm(a, self.get(p + "post_attention_layernorm.weight"), s.eps, True)
                h = rms_norm(x, self.get(p + "pre_feedforward_layernorm.weight"), s.eps, True)
            elif s.olmo2:
                x = x + rms_norm(a, self.get(p + "post_attention_layernorm.weight"), s.eps, False)
                h = x
            else:
                x = x + a
                h = self.norm(x, p + names.mlp_norm)
            m = self.mlp(h, p)
            if s.gemma or s.olmo2:
                m = rms_norm(m, self.get(p + "post_feedforward_layernorm.weight"), s.eps, s.gemma)
            x = x + m
            out["mlp_out"].append(m)
            out["residual"].append(x)
        out["logits"] = self.logits(x)
        return out

    def forward(self, ids, last_logits_only=False):
        """ids: list -> dict with attention [layer][head, n, n], logits [n, V] (or [1, V] for the
        last position only), rotated q per layer [heads, n, dh] and k per layer [kv_heads, n, dh]
        (what the scores multiply), and the rest of run()."""
        out = self.run(ids)
        if last_logits_only:
            out["logits"] = out["logits"][-1:]
        return out

    # -- the read-out pieces (the logit lens, direct logit attribution) --
    def final_norm(self, x):
        return self.norm(x, self.names.final_norm)

    def unembedding(self):
        """[V, d]: lm_head (embed_out), or the tied embedding."""
        return self.get(self.names.embed) if self.spec.tied else self.get(self.names.lm_head)

    def softcap(self, logits):
        c = self.spec.final_softcap
        return logits if c is None else torch.tanh(logits / c) * c

    def logits(self, x):
        """Residual [..., d] -> logits after the final norm, the unembedding and any final softcap."""
        return self.softcap(self.final_norm(x) @ self.unembedding().T)
