#!/usr/bin/python3
"""Writes an attnscope safetensors trace of N tokens (one layer, one head) for the long-input
heatmap benchmark: causal attention with a first-token sink, a previous-token stripe and a few
sharp peaks, rows summing to 1. Usage: make_long_trace.py N OUT.safetensors [--hot I,J]
(--hot: every row uniform except row I, which puts all its weight on key J)."""
import json
import struct
import sys

import numpy as np


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    hot = None
    if len(sys.argv) > 4 and sys.argv[3] == "--hot":
        hot = tuple(int(v) for v in sys.argv[4].split(","))
    words = [f"w{i}" for i in range(n)]
    text = " ".join(words)
    tokens, pos = [], 0
    for i, w in enumerate(words):
        tokens.append({"id": i, "text": w, "start": pos, "end": pos + len(w), "special": False})
        pos += len(w) + 1
    if hot:
        a = np.full((n, n), 1.0 / n, dtype=np.float32)
        a[hot[0], :] = 0.0
        a[hot[0], hot[1]] = 1.0
    else:
        rng = np.random.default_rng(0)
        a = rng.random((n, n), dtype=np.float32) * 0.05
        a[:, 0] += 2.0
        idx = np.arange(1, n)
        a[idx, idx - 1] += 1.0
        for _ in range(64):
            a[rng.integers(n), rng.integers(n)] += 5.0
        a = np.tril(a)
        a /= a.sum(axis=1, keepdims=True)
    data = a.astype("<f4").tobytes()
    meta = {
        "format": "attnscope-trace/1",
        "model": json.dumps({"name": "long-bench", "kind": "gpt2", "layers": 1, "heads": 1}),
        "backend": "cpu",
        "text": text,
        "tokens": json.dumps(tokens),
    }
    header = {"__metadata__": meta,
              "attention": {"dtype": "F32", "shape": [1, 1, n, n], "data_offsets": [0, len(data)]}}
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(out, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        f.write(data)


if __name__ == "__main__":
    main()
