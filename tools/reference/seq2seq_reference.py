"""An independent float64 reference for attnscope's encoder–decoder families: bart, marian and t5
(T5 v1.0 and v1.1 / Flan-T5).

Written after Hugging Face transformers' modeling_bart.py, modeling_marian.py, modeling_t5.py,
configuration_bart.py, configuration_marian.py and configuration_t5.py (eager attention, the path
that returns attention weights), and generation/logits_process.py for the one generation rule
used (NoBadWordsLogitsProcessor). Plain numpy in float64, without any attnscope code; the weights
are read from model.safetensors by safetensors_np.read_safetensors (JSON header + numpy.frombuffer).
Each function names the HF class or function it follows.

    from seq2seq_reference import Seq2SeqReference
    ref = Seq2SeqReference("build/fixtures/t5-tiny")
    out = ref.forward(encoder_ids, decoder_ids)   # every layer's attention weights and the logits
    ids = ref.greedy(encoder_ids)                 # decoder ids from decoder_start_token_id
"""
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_np import read_safetensors  # noqa: E402


# ---- small functions ------------------------------------------------------------------------------

def linear(x, weight, bias=None):
    """nn.Linear: x @ W^T + b (W stored [out, in])."""
    y = x @ weight.T
    return y if bias is None else y + bias


def layer_norm(x, weight, bias, eps):
    """nn.LayerNorm over the last dimension (biased variance)."""
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def t5_layer_norm(x, weight, eps):
    """T5LayerNorm: RMS norm, no mean subtracted, no bias: weight * x / sqrt(mean(x^2) + eps)."""
    variance = (x ** 2).mean(-1, keepdims=True)
    return weight * (x / np.sqrt(variance + eps))


def softmax(x, axis=-1):
    x = x - x.max(axis=axis, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def gelu(x):
    """ACT2FN["gelu"]: the exact GELU, x * Phi(x) (erf)."""
    erf = np.vectorize(math.erf, otypes=[np.float64])
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def gelu_new(x):
    """ACT2FN["gelu_new"] (NewGELUActivation): the tanh approximation."""
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def silu(x):
    """ACT2FN["swish"] / ["silu"]: x * sigmoid(x)."""
    return x / (1.0 + np.exp(-x))


def relu(x):
    return np.maximum(x, 0.0)


ACTIVATIONS = {"gelu": gelu, "gelu_new": gelu_new, "swish": silu, "silu": silu, "relu": relu}


def causal_mask(n):
    """The decoder's causal mask (masking_utils / _prepare_4d_causal_attention_mask): -inf above the
    diagonal, so softmax gives those keys exactly 0."""
    return np.triu(np.full((n, n), -np.inf), k=1)


def attention(q, k, v, heads, head_dim, scale, bias=None):
    """eager_attention_forward: per head softmax(q k^T * scale + bias) v. q [n, heads*head_dim],
    k/v [m, heads*head_dim]; returns (output [n, heads*head_dim], weights [heads, n, m])."""
    n, m = q.shape[0], k.shape[0]
    qh = q.reshape(n, heads, head_dim).transpose(1, 0, 2)
    kh = k.reshape(m, heads, head_dim).transpose(1, 0, 2)
    vh = v.reshape(m, heads, head_dim).transpose(1, 0, 2)
    scores = qh @ kh.transpose(0, 2, 1) * scale
    if bias is not None:
        scores = scores + bias
    weights = softmax(scores, -1)
    out = (weights @ vh).transpose(1, 0, 2).reshape(n, heads * head_dim)
    return out, weights


# ---- positions ------------------------------------------------------------------------------------

def bart_learned_positions(weight, n, past=0):
    """BartLearnedPositionalEmbedding.forward: rows past+offset ... with offset 2 (fairseq's
    padding_idx + 1 hack; the table has max_position_embeddings + 2 rows)."""
    offset = 2
    return weight[np.arange(past, past + n) + offset]


def marian_sinusoids(n_positions, dim):
    """MarianSinusoidalPositionalEmbedding._init_weight: angle pos / 10000^(2*(j//2)/dim); sin of
    the even j in the first half of the columns, cos of the odd j in the second half (not
    interleaved); computed in float64 by numpy and stored in the float32 embedding (hence the
    float32 rounding here too). forward: positions past ... past+n-1, no offset."""
    position_enc = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)]
                             for pos in range(n_positions)])
    out = np.zeros((n_positions, dim), dtype=np.float32)
    sentinel = dim // 2 if dim % 2 == 0 else (dim // 2) + 1
    out[:, 0:sentinel] = np.sin(position_enc[:, 0::2])
    out[:, sentinel:] = np.cos(position_enc[:, 1::2])
    return out.astype(np.float64)


def t5_relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """T5Attention._relative_position_bucket. relative_position = key - query (integers). Exact
    buckets below max_exact = num_buckets/2 (per direction when bidirectional: the positive side
    starts at num_buckets/2 of the original), logarithmic ones up to max_distance, the last bucket
    beyond. HF computes the logarithmic part on float32 tensors (relative_position.float(),
    torch.log, the Python-float divisor taken as float32) and truncates with .to(torch.long); it is
    done the same way here, since at distances where the exact value is an integer (16, 32, 64
    with 32 buckets and max_distance 128: log(2)/log(16)*8 = 2) a rounding below it would give
    one bucket less. (For the settings of the fixtures and distances below 700 float32 and float64
    give the same buckets; tests/tools/seq2seq_reference_test.py checks both.)"""
    rp = np.asarray(relative_position, dtype=np.int64)
    buckets = np.zeros_like(rp)
    if bidirectional:
        num_buckets //= 2
        buckets += (rp > 0).astype(np.int64) * num_buckets
        rp = np.abs(rp)
    else:
        rp = -np.minimum(rp, 0)
    max_exact = num_buckets // 2
    is_small = rp < max_exact
    with np.errstate(divide="ignore"):
        large = np.log(rp.astype(np.float32) / np.float32(max_exact))
    large = large / np.float32(math.log(max_distance / max_exact))
    large = large * np.float32(num_buckets - max_exact)
    with np.errstate(invalid="ignore"):
        large = max_exact + np.trunc(np.where(is_small, 0, large)).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return buckets + np.where(is_small, rp, large)


def t5_compute_bias(table, query_length, key_length, bidirectional, num_buckets, max_distance):
    """T5Attention.compute_bias: relative_position = memory_position - context_position, bucketed,
    looked up in relative_attention_bias [num_buckets, heads]; returns [heads, q, k]."""
    context = np.arange(query_length)[:, None]
    memory = np.arange(key_length)[None, :]
    bucket = t5_relative_position_bucket(memory - context, bidirectional, num_buckets, max_distance)
    return table[bucket].transpose(2, 0, 1)


# ---- configurations -------------------------------------------------------------------------------

def load_folder(folder):
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    weights = {k: v.astype(np.float64) for k, v in read_safetensors(os.path.join(folder, "model.safetensors")).items()}
    return cfg, weights


class Seq2SeqReference:
    """forward(encoder_ids, decoder_ids) -> dict(encoder_attention [layer][head][s][s],
    decoder_attention [layer][head][t][t], cross_attention [layer][head][t][s], logits [t][vocab]).
    greedy(encoder_ids, max_new_tokens=64) -> decoder ids, starting with decoder_start_token_id."""

    def __init__(self, folder):
        self.cfg, self.w = load_folder(folder)
        self.kind = self.cfg["model_type"]
        c = self.cfg
        if self.kind in ("bart", "marian"):
            # BartConfig / MarianConfig: the keys named; defaults where a config leaves them out.
            self.d_model = c.get("d_model", 1024)
            self.enc_layers = c.get("encoder_layers", 12)
            self.dec_layers = c.get("decoder_layers", 12)
            self.enc_heads = c.get("encoder_attention_heads", 16)
            self.dec_heads = c.get("decoder_attention_heads", 16)
            self.act = ACTIVATIONS[c.get("activation_function", "gelu")]
            self.embed_scale = math.sqrt(self.d_model) if c.get("scale_embedding", False) else 1.0
            self.vocab = c["vocab_size"]
            self.eps = 1e-5  # nn.LayerNorm's default, as BartEncoderLayer/MarianEncoderLayer use it
            self.decoder_start = c["decoder_start_token_id"]
            self.eos = c["eos_token_id"]
            self.pad = c["pad_token_id"]
            if self.kind == "marian":
                self.positions = marian_sinusoids(c.get("max_position_embeddings", 1024), self.d_model)
        elif self.kind == "t5":
            # T5Config.__init__: num_decoder_layers defaults to num_layers; feed_forward_proj
            # "relu" or "gated-act"; "gated-gelu" means gelu_new; tie_word_embeddings (a
            # PretrainedConfig key) defaults to True.
            self.d_model = c.get("d_model", 512)
            self.d_kv = c.get("d_kv", 64)
            self.heads = c.get("num_heads", 8)
            self.enc_heads = self.dec_heads = self.heads
            self.enc_layers = c.get("num_layers", 6)
            self.dec_layers = c.get("num_decoder_layers") or self.enc_layers
            self.buckets = c.get("relative_attention_num_buckets", 32)
            self.max_distance = c.get("relative_attention_max_distance", 128)
            self.eps = c.get("layer_norm_epsilon", 1e-6)
            proj = c.get("feed_forward_proj", "relu")
            parts = proj.split("-")
            self.gated = parts[0] == "gated"
            self.act = ACTIVATIONS["gelu_new" if proj == "gated-gelu" else parts[-1]]
            self.tied = c.get("tie_word_embeddings", True)
            self.vocab = c.get("vocab_size", 32128)
            self.decoder_start = c.get("decoder_start_token_id", 0)
            self.eos = c.get("eos_token_id", 1)
            self.pad = c.get("pad_token_id", 0)
        else:
            raise ValueError(f"model_type {self.kind} is not an encoder-decoder of this reference")
        # The generation settings greedy decoding applies (GenerationMixin._get_logits_processor):
        # from generation_config.json when the folder has one (GenerationConfig.from_pretrained:
        # keys it lacks take GenerationConfig's defaults), else from config.json
        # (GenerationConfig.from_model_config).
        gen_path = os.path.join(folder, "generation_config.json")
        gen = c
        if os.path.exists(gen_path):
            with open(gen_path) as f:
                gen = json.load(f)
            self.decoder_start = gen.get("decoder_start_token_id", self.decoder_start)
            eos = gen.get("eos_token_id", self.eos)
            self.eos = eos[0] if isinstance(eos, list) else eos
        self.bad_words = [list(b) for b in (gen.get("bad_words_ids") or [])]
        self.banned = sorted({b[0] for b in self.bad_words if len(b) == 1})
        self.no_repeat_ngram_size = gen.get("no_repeat_ngram_size") or 0
        self.min_length = gen.get("min_length") or 0
        self.forced_bos = gen.get("forced_bos_token_id")
        forced_eos = gen.get("forced_eos_token_id")
        self.forced_eos = forced_eos[0] if isinstance(forced_eos, list) else forced_eos

    # ---- BART / Marian (modeling_bart.py, modeling_marian.py) ------------------------------------

    def _bart_attention(self, prefix, x, kv, heads, mask=None):
        """BartAttention.forward (MarianAttention is a copy): q_proj(x) scaled by head_dim^-0.5
        (eager_attention_forward's scaling), k_proj/v_proj of kv (the encoder output for
        cross-attention), out_proj of the heads' outputs."""
        w = self.w
        head_dim = self.d_model // heads
        q = linear(x, w[prefix + "q_proj.weight"], w[prefix + "q_proj.bias"])
        k = linear(kv, w[prefix + "k_proj.weight"], w[prefix + "k_proj.bias"])
        v = linear(kv, w[prefix + "v_proj.weight"], w[prefix + "v_proj.bias"])
        out, weights = attention(q, k, v, heads, head_dim, head_dim ** -0.5, mask)
        return linear(out, w[prefix + "out_proj.weight"], w[prefix + "out_proj.bias"]), weights

    def _ln(self, prefix, x):
        return layer_norm(x, self.w[prefix + ".weight"], self.w[prefix + ".bias"], self.eps)

    def _bart_embed(self, side, ids):
        """BartEncoder/BartDecoder.forward (MarianEncoder/MarianDecoder): embed_tokens(ids) *
        embed_scale (BartScaledWordEmbedding; sqrt(d_model) with scale_embedding) + positions; BART
        then layernorm_embedding, Marian nothing more."""
        w = self.w
        x = w["model.shared.weight"][ids] * self.embed_scale
        if self.kind == "bart":
            x = x + bart_learned_positions(w[f"model.{side}.embed_positions.weight"], len(ids))
            x = self._ln(f"model.{side}.layernorm_embedding", x)
        else:
            x = x + self.positions[:len(ids)]
        return x

    def _bart_ffn(self, p, x):
        w = self.w
        h = self.act(linear(x, w[p + "fc1.weight"], w[p + "fc1.bias"]))
        return linear(h, w[p + "fc2.weight"], w[p + "fc2.bias"])

    def _bart_encoder(self, ids):
        """BartEncoderLayer.forward (post-norm): x = LN(x + self_attn(x)); x = LN(x + fc2(act(fc1(x))))."""
        x = self._bart_embed("encoder", ids)
        attn = []
        for l in range(self.enc_layers):
            p = f"model.encoder.layers.{l}."
            h, a = self._bart_attention(p + "self_attn.", x, x, self.enc_heads)
            x = self._ln(p + "self_attn_layer_norm", x + h)
            x = self._ln(p + "final_layer_norm", x + self._bart_ffn(p, x))
            attn.append(a)
        return x, attn

    def _bart_decoder(self, ids, enc):
        """BartDecoderLayer.forward: causal self-attention, cross-attention on the encoder output,
        the FFN, each followed by its LayerNorm after the residual sum. Logits
        (BartForConditionalGeneration / MarianMTModel): lm_head (tied to shared) + final_logits_bias."""
        w = self.w
        x = self._bart_embed("decoder", ids)
        self_attn, cross = [], []
        mask = causal_mask(len(ids))
        for l in range(self.dec_layers):
            p = f"model.decoder.layers.{l}."
            h, a = self._bart_attention(p + "self_attn.", x, x, self.dec_heads, mask)
            x = self._ln(p + "self_attn_layer_norm", x + h)
            h, c = self._bart_attention(p + "encoder_attn.", x, enc, self.dec_heads)
            x = self._ln(p + "encoder_attn_layer_norm", x + h)
            x = self._ln(p + "final_layer_norm", x + self._bart_ffn(p, x))
            self_attn.append(a)
            cross.append(c)
        head = w.get("lm_head.weight", w["model.shared.weight"])
        logits = x @ head.T + w["final_logits_bias"][0]
        return logits, self_attn, cross

    # ---- T5 (modeling_t5.py) ---------------------------------------------------------------------

    def _t5_attention(self, p, x, kv, bias):
        """T5Attention.forward: q/k/v/o without biases, inner dim num_heads * d_kv, NO 1/sqrt(d)
        scaling (Mesh TensorFlow folds it into the initialisation), scores + position_bias."""
        w = self.w
        q = linear(x, w[p + "q.weight"])
        k = linear(kv, w[p + "k.weight"])
        v = linear(kv, w[p + "v.weight"])
        out, weights = attention(q, k, v, self.heads, self.d_kv, 1.0, bias)
        return linear(out, w[p + "o.weight"]), weights

    def _t5_ff(self, p, x):
        """T5LayerFF: x + DenseReluDense(layer_norm(x)); T5DenseActDense wo(act(wi(h))) or
        T5DenseGatedActDense wo(act(wi_0(h)) * wi_1(h))."""
        w = self.w
        h = t5_layer_norm(x, w[p + "layer_norm.weight"], self.eps)
        d = p + "DenseReluDense."
        if self.gated:
            h = self.act(linear(h, w[d + "wi_0.weight"])) * linear(h, w[d + "wi_1.weight"])
        else:
            h = self.act(linear(h, w[d + "wi.weight"]))
        return x + linear(h, w[d + "wo.weight"])

    def _t5_encoder(self, ids):
        """T5Stack (encoder): embed_tokens(ids) unscaled; block 0's relative_attention_bias gives
        the (bidirectional) position_bias every block reuses; T5LayerSelfAttention: x +
        SelfAttention(layer_norm(x)); final_layer_norm."""
        w = self.w
        x = w["shared.weight"][ids]
        n = len(ids)
        bias = t5_compute_bias(w["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"],
                               n, n, True, self.buckets, self.max_distance)
        attn = []
        for l in range(self.enc_layers):
            p = f"encoder.block.{l}.layer."
            h = t5_layer_norm(x, w[p + "0.layer_norm.weight"], self.eps)
            h, a = self._t5_attention(p + "0.SelfAttention.", h, h, bias)
            x = x + h
            x = self._t5_ff(p + "1.", x)
            attn.append(a)
        return t5_layer_norm(x, w["encoder.final_layer_norm.weight"], self.eps), attn

    def _t5_decoder(self, ids, enc):
        """T5Stack (decoder): position_bias from the decoder's block 0 (unidirectional buckets) plus
        the causal mask; T5LayerCrossAttention: x + EncDecAttention(layer_norm(x), encoder output)
        with a zero position bias; T5LayerFF; final_layer_norm. T5ForConditionalGeneration: with
        tie_word_embeddings the output is scaled by d_model^-0.5 before the lm head (shared)."""
        w = self.w
        x = w["shared.weight"][ids]
        n = len(ids)
        bias = t5_compute_bias(w["decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"],
                               n, n, False, self.buckets, self.max_distance) + causal_mask(n)
        self_attn, cross = [], []
        for l in range(self.dec_layers):
            p = f"decoder.block.{l}.layer."
            h = t5_layer_norm(x, w[p + "0.layer_norm.weight"], self.eps)
            h, a = self._t5_attention(p + "0.SelfAttention.", h, h, bias)
            x = x + h
            h = t5_layer_norm(x, w[p + "1.layer_norm.weight"], self.eps)
            h, c = self._t5_attention(p + "1.EncDecAttention.", h, enc, None)
            x = x + h
            x = self._t5_ff(p + "2.", x)
            self_attn.append(a)
            cross.append(c)
        x = t5_layer_norm(x, w["decoder.final_layer_norm.weight"], self.eps)
        if self.tied:
            logits = (x * self.d_model ** -0.5) @ w["shared.weight"].T
        else:
            logits = x @ w["lm_head.weight"].T
        return logits, self_attn, cross

    # ---- the model ---------------------------------------------------------------------------

    def encode(self, encoder_ids):
        return self._t5_encoder(encoder_ids) if self.kind == "t5" else self._bart_encoder(encoder_ids)

    def forward(self, encoder_ids, decoder_ids):
        enc, enc_attn = self.encode(list(encoder_ids))
        if self.kind == "t5":
            logits, dec_attn, cross = self._t5_decoder(list(decoder_ids), enc)
        else:
            logits, dec_attn, cross = self._bart_decoder(list(decoder_ids), enc)
        return {"encoder_attention": enc_attn, "decoder_attention": dec_attn,
                "cross_attention": cross, "logits": logits}

    def next_token_scores(self, logits_row, ids, max_length):
        """The scores greedy decoding takes the argmax of after `ids` (the decoder's ids so far,
        decoder_start_token_id first): the model's logits through the processors generate builds
        from the generation settings, in _get_logits_processor's order. max_length = 1 +
        max_new_tokens, as generate sets it for an encoder-decoder's one start token."""
        scores = logits_row.copy()
        cur_len = len(ids)
        n = self.no_repeat_ngram_size
        if n > 0 and cur_len + 1 >= n:
            # NoRepeatNGramLogitsProcessor (_get_ngrams, _get_generated_ngrams): a token that would
            # repeat an n-gram the ids already hold.
            prefix = tuple(ids[cur_len - n + 1:]) if n > 1 else ()
            for i in range(cur_len - n + 1):
                if tuple(ids[i:i + n - 1]) == prefix:
                    scores[ids[i + n - 1]] = -np.inf
        for bad in self.bad_words:
            # NoBadWordsLogitsProcessor: the last token of a sequence whose other tokens end ids.
            if len(bad) == 1 or (len(bad) - 1 <= cur_len and ids[cur_len - len(bad) + 1:] == bad[:-1]):
                scores[bad[-1]] = -np.inf
        if self.min_length > 0 and cur_len < self.min_length:
            scores[self.eos] = -np.inf  # MinLengthLogitsProcessor
        if self.forced_bos is not None and cur_len == 1:
            scores[:] = -np.inf  # ForcedBOSTokenLogitsProcessor
            scores[self.forced_bos] = 0
        if self.forced_eos is not None and cur_len == max_length - 1:
            scores[:] = -np.inf  # ForcedEOSTokenLogitsProcessor
            scores[self.forced_eos] = 0
        return scores

    def greedy(self, encoder_ids, max_new_tokens=64):
        """Greedy search (generate with num_beams=1, do_sample=False: GenerationMixin._sample
        without sampling): decoder_start_token_id, then the argmax of each step's processed scores
        (next_token_scores) until eos_token_id (kept) or max_new_tokens new tokens. Recomputes the
        whole decoder each step (no cache): the same numbers, simpler."""
        enc, _ = self.encode(list(encoder_ids))
        ids = [self.decoder_start]
        for _ in range(max_new_tokens):
            if self.kind == "t5":
                logits, _, _ = self._t5_decoder(ids, enc)
            else:
                logits, _, _ = self._bart_decoder(ids, enc)
            token = int(np.argmax(self.next_token_scores(logits[-1], ids, max_new_tokens + 1)))
            ids.append(token)
            if token == self.eos:
                break
        return ids
