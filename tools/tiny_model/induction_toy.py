#!/usr/bin/python3
"""A toy for the induction-head experiments of assets/tiny_model.md: a small decoder (pre-norm
attention layers with RoPE, optional SwiGLU MLPs, tied or untied output head) trained only on
copy rows ("<s>", then a block of L distinct random ids, L uniform in 8..--L, repeated to the end
of an --n-token row; the loss counted from the second copy on). It prints the copy loss every 100
steps: an induction head shows as the fall from the plateau (ln of the id count, then "some token
of the block" at about ln L) to ~0. Each run takes a minute or two on one core, so it isolates
what slows the phase change (init scale, tied embeddings, depth, MLPs, vocabulary) far faster
than the full model. One thread, fixed seeds.

    /usr/bin/python3 tools/tiny_model/induction_toy.py --vocab 64 --L 40 --n 96 --batch 32 \
        --d 128 --lr 3e-3 --wd 0.1 --b2 0.95 [--tied 1] [--std 0.088] [--layers 4] [--mlp 1]
"""
import time, torch, torch.nn as nn, torch.nn.functional as F, numpy as np
import argparse
ap = argparse.ArgumentParser()
ap.add_argument("--vocab", type=int, default=64)
ap.add_argument("--L", type=int, default=20)
ap.add_argument("--d", type=int, default=64)
ap.add_argument("--layers", type=int, default=2)
ap.add_argument("--batch", type=int, default=64)
ap.add_argument("--lr", type=float, default=1e-3)
ap.add_argument("--steps", type=int, default=2000)
ap.add_argument("--n", type=int, default=0)
ap.add_argument("--std", type=float, default=0)
ap.add_argument("--tied", type=int, default=0)
ap.add_argument("--wd", type=float, default=0.01)
ap.add_argument("--b2", type=float, default=0.999)
ap.add_argument("--mlp", type=int, default=0)
ap.add_argument("--rope", type=int, default=1)
a = ap.parse_args()
torch.manual_seed(0); torch.set_num_threads(1)
V, L, d, H = a.vocab, a.L, a.d, 4
dh = d // H
class Attn(nn.Module):
    def __init__(s):
        super().__init__(); s.qkv = nn.Linear(d, 3 * d, bias=False); s.o = nn.Linear(d, d, bias=False); s.n = nn.LayerNorm(d)
        if a.mlp: s.gate = nn.Linear(d, 3 * d, bias=False); s.up = nn.Linear(d, 3 * d, bias=False); s.down = nn.Linear(3 * d, d, bias=False); s.n2 = nn.LayerNorm(d)
    def forward(s, x, cos, sin):
        b, n, _ = x.shape
        q, k, v = s.qkv(s.n(x)).view(b, n, 3, H, dh).permute(2, 0, 3, 1, 4)
        if a.rope:
            def r(t):
                h = dh // 2; return t * cos + torch.cat((-t[..., h:], t[..., :h]), -1) * sin
            q, k = r(q), r(k)
        w = torch.softmax((q @ k.transpose(-1, -2)) / dh ** .5 + torch.full((n, n), -1e9).triu(1), -1)
        x = x + s.o((w @ v).transpose(1, 2).reshape(b, n, d))
        if a.mlp: x = x + s.down(F.silu(s.gate(s.n2(x))) * s.up(s.n2(x)))
        return x
emb = nn.Embedding(V, d); pos = nn.Embedding(512, d)
layers = nn.ModuleList(Attn() for _ in range(a.layers)); head = nn.Linear(d, V, bias=False)
if a.std > 0:
    for mod in [emb, head, *layers]:
        for nm, p_ in mod.named_parameters():
            if p_.dim() == 2: nn.init.normal_(p_, 0.0, a.std)
params = list(emb.parameters()) + list(layers.parameters()) + list(head.parameters()) + ([] if a.rope else list(pos.parameters()))
fn = nn.LayerNorm(d); params += list(fn.parameters())
opt = torch.optim.AdamW(params, lr=a.lr, weight_decay=a.wd, betas=(0.9, a.b2))
n = 2 * L + 1
n = a.n if a.n else n
inv = 1.0 / (10000 ** (torch.arange(0, dh, 2).float() / dh)); fr = torch.arange(n)[:, None] * inv[None]
e2 = torch.cat((fr, fr), -1); cos, sin = e2.cos(), e2.sin()
rng = np.random.RandomState(0); t0 = time.time()
def batch():
    rows = np.zeros((a.batch, n), int); mask = np.zeros((a.batch, n - 1), bool)
    for r in range(a.batch):
        l = rng.randint(8, L + 1); blk = rng.choice(V - 1, l, replace=False) + 1
        rows[r, 1:] = np.tile(blk, n // l + 1)[:n - 1]; mask[r, l:] = True
    return torch.from_numpy(rows), torch.from_numpy(mask)
for step in range(a.steps + 1):
    x, m = batch()
    h = emb(x) + (0 if a.rope else pos(torch.arange(x.shape[1])))
    ws = []
    for l in layers: h = l(h, cos, sin)
    hh = fn(h) if a.tied else h
    logits = (hh @ emb.weight.T if a.tied else head(h))[:, :-1][m]
    loss = F.cross_entropy(logits, x[:, 1:][m])
    opt.zero_grad(); loss.backward(); opt.step()
    if step % 100 == 0: print(f"{time.time()-t0:5.0f}s step {step} loss {loss.item():.3f}", flush=True)
