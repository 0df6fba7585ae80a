"""Attention arrays as transformers gives them (a tuple of [batch, heads, q, k] tensors, one per
layer; torch or numpy), checked and turned into one float32 numpy array [layers, heads, q, k]."""
import numpy as np

# attnscope's reader accepts a row whose weights sum to 1 within this (core/trace/trace_reader.h).
ROW_SUM_TOLERANCE = 1e-3


def to_numpy(x):
    """A torch tensor (any device, with or without grad) or anything numpy takes, as a numpy
    array. torch is never imported: a tensor is recognised by its detach()/cpu() methods."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu()
        if str(getattr(x, "dtype", "")) == "torch.bfloat16":  # numpy has no bfloat16
            x = x.float()
        x = x.numpy()
    return np.asarray(x)


def stack_layers(attention, name="attention"):
    """[layers, heads, q, k] float32 from a per-layer sequence of [1, heads, q, k] arrays.
    ValueError names what is wrong: not a sequence, wrong rank, a batch other than 1, layers of
    different shapes. Half-precision rows (bfloat16, float16) are renormalised to sum to 1."""
    if attention is None:
        raise ValueError(f"'{name}' is required")
    if hasattr(attention, "shape") and len(getattr(attention, "shape")) == 5:
        # One stacked array [layers, batch, heads, q, k] (torch.stack(outputs.attentions)).
        attention = [attention[i] for i in range(attention.shape[0])]
    if hasattr(attention, "shape") and len(getattr(attention, "shape")) == 4:
        raise ValueError(f"'{name}' is one array of shape {tuple(attention.shape)}: pass one "
                         "[batch, heads, query, key] array per layer (outputs.attentions, or "
                         "[array] for a single layer)")
    if isinstance(attention, (str, bytes)) or not hasattr(attention, "__len__"):
        raise ValueError(f"'{name}' must be a tuple or list with one [batch, heads, query, key] "
                         f"array per layer (outputs.attentions), found {type(attention).__name__}")
    if len(attention) == 0:
        raise ValueError(f"'{name}' has no layers")
    layers = []
    low_precision = False
    for i, layer in enumerate(attention):
        if layer is None:
            raise ValueError(
                f"{name}[{i}] is None: the model returned no attention weights. Load it with "
                "attn_implementation=\"eager\" (SDPA and flash attention do not return them) and "
                "call it with output_attentions=True")
        low_precision |= str(getattr(layer, "dtype", "")) in ("torch.bfloat16", "torch.float16",
                                                              "float16")
        a = to_numpy(layer)
        if a.ndim != 4:
            raise ValueError(
                f"{name}[{i}] has shape {tuple(a.shape)}: expected 4 dimensions [batch, heads, "
                "query, key]. Make sure you set output_attentions=True when calling the model")
        if a.shape[0] != 1:
            raise ValueError(f"{name}[{i}] has a batch of {a.shape[0]}: expected 1 (pass one "
                             f"input, or {name}[layer][b:b+1] for item b)")
        if layers and a.shape != layers[0].shape:
            raise ValueError(f"{name}[{i}] has shape {tuple(a.shape)} but {name}[0] has "
                             f"{tuple(layers[0].shape)}: every layer must have the same heads "
                             "and tokens")
        if not np.issubdtype(a.dtype, np.number):
            raise ValueError(f"{name}[{i}] holds {a.dtype}, not numbers")
        layers.append(a)
    out = np.stack([a[0] for a in layers]).astype(np.float32)
    if low_precision:
        # bfloat16 keeps 8 bits of mantissa: a softmax row's sum is off by up to ~0.4%, past the
        # reader's 1e-3. Rows within 2% of 1 are renormalised in float32; others stay as they are
        # for check_weights to report.
        sums = out.astype(np.float64).sum(axis=-1, keepdims=True)
        near = np.abs(sums - 1) < 2e-2
        out = np.where(near, out / np.where(near, sums, 1), out).astype(np.float32)
    return out


def check_weights(a, name, causal=False):
    """Finite weights in [0, 1], every row summing to 1 (attnscope's reader refuses anything else);
    with causal, nothing above the diagonal. `a` is [layers, heads, q, k]."""
    bad = ~np.isfinite(a)
    if bad.any():
        l, h, q, k = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(f"{name}[{l}][0, {h}, {q}, {k}] is {a[l, h, q, k]}: weights must be "
                         "finite")
    out = (a < 0) | (a > 1)
    if out.any():
        l, h, q, k = (int(v) for v in np.argwhere(out)[0])
        raise ValueError(f"{name}[{l}][0, {h}, {q}, {k}] is {a[l, h, q, k]:.6g}: attention "
                         "weights lie in [0, 1] (pass the softmax's output, not the scores)")
    sums = a.astype(np.float64).sum(axis=-1)
    off = np.abs(sums - 1) > ROW_SUM_TOLERANCE
    if off.any():
        l, h, q = (int(v) for v in np.argwhere(off)[0])
        raise ValueError(f"{name}[{l}][0, {h}, {q}, :] sums to {sums[l, h, q]:.6g}: every query's "
                         "weights must sum to 1")
    if causal and a.shape[-1] == a.shape[-2]:
        upper = np.triu(np.ones(a.shape[-2:], dtype=bool), k=1)
        above = (a != 0) & upper
        if above.any():
            l, h, q, k = (int(v) for v in np.argwhere(above)[0])
            raise ValueError(f"{name}[{l}][0, {h}, {q}, {k}] is {a[l, h, q, k]:.6g}: the "
                             "decoder's self-attention must be causal (0 above the diagonal)")


def check_indices(indices, count, name, what):
    """Distinct indices below `count`, sorted (a trace keeps its layers and heads in order)."""
    if indices is None:
        return list(range(count))
    try:
        out = [int(i) for i in indices]
    except TypeError:
        raise ValueError(f"'{name}' must be a list of {what} indices") from None
    if not out:
        raise ValueError(f"'{name}' is empty")
    for i in out:
        if i < 0 or i >= count:
            raise ValueError(f"'{name}' has {i}: the attention has {count} {what}s (0 to "
                             f"{count - 1})")
    if len(set(out)) != len(out):
        raise ValueError(f"'{name}' repeats an index: {out}")
    return sorted(out)
