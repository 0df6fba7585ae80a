#!/usr/bin/python3
"""A Llama-3.2-1B-shaped GGUF in Q4_K_M's mix, for issue 26's memory goal (bench/gguf_bench.sh):
16 layers, hidden 2048, 32 heads and 8 KV heads of 64, MLP 8192, tied embeddings, the real Llama 3
tokenizer (tests/data/npm/llama3, 128256 ids) in the metadata. Tensors are random valid blocks
(tools/gguf/ggml_quants.random_blocks: no quantiser needed) in the types llama.cpp's
llama_model_quantize gives Q4_K_M (llama_tensor_get_type): attn_v and ffn_down Q6_K in the layers
use_more_bits picks (0, 1, 4, 7, 10, 13, 14, 15), Q4_K elsewhere; attn_q/k/output, ffn_gate/up
Q4_K; token_embd (also the output matrix, tied) Q6_K; norms F32. About 0.8 GB.

    /usr/bin/python3 bench/make_llama1b_gguf.py OUT.gguf [--npm tests/data/npm] [--layers 16]
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools", "gguf"))
import ggml_quants as gq  # noqa: E402
import gguf_vocab as gv  # noqa: E402
import make_gguf_fixtures as mf  # noqa: E402
from gguf_writer import FILE_TYPE, GgufWriter  # noqa: E402


def use_more_bits(i, n):
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--npm", default=os.path.join(HERE, "..", "tests", "data", "npm"))
    ap.add_argument("--layers", type=int, default=16)
    args = ap.parse_args()
    H, L, heads, kv, hd, ff = 2048, args.layers, 32, 8, 64, 8192
    tok, cfg, pre, add_bos = mf.load_tokenizer(args.npm, "llama3")
    vocab = gv.build_vocab(tok, cfg, pre=pre, add_bos=add_bos)
    n_vocab = len(vocab["tokens"])
    rng = np.random.default_rng(26)
    w = GgufWriter(args.out, "llama")
    w.add_string("general.name", "attnscope-bench-llama-3.2-1b-shape")
    w.add_uint32("general.file_type", FILE_TYPE["MOSTLY_Q4_K_M"])
    w.add_uint32("general.quantization_version", 2)
    w.add_uint32("llama.context_length", 131072)
    w.add_uint32("llama.embedding_length", H)
    w.add_uint32("llama.block_count", L)
    w.add_uint32("llama.feed_forward_length", ff)
    w.add_uint32("llama.attention.head_count", heads)
    w.add_uint32("llama.attention.head_count_kv", kv)
    w.add_float32("llama.attention.layer_norm_rms_epsilon", 1e-5)
    w.add_float32("llama.rope.freq_base", 500000.0)
    w.add_uint32("llama.attention.key_length", hd)
    w.add_uint32("llama.attention.value_length", hd)
    w.add_uint32("llama.rope.dimension_count", hd)
    w.add_uint32("llama.vocab_size", n_vocab)
    gv.add_vocab(w, vocab)

    def mat(name, type_name, rows, cols, scale=0.02):
        w.add_tensor(name, gq.random_blocks(type_name, rows * cols, scale, rng), type_name, (rows, cols))

    mat("token_embd.weight", "Q6_K", n_vocab, H)
    for i in range(L):
        more = "Q6_K" if use_more_bits(i, L) else "Q4_K"
        p = f"blk.{i}."
        w.add_tensor_f32(p + "attn_norm.weight", np.ones(H, dtype=np.float32))
        mat(p + "attn_q.weight", "Q4_K", heads * hd, H)
        mat(p + "attn_k.weight", "Q4_K", kv * hd, H)
        mat(p + "attn_v.weight", more, kv * hd, H)
        mat(p + "attn_output.weight", "Q4_K", H, heads * hd)
        w.add_tensor_f32(p + "ffn_norm.weight", np.ones(H, dtype=np.float32))
        mat(p + "ffn_gate.weight", "Q4_K", ff, H)
        mat(p + "ffn_up.weight", "Q4_K", ff, H)
        mat(p + "ffn_down.weight", more, H, ff)
    w.add_tensor_f32("output_norm.weight", np.ones(H, dtype=np.float32))
    size = w.write()
    print(f"{args.out}: {size} bytes, {n_vocab} ids, {L} layers")


if __name__ == "__main__":
    main()
