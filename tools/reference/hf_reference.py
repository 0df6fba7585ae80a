"""An independent reference for attnscope's GPT-2 and BERT-style encoder forward passes.

Written after Hugging Face transformers' GPT2Model / GPT2LMHeadModel, BertModel, RobertaModel,
XLMRobertaModel and DistilBertModel (modeling_gpt2.py, modeling_bert.py, modeling_roberta.py,
modeling_xlm_roberta.py, modeling_distilbert.py: same module structure, same formulas, the
functions each class follows named in its docstring), in plain PyTorch, without any attnscope
code: it reads the .safetensors file itself (JSON header + numpy.frombuffer). Needs Debian's
python3-torch and python3-numpy, so run it with /usr/bin/python3.
"""
import json
import math

import numpy as np
from safetensors_np import read_safetensors  # noqa: F401 (re-exported)
import torch
from torch import nn
import torch.nn.functional as F


# ---- safetensors ---------------------------------------------------------------------------------

def base_model_state(tensors, prefix):
    """What from_pretrained does to a checkpoint: strip the head model's prefix ("transformer.",
    "bert."), rename TensorFlow-era LayerNorm gamma/beta, drop what the base model has no use for."""
    state = {}
    for name, value in tensors.items():
        if name.startswith(prefix):
            name = name[len(prefix):]
        name = name.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
        state[name] = torch.from_numpy(value)
    return state


# ---- GPT-2 (after transformers.models.gpt2.modeling_gpt2) ----------------------------------------

class Conv1D(nn.Module):
    """GPT-2's linear layer: weight stored [in x out], y = x·W + b."""

    def __init__(self, nx, nf):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.size(-1)), self.weight).reshape(*x.shape[:-1], -1)


def new_gelu(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GPT2Attention(nn.Module):
    def __init__(self, d, heads, positions):
        super().__init__()
        self.heads, self.head_dim = heads, d // heads
        self.c_attn = Conv1D(d, 3 * d)
        self.c_proj = Conv1D(d, d)
        self.register_buffer("bias", torch.tril(torch.ones(positions, positions, dtype=torch.bool))
                             .view(1, 1, positions, positions), persistent=False)

    def split_heads(self, x):  # [b, n, d] -> [b, h, n, dh]
        return x.view(*x.shape[:-1], self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.c_attn(x).split(self.heads * self.head_dim, dim=2)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        w = torch.matmul(q, k.transpose(-1, -2)) / torch.full([], v.size(-1) ** 0.5, dtype=q.dtype)
        n = q.size(-2)
        causal = self.bias[:, :, :n, :n]
        w = torch.where(causal, w, torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype))
        w = nn.functional.softmax(w, dim=-1)
        out = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
        out = out.view(*out.shape[:-2], self.heads * self.head_dim)
        return self.c_proj(out), w


class GPT2MLP(nn.Module):
    def __init__(self, d, inner):
        super().__init__()
        self.c_fc = Conv1D(d, inner)
        self.c_proj = Conv1D(inner, d)

    def forward(self, x):
        return self.c_proj(new_gelu(self.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(self, d, heads, positions, eps):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d, eps=eps)
        self.attn = GPT2Attention(d, heads, positions)
        self.ln_2 = nn.LayerNorm(d, eps=eps)
        self.mlp = GPT2MLP(d, 4 * d)

    def forward(self, x):
        a, w = self.attn(self.ln_1(x))
        x = x + a
        return x + self.mlp(self.ln_2(x)), w


class GPT2Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, positions = cfg["n_embd"], cfg["n_positions"]
        self.wte = nn.Embedding(cfg["vocab_size"], d)
        self.wpe = nn.Embedding(positions, d)
        self.h = nn.ModuleList(GPT2Block(d, cfg["n_head"], positions, cfg["layer_norm_epsilon"])
                               for _ in range(cfg["n_layer"]))
        self.ln_f = nn.LayerNorm(d, eps=cfg["layer_norm_epsilon"])

    def forward(self, ids, last_logits_only=False):
        """ids [b, n] -> (final hidden [b, n, d], logits of every position [b, n, V] as
        GPT2LMHeadModel computes them with the head tied to wte, attentions per layer [b, h, n, n]).
        With last_logits_only, logits for the last position only ([b, 1, V]): what attnscope
        computes (it shows the next token), for benchmarks of the same work."""
        pos = torch.arange(ids.size(-1)).unsqueeze(0)
        x = self.wte(ids) + self.wpe(pos)
        attentions = []
        for block in self.h:
            x, w = block(x)
            attentions.append(w)
        x = self.ln_f(x)
        return x, F.linear(x[:, -1:] if last_logits_only else x, self.wte.weight), attentions


# ---- BERT (after transformers.models.bert.modeling_bert) -----------------------------------------

class BertEmbeddings(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["hidden_size"]
        self.word_embeddings = nn.Embedding(cfg["vocab_size"], d)
        self.position_embeddings = nn.Embedding(cfg["max_position_embeddings"], d)
        self.token_type_embeddings = nn.Embedding(cfg["type_vocab_size"], d)
        self.LayerNorm = nn.LayerNorm(d, eps=cfg["layer_norm_eps"])

    def forward(self, ids, types=None):
        n = ids.size(1)
        if types is None:
            types = torch.zeros_like(ids)  # one sentence
        pos = torch.arange(n).unsqueeze(0)
        x = self.word_embeddings(ids) + self.token_type_embeddings(types) + self.position_embeddings(pos)
        return self.LayerNorm(x)


def create_position_ids_from_input_ids(ids, padding_idx):
    """After modeling_roberta.create_position_ids_from_input_ids (a RobertaEmbeddings method in
    newer releases): non-padding tokens count up from padding_idx + 1, padding tokens sit at
    padding_idx (fairseq's make_positions); no past key values here."""
    mask = ids.ne(padding_idx).int()
    return (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + padding_idx


class RobertaEmbeddings(BertEmbeddings):
    """After modeling_roberta.RobertaEmbeddings.forward: BERT's sum and LayerNorm with positions from
    create_position_ids_from_input_ids (padding_idx = config.pad_token_id); XLM-RoBERTa's
    XLMRobertaEmbeddings is the same code."""

    def __init__(self, cfg):
        super().__init__(cfg)
        self.padding_idx = cfg.get("pad_token_id", 1)

    def forward(self, ids, types=None):
        if types is None:
            types = torch.zeros_like(ids)
        pos = create_position_ids_from_input_ids(ids, self.padding_idx)
        x = self.word_embeddings(ids) + self.token_type_embeddings(types) + self.position_embeddings(pos)
        return self.LayerNorm(x)


class BertSelfAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads, self.head_dim = heads, d // heads
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)

    def split(self, x):
        return x.view(x.size()[:-1] + (self.heads, self.head_dim)).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = nn.functional.softmax(scores, dim=-1)  # no padding: the extended mask is all zeros
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size()[:-2] + (self.heads * self.head_dim,)), probs


class BertSelfOutput(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.dense = nn.Linear(d, d)
        self.LayerNorm = nn.LayerNorm(d, eps=eps)

    def forward(self, h, residual):
        return self.LayerNorm(self.dense(h) + residual)


class BertAttention(nn.Module):
    def __init__(self, d, heads, eps):
        super().__init__()
        setattr(self, "self", BertSelfAttention(d, heads))
        self.output = BertSelfOutput(d, eps)

    def forward(self, x):
        ctx, probs = getattr(self, "self")(x)
        return self.output(ctx, x), probs


class BertIntermediate(nn.Module):
    def __init__(self, d, inner, act):
        super().__init__()
        self.dense = nn.Linear(d, inner)
        self.act = act

    def forward(self, x):
        return F.gelu(self.dense(x)) if self.act == "gelu" else new_gelu(self.dense(x))


class BertOutput(nn.Module):
    def __init__(self, inner, d, eps):
        super().__init__()
        self.dense = nn.Linear(inner, d)
        self.LayerNorm = nn.LayerNorm(d, eps=eps)

    def forward(self, h, residual):
        return self.LayerNorm(self.dense(h) + residual)


class BertLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, inner, eps = cfg["hidden_size"], cfg["intermediate_size"], cfg["layer_norm_eps"]
        self.attention = BertAttention(d, cfg["num_attention_heads"], eps)
        self.intermediate = BertIntermediate(d, inner, cfg.get("hidden_act", "gelu"))
        self.output = BertOutput(inner, d, eps)

    def forward(self, x):
        a, probs = self.attention(x)
        return self.output(self.intermediate(a), a), probs


class BertEncoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(cfg) for _ in range(cfg["num_hidden_layers"]))


class BertModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embeddings = RobertaEmbeddings(cfg) if cfg.get("model_type") in ("roberta", "xlm-roberta") \
            else BertEmbeddings(cfg)
        self.encoder = BertEncoder(cfg)

    def forward(self, ids, token_types=None):
        """ids [b, n] (token_types [b, n], default 0) -> (last_hidden_state [b, n, d], attentions
        per layer [b, h, n, n])."""
        x = self.embeddings(ids, token_types)
        attentions = []
        for layer in self.encoder.layer:
            x, probs = layer(x)
            attentions.append(probs)
        return x, attentions


# ---- DistilBERT (after transformers.models.distilbert.modeling_distilbert) -----------------------

class DistilEmbeddings(nn.Module):
    """After modeling_distilbert.Embeddings.forward: word + position (arange; with
    sinusoidal_pos_embds the stored table is the sinusoidal one), LayerNorm with eps 1e-12, no token
    types."""

    def __init__(self, cfg):
        super().__init__()
        d = cfg["dim"]
        self.word_embeddings = nn.Embedding(cfg["vocab_size"], d)
        self.position_embeddings = nn.Embedding(cfg["max_position_embeddings"], d)
        self.LayerNorm = nn.LayerNorm(d, eps=1e-12)

    def forward(self, ids):
        pos = torch.arange(ids.size(1)).unsqueeze(0)
        return self.LayerNorm(self.word_embeddings(ids) + self.position_embeddings(pos))


class MultiHeadSelfAttention(nn.Module):
    """After modeling_distilbert.MultiHeadSelfAttention.forward: q scaled by 1/sqrt(dim_per_head)
    before q·kᵀ, softmax, context, out_lin."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads, self.head_dim = heads, d // heads
        self.q_lin, self.k_lin, self.v_lin = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.out_lin = nn.Linear(d, d)

    def forward(self, x):
        b = x.size(0)

        def shape(t):
            return t.view(b, -1, self.heads, self.head_dim).transpose(1, 2)

        q, k, v = shape(self.q_lin(x)), shape(self.k_lin(x)), shape(self.v_lin(x))
        q = q / math.sqrt(self.head_dim)
        weights = nn.functional.softmax(torch.matmul(q, k.transpose(2, 3)), dim=-1)  # no padding
        ctx = torch.matmul(weights, v).transpose(1, 2).contiguous().view(b, -1, self.heads * self.head_dim)
        return self.out_lin(ctx), weights


class FFN(nn.Module):
    """After modeling_distilbert.FFN.ff_chunk: lin1, activation ("gelu": erf form), lin2."""

    def __init__(self, cfg):
        super().__init__()
        self.lin1 = nn.Linear(cfg["dim"], cfg["hidden_dim"])
        self.lin2 = nn.Linear(cfg["hidden_dim"], cfg["dim"])
        self.act = cfg.get("activation", "gelu")

    def forward(self, x):
        h = self.lin1(x)
        return self.lin2(F.gelu(h) if self.act == "gelu" else new_gelu(h))


class TransformerBlock(nn.Module):
    """After modeling_distilbert.TransformerBlock.forward: post-LayerNorm (eps 1e-12) after
    attention (sa_layer_norm) and after the FFN (output_layer_norm), each with its residual."""

    def __init__(self, cfg):
        super().__init__()
        d = cfg["dim"]
        self.attention = MultiHeadSelfAttention(d, cfg["n_heads"])
        self.sa_layer_norm = nn.LayerNorm(d, eps=1e-12)
        self.ffn = FFN(cfg)
        self.output_layer_norm = nn.LayerNorm(d, eps=1e-12)

    def forward(self, x):
        sa, weights = self.attention(x)
        sa = self.sa_layer_norm(sa + x)
        return self.output_layer_norm(self.ffn(sa) + sa), weights


class Transformer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layer = nn.ModuleList(TransformerBlock(cfg) for _ in range(cfg["n_layers"]))


class DistilBertModel(nn.Module):
    """After modeling_distilbert.DistilBertModel.forward: embeddings, then the blocks."""

    def __init__(self, cfg):
        super().__init__()
        self.embeddings = DistilEmbeddings(cfg)
        self.transformer = Transformer(cfg)

    def forward(self, ids, token_types=None):
        """ids [b, n] -> (last_hidden_state [b, n, d], attentions per layer [b, h, n, n]);
        DistilBERT has no token types (token_types must be None)."""
        assert token_types is None, "DistilBERT has no token types"
        x = self.embeddings(ids)
        attentions = []
        for block in self.transformer.layer:
            x, weights = block(x)
            attentions.append(weights)
        return x, attentions


def load_model(folder, dtype=torch.float64):
    """The reference model of a Hugging Face folder (config.json + model.safetensors)."""
    with open(f"{folder}/config.json") as f:
        cfg = json.load(f)
    tensors = read_safetensors(f"{folder}/model.safetensors")
    if cfg["model_type"] == "gpt2":
        model, prefix = GPT2Model(cfg), "transformer."
    elif cfg["model_type"] == "bert":
        model, prefix = BertModel(cfg), "bert."
    elif cfg["model_type"] in ("roberta", "xlm-roberta"):  # XLMRobertaForMaskedLM: "roberta." too
        model, prefix = BertModel(cfg), "roberta."
    elif cfg["model_type"] == "distilbert":
        model, prefix = DistilBertModel(cfg), "distilbert."
    else:
        raise ValueError(f"unsupported model_type {cfg['model_type']}")
    state = base_model_state(tensors, prefix)
    wanted = model.state_dict().keys()
    missing = [k for k in wanted if k not in state]
    if missing:
        raise KeyError(f"{folder}: missing tensors {missing}")
    model.load_state_dict({k: state[k] for k in wanted})
    return model.to(dtype).eval(), cfg
