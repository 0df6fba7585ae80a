"""An independent float64 reference for attnscope's attention interventions and read-outs: head
ablation (zero / mean), attention-edge knockout, the residual stream, the logit lens, head effects,
direct logit attribution (DLA) and value-norm attention.

One forward (`run`) takes the interventions as arguments and keeps what the read-outs need. Two
models share that interface: InterventionDecoder (the decoder families of hf_decoder_reference.py:
llama, mistral, qwen2, qwen3, gemma2, gemma3_text, smollm3, olmo2, gpt_neox) and InterventionGPT2 (GPT-2, written after
hf_reference.py's GPT2Model, whose weights it reuses). Plain PyTorch, no attnscope code. Run with
/usr/bin/python3 (Debian's python3-torch). Indices count from 0 everywhere.

Semantics (the contract the C++ side is compared against):
  ablate    (layer, query head): that head's attention output (weights·V, before the output
            projection) becomes 0 at every position ("zero"), or its mean over all positions of
            the clean run ("mean"). Output-projection biases stay.
  knockout  (layer, head or None = every head, query q, key k): score (q, k) becomes -inf after the
            scaling and any attention softcap, before the softmax; the row renormalises. A key the
            query cannot see anyway is a no-op; a row left with no key gives zeros.
  residual  r[-1] = the embedding output (Gemma: scaled by sqrt(hidden) in the weights' dtype;
            GPT-2: wte + wpe), r[b] = after block b. Stored as run["residual"][b + 1].
"""
import json
import os

import torch
import torch.nn.functional as F

from hf_decoder_reference import DecoderReference, attention_mask
from hf_reference import load_model


# ---- shared pieces of the intervened attention ---------------------------------------------------

def knock_out(scores, layer, knockout):
    """scores [heads, n, n] (masked already) -> with the knockout edges of this layer at -inf."""
    for l, h, q, k in knockout:
        if l != layer:
            continue
        heads = slice(None) if h is None else h
        scores[heads, q, k] = float("-inf")
    return scores


def softmax_rows(scores):
    """Softmax over keys; a row with every key masked gives zeros, never NaN."""
    w = torch.softmax(scores, dim=-1)
    dead = torch.isneginf(scores).all(dim=-1, keepdim=True)
    return torch.where(dead, torch.zeros_like(w), w)


def ablated(ctx, layer, ablate, mode, means):
    """ctx [heads, n, dh] -> with the ablated heads of this layer replaced (0, or the clean mean)."""
    for l, h in ablate:
        if l != layer:
            continue
        if mode == "zero":
            ctx[h] = 0.0
        elif mode == "mean":
            ctx[h] = means[l][h]  # [dh] (or [n, dh]) broadcast over the positions
        else:
            raise ValueError(f"ablate mode {mode}")
    return ctx


def clean_means(run):
    """[layer][head, dh]: each head's attention output averaged over all positions of a run."""
    return [c.mean(dim=1) for c in run["ctx"]]


# ---- decoders (hf_decoder_reference.py) ----------------------------------------------------------

class InterventionDecoder(DecoderReference):
    """DecoderReference.run with the interventions as its hooks, and the pieces the read-outs need
    in every family's names (GPT-NeoX's LayerNorms included)."""

    def __init__(self, folder):
        super().__init__(folder, torch.float64)
        s = self.spec
        self.kind, self.layers, self.heads, self.kv_heads = s.kind, s.layers, s.heads, s.kv_heads
        self.head_dim, self.hidden = s.head_dim, s.hidden
        self.vocab = self.cfg["vocab_size"]
        # A norm right after the attention (Gemma's post-norms, OLMo 2's only ones).
        self.post_attention_norm = s.gemma or s.olmo2

    def run(self, ids, ablate=(), mode="zero", knockout=(), means=None):
        """DecoderReference.run with the interventions: residual [L + 1][n, d], ctx [L][heads, n,
        dh] (weights·V after any ablation), v [L][kv_heads, n, dh], attention [L][heads, n, n],
        attn_out [L][n, d] (o_proj output with any bias, before a post-norm), mlp_out [L][n, d]
        (what the block adds, after any post-norm), logits [n, V]."""
        return super().run(ids, scores_hook=lambda scores, l: knock_out(scores, l, knockout),
                           softmax=softmax_rows,
                           ctx_hook=lambda ctx, l: ablated(ctx, l, ablate, mode, means))

    def o_weight(self, l):
        """The output projection in [in x out] form: [heads·dh, d]; W_O,h = rows h·dh … (h+1)·dh-1."""
        return self.get(self.names.layer(l) + self.names.o + ".weight").T

    def o_bias(self, l):
        name = self.names.layer(l) + self.names.o + ".bias"
        return self.get(name) if self.spec.o_bias else torch.zeros(self.hidden, dtype=torch.float64)

    def post_attention_frozen(self, l, o, a):
        """A component o of layer l's attention output through the post-attention norm with the
        denominator of the layer's whole output a (clean run, one position) frozen."""
        if not self.post_attention_norm:
            return o
        g = self.get(self.names.layer(l) + "post_attention_layernorm.weight")
        return o / torch.sqrt(a.pow(2).mean() + self.spec.eps) * ((1.0 + g) if self.spec.gemma else g)

    def final_norm_frozen(self, o, x_final):
        """A component o of the final residual x_final (one position) through the final norm with
        x_final's denominator frozen, bias excluded (LayerNorm: the component centred too)."""
        g = self.get(self.names.final_norm + ".weight")
        if self.spec.layer_norm:
            return (o - o.mean()) / torch.sqrt(x_final.var(unbiased=False) + self.spec.eps) * g
        normed = o / torch.sqrt(x_final.pow(2).mean() + self.spec.eps)
        return normed * (1.0 + g) if self.spec.gemma else normed * g

    def zeroed_head_logits(self, ids, l, h):
        """Logits of the plain forward with head h's columns of layer l's output projection set to
        0: another path to a zero ablation (for self_check)."""
        name = self.names.layer(l) + self.names.o + ".weight"
        keep = self.w[name]
        self.w[name] = keep.clone()
        self.w[name][:, h * self.head_dim:(h + 1) * self.head_dim] = 0.0
        try:
            return self.forward(ids)["logits"]
        finally:
            self.w[name] = keep

    def final_norm_bias(self):
        return self.get(self.names.final_norm + ".bias") if self.spec.layer_norm else None


# ---- GPT-2 (hf_reference.py's GPT2Model weights, the forward spelled out with the hooks) ---------

class InterventionGPT2:
    def __init__(self, folder):
        self.model, self.cfg = load_model(folder, torch.float64)
        c = self.cfg
        self.kind, self.layers, self.heads = c["model_type"], c["n_layer"], c["n_head"]
        self.kv_heads = self.heads
        self.hidden = c["n_embd"]
        self.head_dim = self.hidden // self.heads
        self.vocab = c["vocab_size"]
        self.eps = c["layer_norm_epsilon"]
        self.post_attention_norm = False

    def layer_norm(self, x, ln):
        return F.layer_norm(x, (self.hidden,), ln.weight, ln.bias, self.eps)

    def run(self, ids, ablate=(), mode="zero", knockout=(), means=None):
        """GPT2Model.forward + the tied head with the interventions; same fields as
        InterventionDecoder.run."""
        m = self.model
        n, H, dh = len(ids), self.heads, self.head_dim
        x = m.wte.weight[torch.tensor(ids)] + m.wpe.weight[torch.arange(n)]
        out = {"residual": [x], "ctx": [], "v": [], "attention": [], "attn_out": [], "mlp_out": []}
        causal = attention_mask(n, None)
        for l, block in enumerate(m.h):
            h = self.layer_norm(x, block.ln_1)
            qkv = torch.addmm(block.attn.c_attn.bias, h, block.attn.c_attn.weight)
            q, k, v = (t.view(n, H, dh).transpose(0, 1) for t in qkv.split(self.hidden, dim=1))
            scores = (q @ k.transpose(-1, -2)) / torch.full([], dh ** 0.5, dtype=q.dtype)
            # HF fills masked scores with finfo.min, -inf here: the same zero weight after softmax.
            scores = scores.masked_fill(~causal, float("-inf"))
            weights = softmax_rows(knock_out(scores, l, knockout))
            ctx = ablated(weights @ v, l, ablate, mode, means)
            a = torch.addmm(block.attn.c_proj.bias, ctx.transpose(0, 1).reshape(n, self.hidden),
                            block.attn.c_proj.weight)
            x = x + a
            f = block.mlp(self.layer_norm(x, block.ln_2))
            x = x + f
            out["v"].append(v)
            out["attention"].append(weights)
            out["ctx"].append(ctx)
            out["attn_out"].append(a)
            out["mlp_out"].append(f)
            out["residual"].append(x)
        out["logits"] = self.logits(x)
        return out

    def final_norm(self, x):
        return self.layer_norm(x, self.model.ln_f)

    def unembedding(self):
        return self.model.wte.weight

    def softcap(self, logits):
        return logits

    def logits(self, x):
        return self.final_norm(x) @ self.unembedding().T

    def o_weight(self, l):
        return self.model.h[l].attn.c_proj.weight  # Conv1D: already [in x out]

    def o_bias(self, l):
        return self.model.h[l].attn.c_proj.bias

    def post_attention_frozen(self, l, o, a):
        return o

    def final_norm_frozen(self, o, x_final):
        """LayerNorm with x_final's statistics frozen: centre the component, divide, scale; no bias."""
        var = x_final.var(unbiased=False)
        return (o - o.mean()) / torch.sqrt(var + self.eps) * self.model.ln_f.weight

    def zeroed_head_logits(self, ids, l, h):
        """Logits of hf_reference's GPT2Model with head h's rows of layer l's c_proj set to 0: an
        independent path to a zero ablation (for self_check)."""
        w = self.model.h[l].attn.c_proj.weight
        keep = w.detach().clone()
        w.data[h * self.head_dim:(h + 1) * self.head_dim] = 0.0
        try:
            return self.model(torch.tensor([ids]))[1][0]
        finally:
            w.data.copy_(keep)

    def final_norm_bias(self):
        return self.model.ln_f.bias


def load(folder):
    """InterventionGPT2 or InterventionDecoder, by the folder's config.json."""
    with open(os.path.join(folder, "config.json")) as f:
        kind = json.load(f)["model_type"]
    return InterventionGPT2(folder) if kind == "gpt2" else InterventionDecoder(folder)


# ---- read-outs -----------------------------------------------------------------------------------

def logprobs(run, at):
    """log_softmax of the logits at position `at` ([V])."""
    return torch.log_softmax(run["logits"][at], dim=-1)


def logit_lens(model, run, at):
    """[L + 1][V]: for b = -1 … L-1, log_softmax(unembed(final_norm(r[b][at]))) (row b + 1)."""
    return [torch.log_softmax(model.logits(r[at]), dim=-1) for r in run["residual"]]


def head_effects(model, ids, target, clean):
    """[L][H]: log p(target) at the last position with (l, h) alone zero-ablated, minus the clean
    value (negative: the head helps)."""
    base = logprobs(clean, -1)[target]
    return [[float(logprobs(model.run(ids, ablate=[(l, h)], mode="zero"), -1)[target] - base)
             for h in range(model.heads)] for l in range(model.layers)]


def direct_logit_attribution(model, run, target, at):
    """Heads [L][H] and the other components (embedding, attention_bias [L], mlp [L],
    final_norm_bias) of the target's logit before any final softcap, at position `at`, with the
    clean run's norm denominators frozen; plus that logit itself."""
    x_final = run["residual"][-1][at]
    row = model.unembedding()[target]
    dh = model.head_dim

    def through_final(o):
        return float(model.final_norm_frozen(o, x_final) @ row)

    heads, bias, mlp = [], [], []
    for l in range(model.layers):
        wo = model.o_weight(l)
        a = run["attn_out"][l][at]
        heads.append([through_final(model.post_attention_frozen(l, run["ctx"][l][h, at] @ wo[h * dh:(h + 1) * dh], a))
                      for h in range(model.heads)])
        bias.append(through_final(model.post_attention_frozen(l, model.o_bias(l), a)))
        mlp.append(through_final(run["mlp_out"][l][at]))
    fb = model.final_norm_bias()
    components = {"embedding": through_final(run["residual"][0][at]), "attention_bias": bias, "mlp": mlp,
                  "final_norm_bias": 0.0 if fb is None else float(fb @ row)}
    logit = float(model.final_norm(x_final) @ row)
    return logit, heads, components


def value_norms(model, run):
    """[L][H][n]: ‖v_j · W_O,h‖ (the value of the KV head h reads, bias included; no norm after)."""
    group = model.heads // model.kv_heads
    dh = model.head_dim
    out = []
    for l in range(model.layers):
        wo = model.o_weight(l)
        v = run["v"][l]
        out.append(torch.stack([(v[h // group] @ wo[h * dh:(h + 1) * dh]).norm(dim=-1) for h in range(model.heads)]))
    return out


def value_norm_weights(attention, norms):
    """attention [H, n, n], norms [H, n] -> w_ij = a_ij·n_j / Σ_j' a_ij'·n_j' (a zero row stays 0)."""
    w = attention * norms[:, None, :]
    total = w.sum(dim=-1, keepdim=True)
    return torch.where(total > 0, w / torch.where(total > 0, total, torch.ones_like(total)), torch.zeros_like(w))


def max_abs(a, b):
    return float((a - b).abs().max())


def self_check(model, ids, reference_logits):
    """The reference against itself; raises AssertionError on the first failure.
    reference_logits: [n, V] of the model's plain reference forward (DecoderReference.forward or
    hf_reference's GPT-2) for the same ids."""
    last = len(ids) - 1
    clean = model.run(ids)
    scale = max(1.0, float(reference_logits.abs().max()))
    d = max_abs(clean["logits"], reference_logits)
    assert d <= 1e-9 * scale, f"clean logits differ from the plain reference by {d}"
    # The lens after the last block is the normal output.
    lens = logit_lens(model, clean, last)
    assert max_abs(lens[-1], logprobs(clean, last)) <= 1e-9 * scale, "lens b=L-1 != clean logprobs"
    # Zero-ablating nothing, knocking out nothing: nothing changes.
    assert max_abs(model.run(ids, ablate=[], mode="zero", knockout=[])["logits"], clean["logits"]) == 0.0
    # Zero ablation = the plain forward with that head's slice of the output projection zeroed.
    for l, h in [(0, min(1, model.heads - 1)), (model.layers - 1, 0)]:
        z = model.run(ids, ablate=[(l, h)], mode="zero")
        d = max_abs(z["logits"], model.zeroed_head_logits(ids, l, h))
        assert d <= 1e-9 * scale, f"zero ablation of ({l}, {h}) differs from the zeroed o_proj by {d}"
    # Replacing a head's output by its own clean output (per position) changes nothing.
    own = [c.clone() for c in clean["ctx"]]
    same = model.run(ids, ablate=[(0, 0), (model.layers - 1, model.heads - 1)], mode="mean", means=own)
    assert max_abs(same["logits"], clean["logits"]) <= 1e-12 * scale, "replacement by the clean ctx changed logits"
    # A knockout of a key the query cannot see: k > q, and outside a sliding window.
    future = model.run(ids, knockout=[(l, None, 3, 9) for l in range(model.layers)])
    assert max_abs(future["logits"], clean["logits"]) == 0.0, "knockout of a future key changed logits"
    windows = getattr(getattr(model, "spec", None), "windows", [None] * model.layers)
    outside = [(l, None, last, 0) for l, w in enumerate(windows) if w is not None and last >= w]
    if outside:
        o = model.run(ids, knockout=outside)
        assert max_abs(o["logits"], clean["logits"]) == 0.0, "knockout outside the window changed logits"
    # A knockout of a visible key does change something (the hook is live).
    full = [l for l, w in enumerate(windows) if w is None or last < w]
    if full:
        o = model.run(ids, knockout=[(full[0], None, last, 0)])
        assert max_abs(o["logits"][last], clean["logits"][last]) > 0.0, "a visible knockout changed nothing"
        assert float(o["attention"][full[0]][:, last, 0].abs().max()) == 0.0
        rows = o["attention"][full[0]][:, last].sum(dim=-1)
        assert max_abs(rows, torch.ones_like(rows)) < 1e-12, "a knocked-out row does not renormalise"
    # DLA: heads + the other components = the logit before softcap (every family, Gemma included:
    # its post-norms are linear once the denominators are frozen and it has no biases).
    target = int(clean["logits"][last].argmax())
    logit, heads, comp = direct_logit_attribution(model, clean, target, last)
    total = sum(sum(r) for r in heads) + comp["embedding"] + sum(comp["attention_bias"]) + sum(comp["mlp"]) + \
        comp["final_norm_bias"]
    assert abs(total - logit) <= 1e-9 * abs(logit), f"DLA sum {total} != logit {logit}"
    # The logit before softcap, through the softcap, is the clean logit.
    assert abs(float(model.softcap(torch.tensor(logit, dtype=torch.float64))) - float(clean["logits"][last, target])) \
        <= 1e-9 * scale
    # Value-norm weights: rows sum to 1 where the attention row does.
    for l, norms in enumerate(value_norms(model, clean)):
        w = value_norm_weights(clean["attention"][l], norms)
        s = w.sum(dim=-1)
        assert max_abs(s, torch.ones_like(s)) < 1e-12, "value-norm weights do not sum to 1"
    return clean
