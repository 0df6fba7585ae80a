"""Writes tests/data/golden/analysis.json: attention rollout, the mean over layers and the head
summaries of small random traces, computed independently of attnscope in float64 numpy.

    /usr/bin/python3 tools/reference/analysis_reference.py tests/data/golden/analysis.json

Each case stores its input attention (rounded to 9 significant digits; the outputs are computed
from exactly those numbers) and the expected outputs (9 significant digits); tests/unit/analysis_golden_test.cpp
reads the input back into an AttentionTrace and compares attnscope's float32 answers within 1e-5.
Deterministic: a fixed seed, no clock.
"""
import json
import sys

import numpy as np


def random_attention(rng, layers, heads, n, causal, masked_rows, sharpness):
    """[layers, heads, n, n] row-stochastic weights; masked_rows are all zero (fully masked)."""
    logits = rng.normal(size=(layers, heads, n, n)) * sharpness
    if causal:
        logits = np.where(np.tril(np.ones((n, n), dtype=bool)), logits, -np.inf)
    w = np.exp(logits - logits.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    w = np.vectorize(lambda x: float(f"{x:.9g}"))(w)  # what the file stores: the exact input
    for r in masked_rows:
        w[:, :, r, :] = 0.0
    return w


def rollout(w):
    """R_l = Â_l ··· Â_0 with Â = rownorm(0.5·mean_heads + 0.5·I), for every layer l."""
    n = w.shape[-1]
    out, r = [], np.eye(n)
    for layer in w:
        a = 0.5 * layer.mean(axis=0) + 0.5 * np.eye(n)
        a = a / a.sum(axis=1, keepdims=True)
        r = a @ r
        out.append(r.copy())
    return np.array(out)


def summaries(m, ids):
    """Head summaries of one [n x n] matrix, queries at positions 0..n-1 (vectorised numpy);
    ids: the tokens' vocabulary ids for the induction score."""
    n = m.shape[0]
    s = m.sum(axis=1)
    live = s > 0
    p = m[live] / s[live, None]
    pos = np.arange(n)[live]
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.where(p > 0, p * np.log(p), 0.0).sum(axis=1) / np.log(2.0)
    dist = (p * np.abs(pos[:, None] - np.arange(n)[None, :])).sum(axis=1)
    prev = p[pos >= 1, pos[pos >= 1] - 1]

    # Induction: key k is a target of query q when token k-1 is an earlier copy of q's token.
    same = (ids[None, :] == ids[:, None]) & (ids[None, :] >= 0)  # [q, j]: id_j == id_q
    earlier = np.tril(same, k=-1)  # j < q
    targets = np.zeros((n, n), dtype=bool)
    targets[:, 1:] = earlier[:, :-1]  # key j+1 for every such j
    has = targets.any(axis=1)[live]
    induction = (p * targets[live]).sum(axis=1)[has]

    def mean(v):
        return float(v.mean()) if v.size else 0.0

    return {"entropy": mean(ent), "distance": mean(dist), "first": mean(p[:, 0]),
            "previous": mean(prev), "diagonal": mean(p[np.arange(p.shape[0]), pos]),
            "induction": mean(induction)}


def rounded(x):
    """Nested lists with 9 significant digits (more than float32 carries)."""
    return json.loads(json.dumps(np.asarray(x).tolist()), parse_float=lambda v: float(f"{float(v):.9g}"))


def case(name, rng, layers, heads, n, causal, masked_rows=(), sharpness=1.0):
    w = random_attention(rng, layers, heads, n, causal, masked_rows, sharpness)
    # A small vocabulary, so tokens repeat; -1 (an unknown word) never matches anything.
    ids = rng.integers(-1, 4, size=n)
    return {
        "name": name,
        "token_ids": ids.tolist(),
        "attention": w.tolist(),
        "rollout": rounded(rollout(w)),
        "layers_mean": rounded(w.mean(axis=(0, 1))),
        "summaries": [[summaries(h, ids) for h in layer] for layer in w],
    }


def main():
    rng = np.random.default_rng(20261201)
    cases = [
        case("causal 4x3 heads, 7 tokens", rng, 4, 3, 7, causal=True),
        case("bidirectional 3x2 heads, 6 tokens, sharp", rng, 3, 2, 6, causal=False, sharpness=4.0),
        case("bidirectional 2x2 heads, 5 tokens, row 2 fully masked", rng, 2, 2, 5, causal=False,
             masked_rows=(2,)),
        case("causal 6x4 heads, 16 tokens", rng, 6, 4, 16, causal=True, sharpness=2.0),
        case("one token", rng, 2, 2, 1, causal=True),
    ]
    doc = {"generator": "tools/reference/analysis_reference.py (float64 numpy)", "cases": cases}
    with open(sys.argv[1], "w") as f:
        json.dump(doc, f, allow_nan=False)
        f.write("\n")


if __name__ == "__main__":
    main()
