#!/usr/bin/python3
"""Encodes texts as Hugging Face's MarianTokenizer does, with Debian's python3-sentencepiece, for
the Marian tokenizer test (tests/unit/marian_tokenizer_test.cpp). transformers itself is not
needed: its tokenization_marian.py is followed step by step, cited per function.

usage: marian_reference.py FOLDER SIDE IN.json OUT.json
  FOLDER: source.spm, target.spm, vocab.json (target_vocab.json), tokenizer_config.json
  SIDE: "source" or "target" (MarianTokenizer's input mode, or text_target's target mode), or
        "raw": FOLDER is a .spm file, encoded alone (pieces and SentencePiece's own ids, no </s>)
  IN.json: a list of texts, each as hex of its UTF-8 bytes (invalid UTF-8 allowed)
  OUT.json: a list of {"pieces": [hex…], "ids": […]}: the tokens (MarianTokenizer.tokenize) and
  input_ids (add_special_tokens=True: </s> appended).

A text that is not valid UTF-8 cannot be a Python str; its bytes go to SentencePiece as bytes
(sentencepiece accepts them and replaces each malformed byte by U+FFFD), through the same steps.
"""
import json
import os
import sys

import sentencepiece


def load_json(path):
    with open(path, "r", encoding="utf-8") as f:
        return json.load(f)


def token_content(value, default):
    # tokenizer_config.json writes a special token as a string or an AddedToken dict.
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    return default


class Marian:
    """MarianTokenizer.__init__: vocab.json as the encoder, the .spm of the side."""

    def __init__(self, folder, side):
        config_path = os.path.join(folder, "tokenizer_config.json")
        config = load_json(config_path) if os.path.exists(config_path) else {}
        self.unk = token_content(config.get("unk_token"), "<unk>")
        self.eos = token_content(config.get("eos_token"), "</s>")
        self.pad = token_content(config.get("pad_token"), "<pad>")
        extra = [token_content(t, "") for t in config.get("additional_special_tokens") or []]
        # PreTrainedTokenizer.tokenize splits on the added (special) tokens first.
        self.specials = [t for t in [self.unk, self.eos, self.pad] + extra if t]
        encoder = load_json(os.path.join(folder, "vocab.json"))
        if config.get("separate_vocabs") and side == "target":
            encoder = load_json(os.path.join(folder, "target_vocab.json"))
        self.encoder = encoder
        # _switch_to_input_mode / _switch_to_target_mode: the side's SentencePiece model.
        self.spm = sentencepiece.SentencePieceProcessor()
        self.spm.Load(os.path.join(folder, "source.spm" if side == "source" else "target.spm"))

    def split_specials(self, text):
        # Trie.split: leftmost match, the longest there; the specials are kept whole (no
        # lstrip/rstrip: MarianTokenizer's special tokens are plain AddedTokens).
        parts, start, pos = [], 0, 0
        while pos < len(text):
            best = max((s for s in self.specials if text.startswith(s, pos)), key=len,
                       default=None)
            if best is None:
                pos += 1
                continue
            if pos > start:
                parts.append((text[start:pos], False))
            parts.append((best, True))
            pos += len(best)
            start = pos
        if start < len(text):
            parts.append((text[start:], False))
        return parts

    def tokenize(self, text):
        tokens = []
        for part, special in self.split_specials(text):
            if special:
                tokens.append(part)
                continue
            # remove_language_code + _tokenize
            code = []
            if part.startswith(self.gt) and part.find(self.lt) != -1:
                end = part.find(self.lt)
                code.append(part[: end + 2])
                part = part[end + 2:]
            tokens += code + self.spm.encode(part, out_type=str)
        return tokens

    def to_id(self, token):
        # _convert_token_to_id as MarianTokenizer had it through transformers 4.x: the vocabulary's
        # id, else <unk>'s (the spm ids are not the model's).
        key = token.decode("utf-8") if isinstance(token, bytes) else token
        return self.encoder.get(key, self.encoder[self.unk])

    def encode(self, data):
        try:
            text = data.decode("utf-8")
            self.gt, self.lt = ">>", "<<"
            tokens = self.tokenize(text)
            raw = [t.encode("utf-8") for t in tokens]
        except UnicodeDecodeError:
            self.gt, self.lt = b">>", b"<<"
            self.specials_text = self.specials
            self.specials = [s.encode("utf-8") for s in self.specials_text]
            tokens = self.tokenize(data)
            self.specials = self.specials_text
            raw = list(tokens)
        # build_inputs_with_special_tokens: </s> appended.
        ids = [self.to_id(t) for t in raw] + [self.encoder[self.eos]]
        return {"pieces": [t.hex() for t in raw], "ids": ids}


def raw(path, texts):
    spm = sentencepiece.SentencePieceProcessor()
    spm.Load(path)
    out = []
    for data in texts:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data
        pieces = spm.encode(text, out_type=str)
        pieces = [p if isinstance(p, bytes) else p.encode("utf-8") for p in pieces]
        out.append({"pieces": [p.hex() for p in pieces], "ids": spm.encode(text, out_type=int)})
    return out


def main():
    folder, side, in_path, out_path = sys.argv[1:5]
    texts = [bytes.fromhex(t) for t in load_json(in_path)]
    if side == "raw":
        with open(out_path, "w", encoding="utf-8") as f:
            json.dump(raw(folder, texts), f)
        return
    marian = Marian(folder, side)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump([marian.encode(t) for t in texts], f)


if __name__ == "__main__":
    main()
