#!/usr/bin/python3
"""Trains attnscope's built-in "tiny trained transformer": a 4-layer Llama-shaped decoder with a
4,096-token byte-level BPE, on the Debian texts the lesson vectors use. Writes a Hugging Face model
folder (config.json, model.safetensors, tokenizer.json, tokenizer_config.json) and training.json
(the measured numbers the provenance note quotes).

    nice -n 10 /usr/bin/python3 tools/train_tiny_model.py --out assets/tiny_model

Needs Debian's python3-torch and python3-numpy and the packages dict-gcide, wordnet-base, fortunes,
fortunes-min and dict-devil. Deterministic: fixed seeds, torch.use_deterministic_algorithms, a
fixed thread count, a fixed data order; two runs give byte-identical files (on the same CPU kind
and torch build). `--tokenizer-only` stops after the tokenizer and the token stream's hash.
`--copy-rows` and the options after it in `--help` (all off or at HP's values by default) are the
induction-head experiments recorded in assets/tiny_model.md: synthetic copy rows with a masked
loss, learning-rate and batch overrides, and a head-score probe every `--probe-every` steps.
"""
import argparse
import hashlib
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny_model"))
import bpe  # noqa: E402
import corpus  # noqa: E402

# One thread: on the shared 2-core machine two OpenMP threads ran 3-9x slower than one (each
# waits for the other whenever another job holds a core), and one thread fixes the summation order.
HP = dict(vocab=4096, hidden=128, layers=4, heads=4, head_dim=32, ff=384, context=256,
          rope_theta=10000.0, eps=1e-5, batch=4, steps=2000, lr=3e-3, min_lr=3e-4, warmup=100,
          weight_decay=0.1, clip=1.0, repeat_fraction=0.5, seed=20261130, threads=1,
          validation_documents=2000, copy_rows=24, copy_len=80, copy_min=6, copy_max=36,
          copy_ids=4096, copy_weight=1.0, copy_softmax="vocab", probe_every=100, init_std=0.05,
          stop_at=0, copy_ids_schedule="", embed_std=1.0, tied=0)


# ---- data ---------------------------------------------------------------------------------------

def token_stream(hp, log):
    sources = corpus.all_documents()
    docs = []
    for name, d in sources:
        log(f"corpus {name}: {len(d)} documents, {sum(len(x.split()) for x in d)} words")
        docs.extend(d)
    rng = np.random.RandomState(hp["seed"])
    order = rng.permutation(len(docs))
    docs = [docs[i] for i in order]
    counts = {}
    for d in docs:
        for w in bpe.pre_tokens(d):
            counts[w] = counts.get(w, 0) + 1
    t0 = time.time()
    vocab, merges = bpe.train(counts, hp["vocab"])
    log(f"bpe: {len(vocab)} tokens, {len(merges)} merges in {time.time() - t0:.0f} s")
    enc = bpe.Encoder(vocab, merges)
    val_docs = docs[:hp["validation_documents"]]
    train_docs = docs[hp["validation_documents"]:]

    def stream(ds):
        ids = []
        for d in ds:
            ids.extend(enc.encode(d))
            ids.append(vocab[bpe.EOS])
        return np.asarray(ids, dtype=np.int64)

    return vocab, merges, stream(train_docs), stream(val_docs)


class Batches:
    """The fixed sequence of training batches: "<s>" then a window of the document stream; a
    fraction `repeat_fraction` of the rows instead hold some text and then a block of 8-48 tokens
    repeated to the end of the row (half the blocks random tokens, half a span of real text), so
    that copying earlier text pays off."""

    def __init__(self, stream, hp):
        self.stream, self.hp = stream, hp
        self.rng = np.random.RandomState(hp["seed"] + 1)

    def text(self, n):
        off = self.rng.randint(0, len(self.stream) - n)
        return self.stream[off:off + n]

    def row(self):
        hp, rng = self.hp, self.rng
        n = hp["context"] - 1
        if rng.rand() >= hp["repeat_fraction"]:
            body = self.text(n)
        else:
            # Text, then the block again and again to the end of the row: every position after
            # the first copy can be predicted by copying.
            block_len = rng.randint(8, 49)
            if rng.rand() < 0.5:
                block = rng.randint(2, hp["vocab"], size=block_len)
            else:
                block = self.text(block_len)
            prefix = rng.randint(0, n - 2 * block_len + 1)
            copies = np.tile(block, (n - prefix) // block_len + 1)[:n - prefix]
            body = np.concatenate([self.text(prefix), copies])
        return np.concatenate([[0], body])

    def next(self):
        return torch.from_numpy(np.stack([self.row() for _ in range(self.hp["batch"])]))


class CopyRows:
    """Synthetic copy rows (`--copy-rows`, off by default): "<s>", then a block R of L distinct
    token ids drawn uniformly from 2..copy_ids-1 (L uniform in copy_min..copy_max), repeated to
    the end of a row of copy_len tokens. Only the tokens from R's second copy on are predictable
    (by looking up what followed the same token one period earlier: an induction head), so the
    loss is counted on those alone; the mask says which targets count. Their own random stream,
    so the text batches are the same with or without them."""

    def __init__(self, hp):
        self.hp = hp
        self.rng = np.random.RandomState(hp["seed"] + 3)

    def ids_at(self, step):
        """The id range of `step`: --copy-ids, or the curriculum's entry in force then."""
        ids = self.hp["copy_ids"]
        for entry in filter(None, self.hp["copy_ids_schedule"].split(",")):
            at, value = (int(x) for x in entry.split(":"))
            if step >= at:
                ids = value
        return ids

    def next(self, step=0):
        hp, rng = self.hp, self.rng
        n = hp["copy_len"]
        copy_ids = self.ids_at(step)
        rows = np.zeros((hp["copy_rows"], n), dtype=np.int64)
        mask = np.zeros((hp["copy_rows"], n - 1), dtype=bool)
        for r in range(hp["copy_rows"]):
            block_len = rng.randint(hp["copy_min"], hp["copy_max"] + 1)
            block = 2 + rng.choice(copy_ids - 2, size=min(block_len, copy_ids - 2), replace=False)
            block_len = len(block)
            rows[r, 1:] = np.tile(block, (n - 1) // block_len + 1)[:n - 1]
            # targets rows[r, t + 1] for t + 1 >= 1 + block_len come from the second copy
            mask[r, block_len:] = True
        return torch.from_numpy(rows), torch.from_numpy(mask)


# ---- the model: Hugging Face's LlamaForCausalLM, eager attention --------------------------------

class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(d)), eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rope(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


class Layer(nn.Module):
    def __init__(self, hp):
        super().__init__()
        d, h, dh, ff = hp["hidden"], hp["heads"], hp["head_dim"], hp["ff"]
        self.h, self.dh = h, dh
        self.input_layernorm = RMSNorm(d, hp["eps"])
        self.q_proj = nn.Linear(d, h * dh, bias=False)
        self.k_proj = nn.Linear(d, h * dh, bias=False)
        self.v_proj = nn.Linear(d, h * dh, bias=False)
        self.o_proj = nn.Linear(h * dh, d, bias=False)
        self.post_attention_layernorm = RMSNorm(d, hp["eps"])
        self.gate_proj = nn.Linear(d, ff, bias=False)
        self.up_proj = nn.Linear(d, ff, bias=False)
        self.down_proj = nn.Linear(ff, d, bias=False)

    def forward(self, x, cos, sin, mask, keep=None):
        b, n, _ = x.shape
        a = self.input_layernorm(x)
        q = self.q_proj(a).view(b, n, self.h, self.dh).transpose(1, 2)
        k = self.k_proj(a).view(b, n, self.h, self.dh).transpose(1, 2)
        v = self.v_proj(a).view(b, n, self.h, self.dh).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        scores = (q @ k.transpose(-1, -2)) * self.dh ** -0.5
        w = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        if keep is not None:
            keep.append(w)
        ctx = (w @ v).transpose(1, 2).reshape(b, n, self.h * self.dh)
        x = x + self.o_proj(ctx)
        m = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(m)) * self.up_proj(m))


class TinyLlama(nn.Module):
    def __init__(self, hp):
        super().__init__()
        self.hp = hp
        self.embed_tokens = nn.Embedding(hp["vocab"], hp["hidden"])
        self.lm_head = None if hp["tied"] else nn.Linear(hp["hidden"], hp["vocab"], bias=False)
        self.layers = nn.ModuleList(Layer(hp) for _ in range(hp["layers"]))
        self.norm = RMSNorm(hp["hidden"], hp["eps"])
        dh = hp["head_dim"]
        inv = 1.0 / (hp["rope_theta"] ** (torch.arange(0, dh, 2, dtype=torch.float64) / dh))
        freqs = torch.arange(hp["context"], dtype=torch.float64)[:, None] * inv[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos().float(), persistent=False)
        self.register_buffer("sin", emb.sin().float(), persistent=False)
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = hp["init_std"]
                if name == "embed_tokens.weight" and hp["embed_std"] > 0:
                    std = hp["embed_std"]
                if name.endswith(("o_proj.weight", "down_proj.weight")):
                    std /= math.sqrt(2 * hp["layers"])
                nn.init.normal_(p, 0.0, std)

    def hidden(self, ids, keep=None):
        n = ids.shape[1]
        mask = torch.ones(n, n, dtype=torch.bool).triu(1)
        x = self.embed_tokens(ids)
        for layer in self.layers:
            x = layer(x, self.cos[:n], self.sin[:n], mask, keep)
        return x

    def logits(self, x):
        if self.lm_head is not None:
            return self.lm_head(self.norm(x))
        return self.norm(x) @ self.embed_tokens.weight.T  # tied head

    def forward(self, ids, keep=None):
        return self.logits(self.hidden(ids, keep))


# ---- head scores (what the C++ test measures again) ---------------------------------------------

def head_scores(model, ids):
    """Per layer and head: mean weight on token 0 and on the previous token (queries 1..n-1)."""
    keep = []
    with torch.no_grad():
        model(torch.tensor([ids]), keep)
    n = len(ids)
    out = []
    for l, w in enumerate(keep):
        for h in range(w.shape[1]):
            a = w[0, h].double()
            first = a[1:, 0].mean().item()
            prev = torch.stack([a[i, i - 1] for i in range(1, n)]).mean().item()
            out.append((l, h, first, prev, a))
    return out


def induction_scores(model, hp, block_len=40, seed=7, blocks=1):
    """"<s>" + R + R for a random block R of distinct ids 2..2047 (as tests/unit/tiny_model_test.cpp
    draws them): mean weight from each query in the second copy to the token after the same
    token's earlier occurrence (position i - L + 1); averaged over `blocks` blocks."""
    rng = np.random.RandomState(seed)
    total = None
    for _ in range(blocks):
        block = (2 + rng.choice(min(hp["vocab"], 2048) - 2, size=block_len, replace=False)).tolist()
        ids = [0] + block + block
        result = []
        for l, h, _, _, a in head_scores(model, ids):
            qs = range(1 + block_len, 1 + 2 * block_len)
            result.append((l, h, sum(a[q, q - block_len + 1].item() for q in qs) / len(qs)))
        total = result if total is None else [(l, h, t + v) for (l, h, t), (_, _, v) in zip(total, result)]
    return [(l, h, t / blocks) for l, h, t in total]


# ---- files --------------------------------------------------------------------------------------

def write_safetensors(path, tensors):
    """F32 tensors, names sorted, header padded to 8 bytes (as safetensors' serializer does)."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        a = tensors[name].detach().contiguous().float().numpy().astype("<f4")
        raw = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def hf_state(model):
    """Our parameter names as LlamaForCausalLM's (tied: no lm_head.weight, as save_pretrained)."""
    out = {"model.embed_tokens.weight": model.embed_tokens.weight, "model.norm.weight": model.norm.weight}
    if model.lm_head is not None:
        out["lm_head.weight"] = model.lm_head.weight
    for i, layer in enumerate(model.layers):
        p = f"model.layers.{i}."
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            out[p + "self_attn." + name + ".weight"] = getattr(layer, name).weight
        for name in ("gate_proj", "up_proj", "down_proj"):
            out[p + "mlp." + name + ".weight"] = getattr(layer, name).weight
        out[p + "input_layernorm.weight"] = layer.input_layernorm.weight
        out[p + "post_attention_layernorm.weight"] = layer.post_attention_layernorm.weight
    return out


def config_json(hp):
    return {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "vocab_size": hp["vocab"], "hidden_size": hp["hidden"],
        "intermediate_size": hp["ff"], "num_hidden_layers": hp["layers"],
        "num_attention_heads": hp["heads"], "num_key_value_heads": hp["heads"],
        "head_dim": hp["head_dim"], "hidden_act": "silu",
        "max_position_embeddings": hp["context"], "rms_norm_eps": hp["eps"],
        "rope_theta": hp["rope_theta"], "rope_scaling": None, "attention_bias": False,
        "attention_dropout": 0.0, "mlp_bias": False, "tie_word_embeddings": bool(hp["tied"]),
        "bos_token_id": 0, "eos_token_id": 1, "initializer_range": 0.02, "pretraining_tp": 1,
        "use_cache": True, "torch_dtype": "float32",
    }


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# ---- main ---------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="assets/tiny_model")
    ap.add_argument("--steps", type=int, default=HP["steps"])
    ap.add_argument("--tokenizer-only", action="store_true")
    ap.add_argument("--data-cache", help="an .npz file holding the tokenizer and token streams: "
                    "read when it exists (it must come from this script with the same settings), "
                    "else written; saves the ~5 minutes of corpus reading and BPE training")
    # Off by default: the shipped weights come from HP as it stands. These are the knobs of the
    # induction-head attempts recorded in assets/tiny_model.md (none reached an induction head).
    helps = {
        "batch": "text rows (of `context` tokens) a step",
        "warmup": "linear warm-up steps", "lr": "peak learning rate", "min_lr": "cosine floor",
        "weight_decay": "AdamW weight decay on matrices",
        "repeat_fraction": "share of text rows that end in a repeated 8-48-token block",
        "copy_rows": "synthetic copy rows a step (0: none); see CopyRows",
        "copy_len": "tokens in a copy row, <s> included",
        "copy_min": "shortest repeated block", "copy_max": "longest repeated block",
        "copy_ids": "block ids are drawn from 2..COPY_IDS-1 (the C++ test draws 2..2047)",
        "copy_weight": "weight of the copy loss added to the text loss",
        "probe_every": "steps between validation and head-score probes (logged)",
        "init_std": "standard deviation of the initial weight matrices (output projections: / sqrt(2 layers))",
        "stop_at": "stop after this many steps (0: all), the schedule still planned for --steps",
        "embed_std": "standard deviation of the initial token embeddings (0: --init-std)",
        "tied": "1: the output head is the embedding matrix (as shipped); 0: its own lm_head",
        "copy_ids_schedule": "a curriculum of copy-block ids, 'STEP:IDS,...': from STEP on, blocks draw "
                             "from 2..IDS-1 (overrides --copy-ids; empty: none)",
    }
    for key, help_text in helps.items():
        kind = float if isinstance(HP[key], float) else str if isinstance(HP[key], str) else int
        ap.add_argument("--" + key.replace("_", "-"), type=kind, default=HP[key],
                        help=f"{help_text} (default {HP[key]})")
    ap.add_argument("--copy-softmax", choices=("vocab", "block"), default=HP["copy_softmax"],
                    help="copy loss over the whole vocabulary, or over the row's own block ids only "
                    "(default vocab)")
    args = ap.parse_args()
    hp = dict(HP)
    for key in HP:
        if hasattr(args, key):
            hp[key] = getattr(args, key)
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(hp["seed"])
    torch.set_num_threads(hp["threads"])
    torch.use_deterministic_algorithms(True)
    started = time.time()

    def log(msg):
        print(f"[{time.time() - started:7.1f} s] {msg}", flush=True)

    if args.data_cache and os.path.exists(args.data_cache):
        cached = np.load(args.data_cache, allow_pickle=False)
        vocab = json.loads(str(cached["vocab"]))
        merges = [tuple(m) for m in json.loads(str(cached["merges"]))]
        train_ids, val_ids = cached["train"], cached["validation"]
        log(f"token streams from {args.data_cache}")
    else:
        vocab, merges, train_ids, val_ids = token_stream(hp, log)
        if args.data_cache:
            np.savez(args.data_cache, vocab=json.dumps(vocab), merges=json.dumps(merges),
                     train=train_ids, validation=val_ids)
    tok, tok_config = bpe.tokenizer_json(vocab, merges, hp["context"])
    with open(os.path.join(args.out, "tokenizer.json"), "w", encoding="utf-8") as f:
        f.write(tok)
    with open(os.path.join(args.out, "tokenizer_config.json"), "w") as f:
        f.write(tok_config)
    stream_hash = hashlib.sha256(train_ids.tobytes() + val_ids.tobytes()).hexdigest()
    log(f"tokens: {len(train_ids)} train, {len(val_ids)} validation; stream sha256 {stream_hash}")
    if args.tokenizer_only:
        return

    model = TinyLlama(hp)
    decay = [p for p in model.parameters() if p.dim() == 2]
    other = [p for p in model.parameters() if p.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": hp["weight_decay"]},
                             {"params": other, "weight_decay": 0.0}], lr=hp["lr"], betas=(0.9, 0.95))
    batches = Batches(train_ids, hp)
    val_rng = np.random.RandomState(hp["seed"] + 2)
    n = hp["context"] - 1
    val = torch.from_numpy(np.stack([np.concatenate([[0], val_ids[o:o + n]]) for o in
                                     val_rng.randint(0, len(val_ids) - n, size=32)]))

    def validation_loss():
        with torch.no_grad():
            logits = model(val)
            return F.cross_entropy(logits[:, :-1].reshape(-1, hp["vocab"]), val[:, 1:].reshape(-1)).item()

    copies = CopyRows(hp) if hp["copy_rows"] > 0 else None
    enc = bpe.Encoder(vocab, merges)
    sentence = "The cat sat on the mat, and the dog lay by the door of the old house."
    sentence_ids = [0] + enc.encode(sentence)

    def probe(step):
        scores = head_scores(model, sentence_ids)
        ind = induction_scores(model, hp, blocks=4)
        best = max(ind, key=lambda r: r[2])
        log(f"probe step {step}: induction (L 40, 4 blocks) best layer {best[0]} head {best[1]} "
            f"{best[2]:.3f}; per layer max " + " ".join(
                f"{max(v for l, _, v in ind if l == k):.3f}" for k in range(hp["layers"]))
            + f"; sink {max(s[2] for s in scores):.3f} previous {max(s[3] for s in scores):.3f}"
            + f"; best at L 12 and 40 both: {both_lengths(ind):.3f}" + pool_probe(step))

    def pool_probe(step):
        """While a curriculum draws copy blocks from fewer ids, induction on blocks of those ids."""
        if copies is None or copies.ids_at(step) >= 2048:
            return ""
        small = dict(hp, vocab=copies.ids_at(step))
        ind = induction_scores(model, small, block_len=min(40, small["vocab"] - 3), blocks=4)
        best = max(ind, key=lambda r: r[2])
        return f"; on ids < {small['vocab']}: layer {best[0]} head {best[1]} {best[2]:.3f}"

    def both_lengths(ind40):
        """The best head's lower score over blocks of 12 and 40 tokens: a head at a fixed offset
        scores at one length only, an induction head at both."""
        ind12 = induction_scores(model, hp, block_len=12, blocks=4)
        return max(min(a[2], b[2]) for a, b in zip(ind40, ind12))

    train_started = time.time()
    recent, recent_copy = [], []
    last_step = (hp["stop_at"] or hp["steps"]) - 1
    for step in range(last_step + 1):
        if step < hp["warmup"]:
            lr = hp["lr"] * (step + 1) / hp["warmup"]
        else:
            t = (step - hp["warmup"]) / max(1, hp["steps"] - hp["warmup"])
            lr = hp["min_lr"] + 0.5 * (hp["lr"] - hp["min_lr"]) * (1 + math.cos(math.pi * t))
        for g in opt.param_groups:
            g["lr"] = lr
        x = batches.next()
        logits = model(x)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, hp["vocab"]), x[:, 1:].reshape(-1))
        total = loss
        if copies is not None:
            c, keep = copies.next(step)
            h = model.hidden(c)[:, :-1]
            if hp["copy_softmax"] == "vocab":  # logits only where a copy predicts the target
                copy_loss = F.cross_entropy(model.logits(h[keep]), c[:, 1:][keep])
            else:  # "block": a softmax over the row's own block ids only
                blocks = torch.stack([row[1:1 + hp["copy_len"] - 1] for row in c])
                logits = model.logits(h)
                cand = torch.gather(logits, 2, blocks[:, None, :].expand(-1, logits.shape[1], -1))
                # the candidates are the row's first copy region; mask ids repeated in it (short blocks)
                first = torch.arange(blocks.shape[1])[None, :] < keep.float().argmax(1)[:, None]
                cand = cand.masked_fill(~first[:, None, :], float("-inf"))
                target = (blocks[:, None, :] == c[:, 1:][:, :, None]).float().argmax(2)
                copy_loss = F.cross_entropy(cand[keep], target[keep])
            total = loss + hp["copy_weight"] * copy_loss
            recent_copy = (recent_copy + [copy_loss.item()])[-50:]
        opt.zero_grad(set_to_none=True)
        total.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), hp["clip"])
        opt.step()
        recent = (recent + [loss.item()])[-50:]
        if step % 50 == 0 or step == last_step:
            log(f"step {step} lr {lr:.5f} loss {loss.item():.4f} (mean of last 50: {np.mean(recent):.4f})"
                + (f"; copy loss {copy_loss.item():.4f} (last 50: {np.mean(recent_copy):.4f})"
                   if copies is not None else ""))
        if step % hp["probe_every"] == 0 or step == last_step:
            log(f"validation loss {validation_loss():.4f}")
            probe(step)
    train_seconds = time.time() - train_started

    model.eval()
    out = args.out
    write_safetensors(os.path.join(out, "model.safetensors"), hf_state(model))
    with open(os.path.join(out, "config.json"), "w") as f:
        f.write(json.dumps(config_json(hp), indent=2) + "\n")

    scores = head_scores(model, sentence_ids)
    induction = induction_scores(model, hp)
    sink = max(scores, key=lambda s: s[2])
    prev = max(scores, key=lambda s: s[3])
    ind = max(induction, key=lambda s: s[2])
    log(f"first-token mass: best layer {sink[0]} head {sink[1]}: {sink[2]:.3f}")
    log(f"previous-token: best layer {prev[0]} head {prev[1]}: {prev[3]:.3f}")
    log(f"induction: best layer {ind[0]} head {ind[1]}: {ind[2]:.3f}")
    report = {
        "hyperparameters": hp,
        "train_tokens": int(len(train_ids)), "validation_tokens": int(len(val_ids)),
        "token_stream_sha256": stream_hash,
        "final_train_loss_mean_last_50": float(np.mean(recent)),
        "final_copy_loss_mean_last_50": float(np.mean(recent_copy)) if recent_copy else None,
        "final_validation_loss": validation_loss(),
        "train_seconds": round(train_seconds),
        "torch": torch.__version__,
        "heads": [{"layer": l, "head": h, "first_token": round(f, 4), "previous_token": round(p, 4),
                   "induction": round(i, 4)}
                  for (l, h, f, p, _), (_, _, i) in zip(scores, induction)],
        "score_sentence": sentence,
        "sha256": {name: sha256(os.path.join(out, name)) for name in
                   ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")},
    }
    # Kept beside the folder, not in it: the model folder holds only what a loader reads.
    with open(out.rstrip("/") + ".training.json", "w") as f:
        f.write(json.dumps(report, indent=1) + "\n")
    log("done")


if __name__ == "__main__":
    main()
