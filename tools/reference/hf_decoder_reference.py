"""An independent float64 reference for attnscope's decoder families: llama (Llama 2/3/3.1/3.2,
TinyLlama, SmolLM), mistral, qwen2, qwen3, gemma2, gemma3_text, smollm3 and olmo2.

Written after Hugging Face transformers' modeling_llama.py, modeling_mistral.py, modeling_qwen2.py,
modeling_qwen3.py, modeling_gemma2.py, modeling_gemma3.py, modular_smollm3.py and
configuration_smollm3.py, modular_olmo2.py, modeling_rope_utils.py and masking_utils.py (eager attention, the path that returns attention weights), in plain PyTorch
without any attnscope code. One class per concept, the family differences spelled out where HF
spells them. Run with /usr/bin/python3 (Debian's python3-torch).
"""
import json
import math
import os

import torch
import torch.nn.functional as F

from hf_reference import read_safetensors


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


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rope(x, inv_freq, positions):
    """x [heads, n, dh]; HF's cos/sin of cat(freqs, freqs)."""
    freqs = positions[:, None].to(torch.float64) * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return x * emb.cos().to(x.dtype) + rotate_half(x) * emb.sin().to(x.dtype)


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
        self.eps = cfg.get("rms_norm_eps", 1e-6)
        self.gemma = t in ("gemma2", "gemma3_text")
        self.qk_norm = t in ("qwen3", "gemma3_text")
        # OLMo 2 (modular_olmo2.py): no norm before attention or the MLP, RMSNorm on their outputs;
        # q and k normed over the whole projection before the split into heads.
        self.olmo2 = t == "olmo2"
        self.qkv_bias = t == "qwen2" or cfg.get("attention_bias", False)
        self.o_bias = cfg.get("attention_bias", False) and t != "qwen2"
        self.mlp_bias = cfg.get("mlp_bias", False)
        act = cfg.get("hidden_activation") or cfg.get("hidden_act", "silu")
        self.act = act
        self.tied = cfg.get("tie_word_embeddings", self.gemma)
        self.scale = (cfg["query_pre_attn_scalar"] ** -0.5) if self.gemma else self.head_dim ** -0.5
        self.attn_softcap = cfg.get("attn_logit_softcapping") if t == "gemma2" else None
        self.final_softcap = cfg.get("final_logit_softcapping") if self.gemma else None
        # transformers 5 keeps both in rope_parameters.
        params = cfg.get("rope_parameters") or {}
        base = cfg.get("rope_theta", params.get("rope_theta", 10000.0))
        scaling = cfg.get("rope_scaling") or (params or None)
        self.rope_layers = [True] * self.layers  # SmolLM3 sets its NoPE layers below
        self.global_inv_freq = rope_inv_freq(self.head_dim, base, scaling)
        self.local_inv_freq = self.global_inv_freq
        # Which layers look through a sliding window, and how wide it is.
        window = cfg.get("sliding_window")
        if t == "mistral":
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
        self.w = {}
        for k in list(raw):
            self.w[k] = torch.from_numpy(raw.pop(k)).to(compute_dtype)

    def get(self, name):
        return self.w[name]

    def linear(self, x, name, bias):
        y = x @ self.get(name + ".weight").T
        return y + self.get(name + ".bias") if bias else y

    def qkv(self, h, p):
        """q [heads, n, dh], k and v [kv_heads, n, dh] of the normed input h [n, d]; OLMo 2 norms q
        and k over the whole projection first (Olmo2Attention.forward)."""
        s = self.spec
        n = h.shape[0]
        q = self.linear(h, p + "self_attn.q_proj", s.qkv_bias)
        k = self.linear(h, p + "self_attn.k_proj", s.qkv_bias)
        v = self.linear(h, p + "self_attn.v_proj", s.qkv_bias)
        if s.olmo2:
            q = rms_norm(q, self.get(p + "self_attn.q_norm.weight"), s.eps, False)
            k = rms_norm(k, self.get(p + "self_attn.k_norm.weight"), s.eps, False)
        return (q.view(n, s.heads, s.head_dim).transpose(0, 1),
                k.view(n, s.kv_heads, s.head_dim).transpose(0, 1),
                v.view(n, s.kv_heads, s.head_dim).transpose(0, 1))

    def forward(self, ids, last_logits_only=False):
        """ids: list -> dict with attention [layer][head, n, n], logits [n, V] (or [1, V] for the
        last position only), rotated q per layer [heads, n, dh] and k per layer [kv_heads, n, dh]
        (what the scores multiply)."""
        s = self.spec
        n = len(ids)
        pos = torch.arange(n)
        x = self.get("model.embed_tokens.weight")[torch.tensor(ids)]
        if s.gemma:
            # Gemma scales the embeddings by sqrt(hidden) in the weights' dtype (the normalizer is a
            # tensor of that dtype), so a bf16 checkpoint multiplies by the bf16-rounded value.
            x = x * torch.tensor(s.hidden ** 0.5, dtype=self.dtype).to(self.compute_dtype)
        out = {"attention": [], "q": [], "k": []}
        group = s.heads // s.kv_heads
        for l in range(s.layers):
            p = f"model.layers.{l}."
            h = x if s.olmo2 else rms_norm(x, self.get(p + "input_layernorm.weight"), s.eps, s.gemma)
            q, k, v = self.qkv(h, p)
            if s.qk_norm:  # per head (Qwen3, Gemma 3)
                q = rms_norm(q, self.get(p + "self_attn.q_norm.weight"), s.eps, s.gemma)
                k = rms_norm(k, self.get(p + "self_attn.k_norm.weight"), s.eps, s.gemma)
            window = s.windows[l]
            inv_freq = s.local_inv_freq if window is not None else s.global_inv_freq
            if s.rope_layers[l]:
                q, k = apply_rope(q, inv_freq, pos), apply_rope(k, inv_freq, pos)
            out["q"].append(q)
            out["k"].append(k)
            k_rep = k.repeat_interleave(group, dim=0)  # repeat_kv
            v_rep = v.repeat_interleave(group, dim=0)
            scores = q @ k_rep.transpose(-1, -2) * s.scale
            if s.attn_softcap is not None:
                scores = torch.tanh(scores / s.attn_softcap) * s.attn_softcap
            scores = scores.masked_fill(~attention_mask(n, window), float("-inf"))
            weights = torch.softmax(scores, dim=-1)
            out["attention"].append(weights)
            ctx = (weights @ v_rep).transpose(0, 1).reshape(n, s.heads * s.head_dim)
            a = self.linear(ctx, p + "self_attn.o_proj", s.o_bias)
            if s.gemma:
                a = rms_norm(a, self.get(p + "post_attention_layernorm.weight"), s.eps, True)
                x = x + a
                h = rms_norm(x, self.get(p + "pre_feedforward_layernorm.weight"), s.eps, True)
            elif s.olmo2:
                x = x + rms_norm(a, self.get(p + "post_attention_layernorm.weight"), s.eps, False)
                h = x
            else:
                x = x + a
                h = rms_norm(x, self.get(p + "post_attention_layernorm.weight"), s.eps, False)
            m = activation(s.act, self.linear(h, p + "mlp.gate_proj", s.mlp_bias)) * \
                self.linear(h, p + "mlp.up_proj", s.mlp_bias)
            m = self.linear(m, p + "mlp.down_proj", s.mlp_bias)
            if s.gemma or s.olmo2:
                m = rms_norm(m, self.get(p + "post_feedforward_layernorm.weight"), s.eps, s.gemma)
            x = x + m
        if last_logits_only:
            x = x[-1:]
        x = rms_norm(x, self.get("model.norm.weight"), s.eps, s.gemma)
        head = self.get("model.embed_tokens.weight") if s.tied else self.get("lm_head.weight")
        logits = x @ head.T
        if s.final_softcap is not None:
            logits = torch.tanh(logits / s.final_softcap) * s.final_softcap
        out["logits"] = logits
        return out
