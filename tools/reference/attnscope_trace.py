"""Writing an attnscope-trace/1 file from Python: the function the README shows, and the script
that made tests/data/python_trace/ with it; add_decoder() for an encoder-decoder's trace (BART,
Marian, T5: outputs.decoder_attentions and cross_attentions), and read_trace() to read any trace
attnscope writes (JSON or safetensors, with its "decoder") back into numpy arrays.

attnscope_trace() takes what Hugging Face transformers gives (`output_attentions=True`: one
[batch, heads, n, n] tensor per layer) and the tokenizer's output, and returns the JSON document
`attnscope view FILE` opens. The example below runs it on our own float64 PyTorch reference model
(tools/reference/hf_reference.py) and a fixture model, since transformers itself is not a Debian
package:

    /usr/bin/python3 tools/reference/attnscope_trace.py build/fixtures/gpt2-tiny-f32 OUT.json
"""
import json
import os
import sys


def attnscope_trace(text, token_texts, char_offsets, special, attentions, model_name, kind,
                    ids=None):
    """text: the input string; token_texts: tokenizer.convert_ids_to_tokens(ids);
    char_offsets: the tokenizer's offset_mapping ((start, end) in characters, (0, 0) for special
    tokens); special: special_tokens_mask; attentions: outputs.attentions (a tuple of
    [1, heads, n, n] tensors), batch item 0 is written."""
    # The trace counts UTF-8 bytes, Python counts characters.
    byte_at = [0]
    for ch in text:
        byte_at.append(byte_at[-1] + len(ch.encode("utf-8")))
    tokens = []
    for i, (piece, (start, end), is_special) in enumerate(zip(token_texts, char_offsets, special)):
        tokens.append({
            "id": int(ids[i]) if ids is not None else -1,
            "text": piece,
            "start": -1 if is_special else byte_at[start],
            "end": -1 if is_special else byte_at[end],
            "special": bool(is_special),
        })
    attention = [layer[0].double().tolist() for layer in attentions]  # [layer][head][query][key]
    return {
        "format": "attnscope-trace/1",
        "model": {"name": model_name, "kind": kind, "layers": len(attention),
                  "heads": len(attention[0])},
        "backend": "pytorch",
        "text": text,
        "tokens": tokens,
        "attention": attention,
    }


def add_decoder(doc, token_texts, attentions, cross_attentions, ids=None, predictions=None):
    """Makes `doc` (attnscope_trace() of the encoder's side: encoder_attentions) an
    encoder-decoder's trace: the decoder's tokens (decoder_start_token_id first, as
    convert_ids_to_tokens gives them), outputs.decoder_attentions and outputs.cross_attentions
    (tuples of [1, heads, t, t] and [1, heads, t, n]); predictions[i]: the top next tokens at
    decoder position i as [(id, text, probability)], optional."""
    attention = [layer[0].double().tolist() for layer in attentions]
    cross = [layer[0].double().tolist() for layer in cross_attentions]
    doc["model"]["decoder_layers"] = len(attention)
    doc["model"]["decoder_heads"] = len(attention[0])
    tokens = [{"id": int(ids[i]) if ids is not None else -1, "text": piece, "start": -1,
               "end": -1, "special": False} for i, piece in enumerate(token_texts)]
    doc["decoder"] = {"tokens": tokens, "attention": attention, "cross_attention": cross}
    if predictions is not None:
        doc["decoder"]["predictions"] = [
            [{"id": int(i), "text": t, "probability": float(p)} for i, t, p in row]
            for row in predictions]
    return doc


def read_trace(path):
    """Reads an attnscope trace (the JSON of `export`, or its safetensors) into numpy arrays:
    {"model", "text", "tokens", "attention" [layers, heads, n, n], "decoder": None or {"tokens",
    "attention" [layers, heads, t, t], "cross_attention" [layers, heads, t, n], "predictions"}}.
    Shapes are checked against the tokens, as attnscope's own reader does; ValueError names the
    key."""
    import numpy as np
    with open(path, "rb") as f:
        data = f.read()
    if data.lstrip()[:1] == b"{":
        doc = json.loads(data.decode("utf-8"))
        arrays = {"attention": doc["attention"]}
        if "decoder" in doc:
            arrays["decoder.attention"] = doc["decoder"]["attention"]
            arrays["decoder.cross_attention"] = doc["decoder"]["cross_attention"]
        arrays = {k: np.asarray(v, dtype=np.float32) for k, v in arrays.items()}
    else:  # safetensors: 8-byte header length, JSON header, then the tensors
        n = int.from_bytes(data[:8], "little")
        header = json.loads(data[8:8 + n].decode("utf-8"))
        meta = header.pop("__metadata__", {})
        doc = {k: (json.loads(meta[k]) if k in ("model", "tokens", "decoder") else meta[k])
               for k in meta}
        arrays = {}
        for name, info in header.items():
            begin, end = info["data_offsets"]
            arrays[name] = np.frombuffer(data[8 + n + begin:8 + n + end],
                                         dtype="<f4").reshape(info["shape"])
    n = len(doc["tokens"])
    out = {"model": doc["model"], "text": doc.get("text", ""), "tokens": doc["tokens"],
           "attention": arrays["attention"], "decoder": None}
    if arrays["attention"].shape[2:] != (n, n):
        raise ValueError("attention: expected %dx%d matrices, found %s" %
                         (n, n, arrays["attention"].shape))
    if "decoder" in doc:
        dec = doc["decoder"]
        t = len(dec["tokens"])
        self_att, cross = arrays["decoder.attention"], arrays["decoder.cross_attention"]
        if self_att.shape[2:] != (t, t):
            raise ValueError("decoder.attention: expected %dx%d matrices, found %s" %
                             (t, t, self_att.shape))
        if cross.shape[2:] != (t, n):
            raise ValueError("decoder.cross_attention: expected %dx%d matrices (decoder x "
                             "encoder tokens), found %s" % (t, n, cross.shape))
        if np.any(np.triu(self_att, k=1) != 0):
            raise ValueError("decoder.attention: not causal (weights above the diagonal)")
        out["decoder"] = {"tokens": dec["tokens"], "attention": self_att,
                          "cross_attention": cross, "predictions": dec.get("predictions")}
    return out


def byte_decoder():
    """GPT-2's byte-level alphabet, reversed: vocabulary strings back to bytes."""
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


def main(folder, out_path):
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from hf_reference import load_model

    model, cfg = load_model(folder)
    assert cfg["model_type"] == "gpt2", "the example is written for a GPT-2 folder"
    with open(os.path.join(folder, "vocab.json"), encoding="utf-8") as f:
        vocab = {i: s for s, i in json.load(f).items()}
    # "The cat sat on the mat." as GPT-2's tokenizer encodes it; a tokenizer would give these
    # texts and offsets (tokenizer(text, return_offsets_mapping=True)).
    ids = [464, 3797, 3332, 319, 262, 2603, 13]
    decode = byte_decoder()
    pieces = [vocab[i] for i in ids]
    words = [bytes(decode[c] for c in p).decode("utf-8") for p in pieces]
    text = "".join(words)
    offsets, at = [], 0
    for w in words:
        offsets.append((at, at + len(w)))
        at += len(w)
    with torch.no_grad():
        _, _, attentions = model(torch.tensor([ids]))
    doc = attnscope_trace(text, pieces, offsets, [0] * len(ids), attentions,
                          os.path.basename(os.path.normpath(folder)), "gpt2", ids)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
