"""The float64 reference (tools/reference/hf_decoder_reference.py) with llama.cpp's CPU rounding of
activations emulated: what llama.cpp computes on a GGUF, up to float32 sums.

ggml's CPU backend multiplies a weight of type T by activations converted to T's "vec_dot_type"
(ggml-cpu.c's type_traits_cpu, read not copied):
  F32 -> F32 (nothing rounded)      F16 -> F16       BF16 -> BF16
  Q4_0, Q5_0, Q8_0, IQ4_NL -> Q8_0  Q4_1, Q5_1 -> Q8_1
  Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS -> Q8_K
and the integer dot products of the blocks are exact, so the product equals the float product of the
dequantised weight with the activations rounded as those blocks round them:
  Q8_0 / Q8_1: per 32 values, d = max|x| / 127 kept as F16, q = round(x * 127 / max|x|): x ~ d16 * q
  Q8_K:        per 256 values, the value m of largest magnitude, s = -127 / m, q = min(127,
               round(s * x)), d = 1 / s kept as F32: x ~ d * q
(ggml-quants.c: quantize_row_q8_0_ref, quantize_row_q8_1_ref, quantize_row_q8_K_ref.) The KV cache
is taken to be F32 (reference.mjs --kv f32), so attention itself rounds nothing.

Rows whose length is not a whole number of blocks are left unrounded (llama.cpp cannot quantise
such weights; they stay F32/F16 there).
"""
import os
import re
import struct
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "reference"))
from hf_decoder_reference import DecoderReference  # noqa: E402

GGML_TYPE_NAMES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 6: "Q5_0", 7: "Q5_1", 8: "Q8_0",
                   9: "Q8_1", 10: "Q2_K", 11: "Q3_K", 12: "Q4_K", 13: "Q5_K", 14: "Q6_K",
                   15: "Q8_K", 20: "IQ4_NL", 23: "IQ4_XS", 30: "BF16"}
VEC_DOT = {"F32": None, "F16": "F16", "BF16": "BF16", "Q4_0": "Q8_0", "Q5_0": "Q8_0",
           "Q8_0": "Q8_0", "IQ4_NL": "Q8_0", "Q4_1": "Q8_1", "Q5_1": "Q8_1", "Q2_K": "Q8_K",
           "Q3_K": "Q8_K", "Q4_K": "Q8_K", "Q5_K": "Q8_K", "Q6_K": "Q8_K", "IQ4_XS": "Q8_K"}


def gguf_tensor_types(path):
    """{tensor name: ggml type name} from a GGUF file's header (metadata skipped)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"GGUF":
        raise ValueError(f"{path}: not a GGUF file")
    version, n_tensors, n_kv = struct.unpack_from("<IQQ", data, 4)
    pos = 24
    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

    def string(pos):
        (n,) = struct.unpack_from("<Q", data, pos)
        return data[pos + 8:pos + 8 + n].decode("utf-8", "replace"), pos + 8 + n

    def skip_value(t, pos):
        if t == 8:
            return string(pos)[1]
        if t == 9:
            et, n = struct.unpack_from("<IQ", data, pos)
            pos += 12
            if et in sizes:
                return pos + sizes[et] * n
            for _ in range(n):
                pos = skip_value(et, pos)
            return pos
        return pos + sizes[t]

    for _ in range(n_kv):
        _, pos = string(pos)
        (t,) = struct.unpack_from("<I", data, pos)
        pos = skip_value(t, pos + 4)
    types = {}
    for _ in range(n_tensors):
        name, pos = string(pos)
        (nd,) = struct.unpack_from("<I", data, pos)
        pos += 4 + 8 * nd
        (t,) = struct.unpack_from("<I", data, pos)
        pos += 4 + 8
        types[name] = GGML_TYPE_NAMES.get(t, f"type {t}")
    return types


# GGUF tensor names (llama.cpp's llama-arch.cpp) -> Hugging Face module names, for the families the
# float64 reference runs (llama, qwen2, qwen3, gemma2, gemma3, phi3).
_NAMES = [
    (r"token_embd", "model.embed_tokens"),
    (r"output", "lm_head"),
    (r"blk\.(\d+)\.attn_q", r"model.layers.\1.self_attn.q_proj"),
    (r"blk\.(\d+)\.attn_k", r"model.layers.\1.self_attn.k_proj"),
    (r"blk\.(\d+)\.attn_v", r"model.layers.\1.self_attn.v_proj"),
    (r"blk\.(\d+)\.attn_qkv", r"model.layers.\1.self_attn.qkv_proj"),
    (r"blk\.(\d+)\.attn_output", r"model.layers.\1.self_attn.o_proj"),
    (r"blk\.(\d+)\.ffn_gate", r"model.layers.\1.mlp.gate_proj"),
    (r"blk\.(\d+)\.ffn_up", r"model.layers.\1.mlp.up_proj"),
    (r"blk\.(\d+)\.ffn_down", r"model.layers.\1.mlp.down_proj"),
]


def hf_types(gguf_types, arch=None):
    """{Hugging Face module name (no .weight): ggml type} of the matrices."""
    out = {}
    for name, t in gguf_types.items():
        if not name.endswith(".weight"):
            continue
        base = name[:-len(".weight")]
        for pattern, repl in _NAMES:
            if re.fullmatch(pattern, base):
                hf = re.sub(pattern, repl, base)
                if arch == "phi3" and hf.endswith("mlp.up_proj"):
                    hf = hf.replace("mlp.up_proj", "mlp.gate_up_proj")
                out[hf] = t
                break
    return out


def round_activations(x, kind):
    """x [..., k] float64 tensor as ggml's vec_dot_type `kind` holds it (see the module doc)."""
    if kind is None:
        return x
    if kind == "F16":
        return x.to(torch.float32).to(torch.float16).to(x.dtype)
    if kind == "BF16":
        return x.to(torch.float32).to(torch.bfloat16).to(x.dtype)
    block = 256 if kind == "Q8_K" else 32
    k = x.shape[-1]
    if k % block:
        return x
    a = x.detach().to(torch.float32).cpu().numpy()
    b = a.reshape(*a.shape[:-1], k // block, block)
    if kind == "Q8_K":
        idx = np.abs(b).argmax(axis=-1)[..., None]
        m = np.take_along_axis(b, idx, axis=-1)
        with np.errstate(divide="ignore"):
            iscale = np.where(m != 0, np.float32(-127.0) / m, 0).astype(np.float32)
        q = np.minimum(127, np.round(iscale * b))
        d = np.where(m != 0, np.float32(1.0) / np.where(iscale != 0, iscale, 1), 0).astype(np.float32)
        y = d.astype(np.float64) * q
    else:  # Q8_0, Q8_1
        amax = np.abs(b).max(axis=-1, keepdims=True)
        d = (amax / np.float32(127.0)).astype(np.float32)
        with np.errstate(divide="ignore"):
            inv = np.where(amax != 0, np.float32(127.0) / amax, 0).astype(np.float32)
        q = np.round(b * inv)
        y = d.astype(np.float16).astype(np.float64) * q
    return torch.from_numpy(y.reshape(a.shape)).to(x.dtype)


class LlamaCppRoundingReference(DecoderReference):
    """DecoderReference on a Hugging Face folder holding the GGUF's dequantised weights, rounding each
    matmul's input as llama.cpp's CPU backend does for that weight's type."""

    def __init__(self, folder, module_types, emulate=True, compute_dtype=torch.float64):
        super().__init__(folder, compute_dtype)
        self.module_types = module_types
        self.emulate = emulate

    def _round(self, x, module):
        if not self.emulate:
            return x
        return round_activations(x, VEC_DOT.get(self.module_types.get(module, "F32")))

    def linear(self, x, name, bias):
        module = name.split(".weight")[0]
        return super().linear(self._round(x, module), name, bias)

    def logits(self, x):
        """Only the last position's (llama.cpp computes no others): a 128k-row unembedding for
        every position would dominate the reference's time."""
        out = "lm_head" if "lm_head" in self.module_types else "model.embed_tokens"
        h = self._round(self.final_norm(x[..., -1:, :]), out)
        return self.softcap(h @ self.unembedding().T)


def reference_for(gguf, hf_folder, emulate=True, arch=None, compute_dtype=torch.float64):
    """compute_dtype float32 sums as llama.cpp does (in another order): fewer activations land on
    the other side of a rounding boundary than with float64."""
    return LlamaCppRoundingReference(hf_folder, hf_types(gguf_tensor_types(gguf), arch), emulate,
                                     compute_dtype)
