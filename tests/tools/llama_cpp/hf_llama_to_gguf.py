"""A Hugging Face Llama folder (F32 safetensors, a legacy SentencePiece-BPE tokenizer.json such as
stories260K's) as a GGUF file, the way llama.cpp's convert_hf_to_gguf.py lays one out, plus the
Hugging Face folder of exactly the weights the GGUF holds (its quantised tensors dequantised), so
that attnscope, llama.cpp and the float64 reference (tools/reference) all run the same model.

    /usr/bin/python3 hf_llama_to_gguf.py HF_FOLDER OUT_DIR NAME TYPE
      TYPE: F32, F16 or Q8_0 / Q4_0 (these two quantise every matrix whose rows fill whole
            32-value blocks; the rest, and the norms, stay F32 as llama-quantize keeps them)
    writes OUT_DIR/NAME.gguf and OUT_DIR/NAME.hf/ (config.json, model.safetensors F32,
    tokenizer.json, tokenizer_config.json).

From convert_hf_to_gguf.py (read, not copied): tensor names token_embd / blk.N.attn_q … /
output_norm / output (absent when tied), q and k rows permuted from Hugging Face's rotate_half
layout back to llama.cpp's interleaved one (LlamaModel.permute, k with the key/value head count),
the llama.* hyperparameters, and a "llama" (SentencePiece) vocabulary: tokens, scores, token types,
BOS/EOS/UNK ids, add_bos_token. The tokenizer.json holds no scores: a piece made by merge r gets
score -r (the order SentencePiece's BPE merges in, which llama.cpp's tokenizer follows by score),
the other pieces score -1e4 (never the product of a merge, so the score is never compared).

The quantisers follow ggml's reference rounding (quantize_row_q8_0_ref, quantize_row_q4_0_ref), but
any valid block would do: the dequantised values are the model, and NAME.hf holds them.
"""
import json
import os
import shutil
import struct
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "gguf"))
sys.path.insert(0, os.path.join(ROOT, "tools", "reference"))
import gguf_writer as gw  # noqa: E402
from safetensors_np import read_safetensors  # noqa: E402

FILE_TYPE = {"F32": "ALL_F32", "F16": "MOSTLY_F16", "Q8_0": "MOSTLY_Q8_0", "Q4_0": "MOSTLY_Q4_0"}


# ---- block formats (ggml-common.h) ----------------------------------------------------------------

def quantize_q8_0(x):
    """[rows, cols] float32 -> (bytes, dequantised float32). Block: f16 d, 32 x int8."""
    rows, cols = x.shape
    b = x.reshape(rows, cols // 32, 32).astype(np.float32)
    amax = np.abs(b).max(axis=2, keepdims=True)
    d = amax / 127.0
    inv = np.where(d != 0, 1.0 / np.where(d != 0, d, 1), 0)
    q = np.round(b * inv).astype(np.int8)  # roundf: half away from zero; ties are measure-zero here
    d16 = d.astype(np.float16)
    raw = np.concatenate([d16.view(np.uint8).reshape(rows, cols // 32, 2),
                          q.view(np.uint8)], axis=2)
    deq = d16.astype(np.float32) * q.astype(np.float32)
    return raw.tobytes(), deq.reshape(rows, cols)


def quantize_q4_0(x):
    """Block: f16 d, 16 bytes of 4-bit q (low nibbles values 0..15, high nibbles 16..31);
    value = (q - 8) * d, d = (the value of largest magnitude) / -8."""
    rows, cols = x.shape
    b = x.reshape(rows, cols // 32, 32).astype(np.float32)
    idx = np.abs(b).argmax(axis=2)[..., None]
    vmax = np.take_along_axis(b, idx, axis=2)
    d = vmax / -8.0
    inv = np.where(d != 0, 1.0 / np.where(d != 0, d, 1), 0)
    q = np.minimum(15, np.trunc(b * inv + 8.5)).astype(np.uint8)
    d16 = d.astype(np.float16)
    packed = q[..., :16] | (q[..., 16:] << 4)
    raw = np.concatenate([d16.view(np.uint8).reshape(rows, cols // 32, 2), packed], axis=2)
    deq = d16.astype(np.float32) * (q.astype(np.float32) - 8.0)
    return raw.tobytes(), deq.reshape(rows, cols)


def encode(name, w, type_name):
    """(ggml type name, raw bytes, dequantised float32) of one tensor."""
    if w.ndim == 1 or type_name == "F32":
        return "F32", np.ascontiguousarray(w, dtype="<f4").tobytes(), w.astype(np.float32)
    if type_name == "F16":
        h = w.astype("<f2")
        return "F16", h.tobytes(), h.astype(np.float32)
    if w.shape[1] % 32:
        return "F32", np.ascontiguousarray(w, dtype="<f4").tobytes(), w.astype(np.float32)
    raw, deq = {"Q8_0": quantize_q8_0, "Q4_0": quantize_q4_0}[type_name](w)
    return type_name, raw, deq


def permute(w, n_head):
    """Hugging Face's rotate_half rows -> llama.cpp's interleaved pairs (convert_hf_to_gguf's
    LlamaModel.permute)."""
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def unpermute(w, n_head):
    return (w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        raw = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for raw in blobs:
            f.write(raw)


# ---- the vocabulary ---------------------------------------------------------------------------------

def spm_vocab(tokenizer_json):
    model = tokenizer_json["model"]
    if model["type"] != "BPE" or not model.get("byte_fallback"):
        raise SystemExit("only a SentencePiece-style BPE tokenizer.json (byte_fallback) is converted")
    vocab = model["vocab"]
    n = len(vocab)
    tokens = [None] * n
    for piece, i in vocab.items():
        tokens[i] = piece
    merge_rank = {}
    for r, m in enumerate(model["merges"]):
        a, b = m.split(" ", 1) if isinstance(m, str) else m
        merge_rank.setdefault(a + b, r)
    special = {t["id"] for t in tokenizer_json["added_tokens"] if t.get("special")}
    unk = model.get("unk_token")
    scores, types = [], []
    for i, piece in enumerate(tokens):
        if piece == unk:
            types.append(gw.TOKEN_UNKNOWN)
        elif i in special:
            types.append(gw.TOKEN_CONTROL)
        elif len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
            types.append(gw.TOKEN_BYTE)
        else:
            types.append(gw.TOKEN_NORMAL)
        scores.append(-float(merge_rank[piece]) if piece in merge_rank else
                      (0.0 if types[-1] != gw.TOKEN_NORMAL else -1e4))
    return tokens, scores, types


def convert(hf, out_dir, name, type_name):
    with open(os.path.join(hf, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(hf, "tokenizer.json")) as f:
        tok = json.load(f)
    with open(os.path.join(hf, "tokenizer_config.json")) as f:
        tok_cfg = json.load(f)
    if cfg["model_type"] != "llama":
        raise SystemExit(f"{hf}: model_type {cfg['model_type']}, only llama is converted")
    t = read_safetensors(os.path.join(hf, "model.safetensors"))
    d, n_head = cfg["hidden_size"], cfg["num_attention_heads"]
    n_kv = cfg.get("num_key_value_heads", n_head)
    head_dim = cfg.get("head_dim", d // n_head)
    layers = cfg["num_hidden_layers"]
    tied = cfg.get("tie_word_embeddings", False)

    w = gw.GgufWriter(os.path.join(out_dir, name + ".gguf"), "llama")
    w.add_string("general.name", name)
    w.add_uint32("general.file_type", gw.FILE_TYPE[FILE_TYPE[type_name]])
    w.add_uint32("general.quantization_version", 2)
    w.add_uint32("llama.context_length", cfg.get("max_position_embeddings", 2048))
    w.add_uint32("llama.embedding_length", d)
    w.add_uint32("llama.block_count", layers)
    w.add_uint32("llama.feed_forward_length", cfg["intermediate_size"])
    w.add_uint32("llama.rope.dimension_count", head_dim)
    w.add_uint32("llama.attention.head_count", n_head)
    w.add_uint32("llama.attention.head_count_kv", n_kv)
    w.add_uint32("llama.attention.key_length", head_dim)
    w.add_uint32("llama.attention.value_length", head_dim)
    w.add_float32("llama.attention.layer_norm_rms_epsilon", cfg.get("rms_norm_eps", 1e-6))
    w.add_float32("llama.rope.freq_base", cfg.get("rope_theta", 10000.0))
    w.add_uint32("llama.vocab_size", cfg["vocab_size"])
    tokens, scores, types = spm_vocab(tok)
    w.add_string("tokenizer.ggml.model", "llama")
    w.add_string("tokenizer.ggml.pre", "default")
    w.add_string_array("tokenizer.ggml.tokens", tokens)
    w.add_array("tokenizer.ggml.scores", gw.FLOAT32, scores)
    w.add_array("tokenizer.ggml.token_type", gw.INT32, types)
    vocab = tok["model"]["vocab"]
    w.add_uint32("tokenizer.ggml.bos_token_id", vocab[tok_cfg["bos_token"]])
    w.add_uint32("tokenizer.ggml.eos_token_id", vocab[tok_cfg["eos_token"]])
    w.add_uint32("tokenizer.ggml.unknown_token_id", vocab[tok_cfg["unk_token"]])
    w.add_bool("tokenizer.ggml.add_bos_token", tok_cfg.get("add_bos_token", True))
    w.add_bool("tokenizer.ggml.add_eos_token", tok_cfg.get("add_eos_token", False))

    hf_out = {}  # Hugging Face name -> the float32 values the GGUF holds

    def put(gguf_name, hf_name, arr, perm_heads=None):
        src = permute(arr, perm_heads) if perm_heads else arr
        ggml_type, raw, deq = encode(gguf_name, src, type_name)
        w.add_tensor(gguf_name, raw, ggml_type, src.shape)
        hf_out[hf_name] = unpermute(deq, perm_heads) if perm_heads else deq

    put("token_embd.weight", "model.embed_tokens.weight", t["model.embed_tokens.weight"])
    for i in range(layers):
        p, g = f"model.layers.{i}.", f"blk.{i}."
        put(g + "attn_norm.weight", p + "input_layernorm.weight", t[p + "input_layernorm.weight"])
        put(g + "attn_q.weight", p + "self_attn.q_proj.weight", t[p + "self_attn.q_proj.weight"], n_head)
        put(g + "attn_k.weight", p + "self_attn.k_proj.weight", t[p + "self_attn.k_proj.weight"], n_kv)
        put(g + "attn_v.weight", p + "self_attn.v_proj.weight", t[p + "self_attn.v_proj.weight"])
        put(g + "attn_output.weight", p + "self_attn.o_proj.weight", t[p + "self_attn.o_proj.weight"])
        put(g + "ffn_norm.weight", p + "post_attention_layernorm.weight",
            t[p + "post_attention_layernorm.weight"])
        put(g + "ffn_gate.weight", p + "mlp.gate_proj.weight", t[p + "mlp.gate_proj.weight"])
        put(g + "ffn_up.weight", p + "mlp.up_proj.weight", t[p + "mlp.up_proj.weight"])
        put(g + "ffn_down.weight", p + "mlp.down_proj.weight", t[p + "mlp.down_proj.weight"])
    put("output_norm.weight", "model.norm.weight", t["model.norm.weight"])
    if not tied:
        put("output.weight", "lm_head.weight", t["lm_head.weight"])
    size = w.write()

    folder = os.path.join(out_dir, name + ".hf")
    os.makedirs(folder, exist_ok=True)
    hf_cfg = dict(cfg, torch_dtype="float32")
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(hf_cfg, f, indent=2)
    for extra in ("tokenizer.json", "tokenizer_config.json", "generation_config.json", "LICENSE"):
        if os.path.exists(os.path.join(hf, extra)):
            shutil.copy(os.path.join(hf, extra), folder)
    write_safetensors(os.path.join(folder, "model.safetensors"), hf_out)
    return size


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[4] not in FILE_TYPE:
        raise SystemExit(__doc__)
    os.makedirs(sys.argv[2], exist_ok=True)
    n = convert(*sys.argv[1:5])
    print(f"{os.path.join(sys.argv[2], sys.argv[3])}.gguf: {n} bytes")
