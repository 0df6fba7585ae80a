#!/usr/bin/python3
"""Writes a random Llama-shaped attention trace (safetensors, the format of `export --format
safetensors`) for the model-view frame benchmark (bench/model_view_frame.sh): LAYERS x HEADS causal
heads over N tokens, each row a softmax of random logits with a first-token sink and, in some
heads, a previous-token or diagonal bias, so thumbnails look like a real decoder's.

    model_view_trace.py OUT.safetensors [--layers 16] [--heads 32] [--tokens 128] [--seed 0]
"""
import argparse
import json
import struct

import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--layers", type=int, default=16)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--tokens", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    n = a.tokens
    words = [f"w{i}" for i in range(n)]
    text = " ".join(words)
    tokens, pos = [], 0
    for i, w in enumerate(words):
        tokens.append({"id": i, "text": w, "start": pos, "end": pos + len(w), "special": False})
        pos += len(w) + 1
    causal = np.tril(np.ones((n, n), dtype=bool))
    att = np.empty((a.layers, a.heads, n, n), dtype=np.float32)
    idx = np.arange(n)
    for l in range(a.layers):
        for h in range(a.heads):
            logits = rng.normal(0.0, 1.5, (n, n))
            logits[:, 0] += rng.uniform(0, 6)  # the sink
            kind = (l * a.heads + h) % 4
            if kind == 1:
                logits[idx[1:], idx[:-1]] += 6  # previous token
            elif kind == 2:
                logits[idx, idx] += 5  # diagonal
            logits[~causal] = -np.inf
            w = np.exp(logits - logits.max(axis=1, keepdims=True))
            att[l, h] = w / w.sum(axis=1, keepdims=True)
    model = {"name": f"random-llama-{a.layers}x{a.heads}", "kind": "llama",
             "layers": a.layers, "heads": a.heads}
    header = {"__metadata__": {"format": "attnscope-trace/1", "model": json.dumps(model),
                               "backend": "cpu", "text": text, "tokens": json.dumps(tokens)},
              "attention": {"dtype": "F32", "shape": list(att.shape),
                            "data_offsets": [0, att.nbytes]}}
    blob = json.dumps(header).encode()
    blob += b" " * ((8 - len(blob) % 8) % 8)
    with open(a.out, "wb") as f:
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        f.write(att.tobytes())


if __name__ == "__main__":
    main()
