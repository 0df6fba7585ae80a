"""show(model, tokenizer, text): run a transformers model on a text and show its attention.

transformers is never imported: the model is anything called as model(input_ids=...,
attention_mask=..., output_attentions=True) that returns an object with .attentions (one
[1, heads, n, n] tensor per layer), the tokenizer anything called as tokenizer(text,
return_tensors="pt", ...) that gives "input_ids" and converts ids back to tokens.
"""
import warnings

from ._arrays import to_numpy
from ._trace import build_trace
from ._views import show_trace

# Attention implementations that compute no weights: output_attentions gets None (or, in older
# transformers, a silent fallback to eager with a warning).
_FUSED = ("sdpa", "flash_attention_2", "flash_attention_3", "flex_attention")


def _attn_implementation(model):
    config = getattr(model, "config", None)
    for key in ("_attn_implementation", "attn_implementation"):
        value = getattr(config, key, None)
        if isinstance(value, str):
            return key, value
    return None, None


class _EagerAttention:
    """Switches a model loaded with SDPA/flash attention to eager attention for one call (with a
    warning that says why), and back."""

    def __init__(self, model):
        self.model = model
        self.key, self.before = _attn_implementation(model)
        self.switched = False

    def __enter__(self):
        if self.before not in _FUSED:
            return self
        warnings.warn(
            f"attnscope.show: the model computes attention with {self.before!r}, which returns "
            "no attention weights; running it with attn_implementation=\"eager\" for this call "
            "(load it with from_pretrained(..., attn_implementation=\"eager\") to avoid this)",
            stacklevel=3)
        setter = getattr(self.model, "set_attn_implementation", None)
        if callable(setter):
            setter("eager")
        else:
            setattr(self.model.config, self.key, "eager")
        self.switched = True
        return self

    def __exit__(self, *exc):
        if self.switched:
            setter = getattr(self.model, "set_attn_implementation", None)
            if callable(setter):
                setter(self.before)
            else:
                setattr(self.model.config, self.key, self.before)
        return False


def _first_row(x, ndim=1):
    """Batch item 0 of a [1, n] (or [1, n, 2]) tensor or list; [n] (or [n, 2]) as it is."""
    a = to_numpy(x)
    return a[0] if a.ndim == ndim + 1 else a


def encode(tokenizer, text):
    """(input_ids tensor [1, n], attention_mask or None, ids, offsets or None, special mask)."""
    try:
        enc = tokenizer(text, return_tensors="pt", return_offsets_mapping=True,
                        return_special_tokens_mask=True)
    except (NotImplementedError, TypeError, ValueError):
        # A slow (Python) tokenizer has no offsets.
        enc = tokenizer(text, return_tensors="pt", return_special_tokens_mask=True)
    ids_t = enc["input_ids"]
    if ids_t.shape[0] != 1:
        raise ValueError(f"the tokenizer gave a batch of {ids_t.shape[0]}: pass one text")
    ids = [int(i) for i in _first_row(ids_t)]
    offsets = enc.get("offset_mapping") if hasattr(enc, "get") else None
    offsets = [tuple(int(v) for v in o) for o in _first_row(offsets, 2)] if offsets is not None \
        else None
    special = enc.get("special_tokens_mask") if hasattr(enc, "get") else None
    special = [bool(s) for s in _first_row(special)] if special is not None else [False] * len(ids)
    mask = enc.get("attention_mask") if hasattr(enc, "get") else None
    return ids_t, mask, ids, offsets, special


def token_objects(text, pieces, ids, offsets, special):
    """The trace's tokens: character offsets become UTF-8 byte offsets into `text`; special
    tokens (and tokens without a span) get -1."""
    byte_at = [0]
    for ch in text:
        byte_at.append(byte_at[-1] + len(ch.encode("utf-8")))
    tokens = []
    for i, piece in enumerate(pieces):
        start = end = -1
        if offsets is not None and not special[i]:
            s, e = offsets[i]
            if 0 <= s <= e <= len(text) and (s, e) != (0, 0):
                start, end = byte_at[s], byte_at[e]
        tokens.append({"id": ids[i], "text": piece, "start": start, "end": end,
                       "special": special[i]})
    return tokens


def trace_model(model, tokenizer, text):
    """The Trace of `model` on `text`, as show() sends it: output_attentions=True with eager
    attention (a model loaded with SDPA or flash attention is switched to eager for the call, with
    a warning, and back), the tokenizer's tokens with their ids, their spans in the text as UTF-8
    byte offsets (from offset_mapping; a slow tokenizer without offsets gives none) and which are
    special ([CLS], <s>: special_tokens_mask), model name and kind from model.config."""
    import torch  # a transformers model is a torch module

    if getattr(getattr(model, "config", None), "is_encoder_decoder", False):
        raise ValueError("show() runs encoder-only and decoder-only models; for an "
                         "encoder-decoder pass encoder_attention, decoder_attention, "
                         "cross_attention and both token lists to head_view()")
    ids_t, mask, ids, offsets, special = encode(tokenizer, text)
    pieces = tokenizer.convert_ids_to_tokens(ids)
    kwargs = {"output_attentions": True}
    if mask is not None:
        kwargs["attention_mask"] = mask
    with torch.no_grad(), _EagerAttention(model):
        was_training = getattr(model, "training", False)
        if was_training and hasattr(model, "eval"):
            model.eval()
        try:
            out = model(input_ids=ids_t, **kwargs)
        finally:
            if was_training and hasattr(model, "train"):
                model.train()
    attentions = getattr(out, "attentions", None)
    if attentions is None and isinstance(out, dict):
        attentions = out.get("attentions")
    if attentions is None or any(a is None for a in attentions):
        _, impl = _attn_implementation(model)
        raise ValueError(f"the model returned no attention weights (attention implementation "
                         f"{impl!r}): load it with attn_implementation=\"eager\"")
    config = getattr(model, "config", None)
    name = getattr(config, "_name_or_path", None) or getattr(config, "name_or_path", None) \
        or type(model).__name__
    kind = getattr(config, "model_type", None) or "external"
    return build_trace(attentions, token_objects(text, pieces, ids, offsets, special),
                       text=text, model_name=str(name), model_kind=str(kind), backend="pytorch")


def show(model, tokenizer, text, layer=None, head=None):
    """Runs `model` (a transformers model: AutoModel, AutoModelForCausalLM, …) on `text` and shows
    its attention in the running attnscope window (started when none is open); see trace_model.
    layer/head are checked against the model (the window keeps its own selection). Returns the
    Trace (attnscope.save_trace writes it, attnscope.render_trace draws it)."""
    trace = trace_model(model, tokenizer, text)
    model_info = trace.meta["model"]
    if layer is not None and not 0 <= int(layer) < model_info["layers"]:
        raise ValueError(f"layer {layer}: the model has {model_info['layers']} layers")
    if head is not None and not 0 <= int(head) < model_info["heads"]:
        raise ValueError(f"head {head}: the model has {model_info['heads']} heads")
    show_trace(trace)
    return trace
