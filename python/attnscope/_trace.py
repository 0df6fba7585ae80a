"""The attnscope-trace/1 file (JSON, or its safetensors form) from Python arrays and back.

The format is the one `attnscope export` writes and `attnscope view FILE` reads: "model" (name,
kind, layers, heads), "text", "tokens" ({id, text, start, end, special}; start/end are byte
offsets into the UTF-8 text, -1 for added special tokens), "attention"[layer][head][query][key],
optionally "selection" (which of the model's layers and heads the file holds), "pieces" (how the
token texts encode the text) and an encoder-decoder's "decoder" {tokens, attention,
cross_attention}. The safetensors form keeps the matrices as F32 tensors and the rest as
__metadata__ strings (JSON text for the structured values).
"""
import json
import os
import re

import numpy as np

from ._arrays import check_indices, check_weights, stack_layers

FORMAT = "attnscope-trace/1"

# Tokens BertViz users pass as plain strings: which of them a tokenizer added ([CLS], <s>,
# <|endoftext|>). Byte-fallback pieces (<0xE8>) are text, not special.
_SPECIAL = re.compile(r"^(\[[A-Z][A-Z_]*\]|<\|?[A-Za-z_/][^<>\s]*\|?>)$")
_BYTE_PIECE = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


def _byte_decoder():
    """GPT-2's byte-level alphabet, reversed: vocabulary characters back to bytes."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


_BYTES_OF = _byte_decoder()


def is_special_piece(piece):
    return bool(_SPECIAL.match(piece)) and not _BYTE_PIECE.match(piece)


def guess_pieces(pieces):
    """How token strings encode the text: "byte_level" (GPT-2: Ġ is a space, Ċ a newline),
    "sentencepiece" (▁ is a space, <0xNN> a byte) or "plain" (WordPiece's ## continuations)."""
    for p in pieces:
        if "\u0120" in p or "\u010a" in p or "\u0109" in p:
            return "byte_level"
    for p in pieces:
        if "\u2581" in p or _BYTE_PIECE.match(p):
            return "sentencepiece"
    return "plain"


def _piece_bytes(piece, encoding):
    if encoding == "byte_level":
        if all(c in _BYTES_OF for c in piece):
            return bytes(_BYTES_OF[c] for c in piece)
        return piece.encode("utf-8")
    if encoding == "sentencepiece":
        m = _BYTE_PIECE.match(piece)
        if m:
            return bytes([int(m.group(1), 16)])
        return piece.replace("\u2581", " ").encode("utf-8")
    return piece.encode("utf-8")


def tokens_from_strings(pieces, prettify_tokens=True):
    """(text, token objects, pieces name) for BertViz-style token strings. The text is what the
    pieces spell (byte-level and SentencePiece pieces decoded; WordPiece's "##" glued to the
    word before, other plain pieces separated by spaces; "</w>" ends a word); each token's
    start/end are byte offsets into it, special tokens ([CLS], <s>, <|endoftext|>) get -1. With
    prettify_tokens the window decodes the pieces (Ġ, ▁) as it does for its own models; without,
    it shows them as they are ("pieces": "plain")."""
    pieces = [str(p) for p in pieces]
    encoding = guess_pieces(pieces)
    text = b""
    tokens = []
    after_word_end = False
    word_ends = any(p.endswith("</w>") for p in pieces)  # OpenAI GPT's BPE marks word ends
    for p in pieces:
        tok = {"id": -1, "text": p, "start": -1, "end": -1, "special": False}
        if prettify_tokens and p.endswith("</w>"):
            tok["text"] = p[:-len("</w>")]
        if is_special_piece(p):
            tok["special"] = True
            tokens.append(tok)
            continue
        if encoding == "plain":
            word_end = p.endswith("</w>")
            body = p[:-len("</w>")] if word_end else p
            if body.startswith("##") and len(body) > 2:
                b = body[2:].encode("utf-8")
            else:
                b = body.encode("utf-8")
                if text and (after_word_end or not word_ends):
                    text += b" "
            after_word_end = word_end
        else:
            b = _piece_bytes(p, encoding)
        tok["start"] = len(text)
        text += b
        tok["end"] = len(text)
        tokens.append(tok)
    if encoding == "sentencepiece" and text.startswith(b" "):
        text = text[1:]  # SentencePiece's decoder drops the first word's space
        for tok in tokens:
            if tok["start"] >= 0:
                tok["start"], tok["end"] = max(0, tok["start"] - 1), tok["end"] - 1
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError:  # pieces that do not spell whole characters: no offsets then
        decoded = text.decode("utf-8", errors="replace")
        for tok in tokens:
            tok["start"] = tok["end"] = -1
    return decoded, tokens, (encoding if prettify_tokens else "plain")


def _token_objects(tokens, n, name, text, prettify_tokens):
    """(text, token objects, pieces or None) from `tokens`: strings (BertViz) or dicts with at
    least "text" (what show() makes)."""
    if tokens is None:
        raise ValueError(f"'{name}' is required")
    if isinstance(tokens, str):
        raise ValueError(f"'{name}' must be a list of token strings, not one string (use "
                         "tokenizer.convert_ids_to_tokens(ids))")
    tokens = list(tokens)
    if len(tokens) != n:
        shown = " ".join(str(t.get("text") if isinstance(t, dict) else t) for t in tokens)
        raise ValueError(f"the attention has {n} positions, while the number of tokens in "
                         f"'{name}' is {len(tokens)}: {shown}")
    if all(isinstance(t, dict) for t in tokens):
        out = []
        for i, t in enumerate(tokens):
            if "text" not in t:
                raise ValueError(f"{name}[{i}] has no \"text\"")
            out.append({"id": int(t.get("id", -1)), "text": str(t["text"]),
                        "start": int(t.get("start", -1)), "end": int(t.get("end", -1)),
                        "special": bool(t.get("special", False))})
        return (text or ""), out, (None if prettify_tokens else "plain")
    built_text, out, pieces = tokens_from_strings(tokens, prettify_tokens)
    if text is not None:  # a text of the caller's: offsets into ours would be wrong
        for t in out:
            t["start"] = t["end"] = -1
        built_text = text
    return built_text, out, pieces


class Trace:
    """A trace in memory: `meta` (the JSON trace without its matrices) and `arrays` (float32
    "attention" [layers, heads, n, n], and "decoder.attention" [layers, heads, t, t] and
    "decoder.cross_attention" [layers, heads, t, n] for an encoder-decoder)."""

    def __init__(self, meta, arrays):
        self.meta, self.arrays = meta, arrays

    @property
    def tokens(self):
        return self.meta["tokens"]


def build_trace(attention=None, tokens=None, sentence_b_start=None, prettify_tokens=True,
                encoder_attention=None, decoder_attention=None, cross_attention=None,
                encoder_tokens=None, decoder_tokens=None, include_layers=None,
                include_heads=None, text=None, model_name="python", model_kind="external",
                backend="python"):
    """Checks BertViz-style arguments and makes the Trace. ValueError says what is wrong."""
    seq2seq = any(a is not None for a in (encoder_attention, decoder_attention, cross_attention,
                                         encoder_tokens, decoder_tokens))
    if attention is not None and seq2seq:
        raise ValueError("If you specify 'attention' you may not specify any encoder-decoder "
                         "arguments. This argument is only for self-attention models.")
    decoder = None
    if attention is None:
        if not seq2seq or (encoder_attention is None and decoder_attention is None
                           and cross_attention is None):
            raise ValueError("You must specify at least one attention argument.")
        if encoder_attention is None:
            if cross_attention is not None:
                raise ValueError("'cross_attention' needs 'encoder_attention' too: the window "
                                 "shows the decoder against the encoder's tokens")
            # The decoder alone is a self-attention trace of the decoder's tokens.
            attention, tokens, name, tname = decoder_attention, decoder_tokens, \
                "decoder_attention", "decoder_tokens"
        else:
            attention, tokens, name, tname = encoder_attention, encoder_tokens, \
                "encoder_attention", "encoder_tokens"
            if (decoder_attention is None) != (cross_attention is None):
                missing = "cross_attention" if cross_attention is None else "decoder_attention"
                raise ValueError(f"'{missing}' is required with the other decoder attention: "
                                 "the window shows the decoder's self- and cross-attention "
                                 "together")
            if decoder_attention is not None:
                decoder = True
    else:
        name, tname = "attention", "tokens"
    if tokens is None:
        raise ValueError(f"'{tname}' is required")
    a = stack_layers(attention, name)
    layers, heads, q, k = a.shape
    if q != k:
        raise ValueError(f"{name}[0] has {q} queries and {k} keys: self-attention matrices are "
                         "square (one row and one column per token)")
    text, toks, pieces = _token_objects(tokens, q, tname, text, prettify_tokens)
    sel_layers = check_indices(include_layers, layers, "include_layers", "layer")
    sel_heads = check_indices(include_heads, heads, "include_heads", "head")
    a = np.ascontiguousarray(a[sel_layers][:, sel_heads])
    check_weights(a, name)
    meta = {"format": FORMAT,
            "model": {"name": model_name, "kind": model_kind, "layers": layers, "heads": heads},
            "backend": backend, "text": text, "tokens": toks}
    if pieces is not None:
        meta["pieces"] = pieces
    if sel_layers != list(range(layers)) or sel_heads != list(range(heads)):
        meta["selection"] = {"layers": sel_layers, "heads": sel_heads}
    if sentence_b_start is not None:
        s = int(sentence_b_start)
        if not 0 < s < q:
            raise ValueError(f"sentence_b_start is {s}: expected the index of sentence B's first "
                             f"token, between 1 and {q - 1}")
        meta["sentence_b_start"] = s  # recorded; the window shows the pair as one sequence
    arrays = {"attention": a}
    if decoder:
        d = stack_layers(decoder_attention, "decoder_attention")
        c = stack_layers(cross_attention, "cross_attention")
        dl, dh, t, t2 = d.shape
        if t != t2:
            raise ValueError(f"decoder_attention[0] has {t} queries and {t2} keys: expected "
                             "square matrices")
        if c.shape[0] != dl or c.shape[1] != dh:
            raise ValueError(f"cross_attention has {c.shape[0]} layers of {c.shape[1]} heads, "
                             f"decoder_attention {dl} of {dh}: they come from the same decoder")
        if c.shape[2] != t or c.shape[3] != q:
            raise ValueError(f"cross_attention[0] is {c.shape[2]}x{c.shape[3]}: expected {t}x{q} "
                             "(decoder tokens x encoder tokens)")
        if decoder_tokens is None:
            raise ValueError("'decoder_tokens' is required with 'decoder_attention'")
        _, dtoks, _ = _token_objects(decoder_tokens, t, "decoder_tokens", None, prettify_tokens)
        for tok in dtoks:  # the decoder's tokens are not spans of the (source) text
            tok["start"] = tok["end"] = -1
        dsel_layers = check_indices(include_layers, dl, "include_layers", "decoder layer")
        dsel_heads = check_indices(include_heads, dh, "include_heads", "decoder head")
        d = np.ascontiguousarray(d[dsel_layers][:, dsel_heads])
        c = np.ascontiguousarray(c[dsel_layers][:, dsel_heads])
        check_weights(d, "decoder_attention", causal=True)
        check_weights(c, "cross_attention")
        meta["model"]["decoder_layers"] = dl
        meta["model"]["decoder_heads"] = dh
        meta["decoder"] = {"tokens": dtoks}
        if dsel_layers != list(range(dl)) or dsel_heads != list(range(dh)):
            meta["decoder"]["selection"] = {"layers": dsel_layers, "heads": dsel_heads}
        arrays["decoder.attention"] = d
        arrays["decoder.cross_attention"] = c
    return Trace(meta, arrays)


# ---- files ----------------------------------------------------------------------------------


def _format_for(path, format):
    if format is not None:
        f = str(format).lower()
        if f not in ("json", "safetensors"):
            raise ValueError(f"format {format!r}: expected 'json' or 'safetensors'")
        return f
    ext = os.path.splitext(str(path))[1].lower()
    if ext == ".json":
        return "json"
    if ext == ".safetensors":
        return "safetensors"
    raise ValueError(f"cannot tell the trace format from {str(path)!r}: name it .json or "
                     ".safetensors, or pass format='json' or 'safetensors'")


def _write_json(trace, f):
    doc = dict(trace.meta)
    decoder = doc.pop("decoder", None)
    doc["attention"] = trace.arrays["attention"].astype(np.float64).tolist()
    if decoder is not None:
        decoder = dict(decoder)
        decoder["attention"] = trace.arrays["decoder.attention"].astype(np.float64).tolist()
        decoder["cross_attention"] = \
            trace.arrays["decoder.cross_attention"].astype(np.float64).tolist()
        doc["decoder"] = decoder
    f.write(json.dumps(doc, ensure_ascii=False).encode("utf-8"))


def _write_safetensors(trace, f):
    meta = {}
    for key, value in trace.meta.items():
        meta[key] = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    header = {"__metadata__": meta}
    offset = 0
    blobs = []
    for name in ("attention", "decoder.attention", "decoder.cross_attention"):
        if name not in trace.arrays:
            continue
        a = np.ascontiguousarray(trace.arrays[name], dtype="<f4")
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
        blobs.append(a)
    text = json.dumps(header, ensure_ascii=False).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)  # the data starts 8-byte aligned
    f.write(len(text).to_bytes(8, "little"))
    f.write(text)
    for a in blobs:
        f.write(a.tobytes())


def save_trace(trace, path, format=None):
    """Writes `trace` (a Trace) to `path`: JSON or safetensors by the extension or `format`. The
    file is written beside its final name and renamed, so a reader never sees half of it."""
    fmt = _format_for(path, format)
    path = os.fspath(path)
    tmp = f"{path}.part-{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            (_write_json if fmt == "json" else _write_safetensors)(trace, f)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_trace(path, attention=None, tokens=None, sentence_b_start=None, prettify_tokens=True,
                encoder_attention=None, decoder_attention=None, cross_attention=None,
                encoder_tokens=None, decoder_tokens=None, include_layers=None,
                include_heads=None, text=None, model_name="python", model_kind="external",
                format=None):
    """Writes a trace file that `attnscope view FILE`, `attnscope render --trace FILE` and
    read_trace() open: JSON for a ".json" path, safetensors for ".safetensors" (or `format`).

    The arguments are BertViz's (head_view/model_view): `attention` is outputs.attentions (one
    [1, heads, n, n] tensor or array per layer), `tokens` the n token strings (or dicts with
    "text", "id", "start", "end", "special"); an encoder-decoder passes encoder_attention,
    decoder_attention, cross_attention, encoder_tokens and decoder_tokens instead.
    include_layers/include_heads keep those layers and heads only (the file says which).
    `text` is the input text (by default what the tokens spell). Returns the path."""
    trace = build_trace(attention, tokens, sentence_b_start, prettify_tokens, encoder_attention,
                        decoder_attention, cross_attention, encoder_tokens, decoder_tokens,
                        include_layers, include_heads, text, model_name, model_kind)
    return save_trace(trace, path, format)


def read_trace(path):
    """Reads a trace (the JSON of `attnscope export` or write_trace, or its safetensors) into
    numpy: {"model", "text", "tokens", "selection" (or None), "attention" float32 [layers, heads,
    n, n], "decoder": None or {"tokens", "attention" [layers, heads, t, t], "cross_attention"
    [layers, heads, t, n], "predictions"}, "meta" (every other key)}. Shapes are checked against
    the tokens; ValueError names the key."""
    with open(path, "rb") as f:
        data = f.read()
    if data.lstrip()[:1] == b"{":
        doc = json.loads(data.decode("utf-8"))
        arrays = {"attention": doc.pop("attention", None)}
        if "decoder" in doc:
            doc["decoder"] = dict(doc["decoder"])
            arrays["decoder.attention"] = doc["decoder"].pop("attention", None)
            arrays["decoder.cross_attention"] = doc["decoder"].pop("cross_attention", None)
        for k, v in arrays.items():
            if v is None:
                raise ValueError(f"{path}: key '{k}' is missing")
        arrays = {k: np.asarray(v, dtype=np.float32) for k, v in arrays.items()}
    else:  # safetensors: 8-byte header length, JSON header, then the tensors
        if len(data) < 8:
            raise ValueError(f"{path}: neither a JSON trace nor safetensors (too short)")
        n = int.from_bytes(data[:8], "little")
        if n > len(data) - 8:
            raise ValueError(f"{path}: neither a JSON trace nor safetensors")
        header = json.loads(data[8:8 + n].decode("utf-8"))
        meta = header.pop("__metadata__", {})
        doc = {}
        for k, v in meta.items():
            try:
                doc[k] = json.loads(v) if k in ("model", "tokens", "decoder", "selection",
                                               "sentence_b_start") else v
            except ValueError:
                raise ValueError(f"{path}: metadata '{k}' is not JSON") from None
        arrays = {}
        for name, info in header.items():
            if info.get("dtype") != "F32":
                raise ValueError(f"{path}: tensor '{name}' is {info.get('dtype')}, expected F32")
            begin, end = info["data_offsets"]
            arrays[name] = np.frombuffer(data[8 + n + begin:8 + n + end],
                                         dtype="<f4").reshape(info["shape"])
        if "attention" not in arrays:
            raise ValueError(f"{path}: no 'attention' tensor")
    if doc.get("format") != FORMAT:
        raise ValueError(f"{path}: key 'format' is {doc.get('format')!r}, expected '{FORMAT}'")
    n = len(doc["tokens"])
    att = arrays["attention"]
    if att.ndim != 4 or att.shape[2:] != (n, n):
        raise ValueError(f"{path}: key 'attention': expected {n}x{n} matrices, found shape "
                         f"{att.shape}")
    out = {"model": doc["model"], "text": doc.get("text", ""), "tokens": doc["tokens"],
           "selection": doc.get("selection"), "attention": att, "decoder": None}
    out["meta"] = {k: v for k, v in doc.items()
                   if k not in ("model", "text", "tokens", "selection", "decoder")}
    if "decoder" in doc:
        dec = doc["decoder"]
        t = len(dec["tokens"])
        self_att, cross = arrays["decoder.attention"], arrays["decoder.cross_attention"]
        if self_att.shape[2:] != (t, t):
            raise ValueError(f"{path}: key 'decoder.attention': expected {t}x{t} matrices, "
                             f"found shape {self_att.shape}")
        if cross.shape[2:] != (t, n):
            raise ValueError(f"{path}: key 'decoder.cross_attention': expected {t}x{n} matrices "
                             f"(decoder x encoder tokens), found shape {cross.shape}")
        out["decoder"] = {"tokens": dec["tokens"], "attention": self_att,
                          "cross_attention": cross, "predictions": dec.get("predictions"),
                          "selection": dec.get("selection")}
    return out
