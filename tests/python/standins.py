"""Stand-ins for a transformers model and tokenizer (transformers is not a Debian package): the
model is the float64 PyTorch reference of a fixture folder (tools/reference/hf_reference.py), the
tokenizer gives the ids attnscope's own tokenizer gives for the text (`attnscope tokenize`) with
the character offsets and special-token mask a fast tokenizer returns, computed here from the
vocabulary's pieces."""
import json
import os
import re
import types

import torch

from pytest_common import run


def byte_decoder():
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


class Tokenizer:
    """GPT-2 (byte-level pieces, offsets including the leading space) or BERT (WordPiece,
    [CLS]/[SEP] special with offsets (0, 0), words found in the text)."""

    def __init__(self, folder):
        self.folder = folder
        with open(os.path.join(folder, "config.json")) as f:
            self.kind = json.load(f)["model_type"]
        if self.kind == "gpt2":
            with open(os.path.join(folder, "vocab.json"), encoding="utf-8") as f:
                self.pieces = {i: s for s, i in json.load(f).items()}
        else:
            with open(os.path.join(folder, "vocab.txt"), encoding="utf-8") as f:
                self.pieces = {i: s.rstrip("\n") for i, s in enumerate(f)}
        self.calls = []

    def __call__(self, text, return_tensors=None, return_offsets_mapping=False,
                 return_special_tokens_mask=False):
        self.calls.append(dict(return_offsets_mapping=return_offsets_mapping,
                               return_special_tokens_mask=return_special_tokens_mask))
        assert return_tensors == "pt"
        toks = json.loads(run(["tokenize", "--model", self.folder, "--text", text,
                               "--special"]).stdout)["tokens"]
        ids = [t["id"] for t in toks]
        special = [1 if self.pieces[i] in ("[CLS]", "[SEP]") else 0 for i in ids]
        offsets = []
        if self.kind == "gpt2":
            decode, at = byte_decoder(), 0
            for i in ids:
                word = bytes(decode[c] for c in self.pieces[i]).decode("utf-8")
                offsets.append([at, at + len(word)])
                at += len(word)
            assert at == len(text)
        else:
            words = [m.span() for m in re.finditer(r"\w+|[^\w\s]", text)]
            assert len(words) == len(ids) - 2, "pick a text WordPiece does not split"
            offsets = [[0, 0]] + [list(w) for w in words] + [[0, 0]]
        out = {"input_ids": torch.tensor([ids]), "attention_mask": torch.ones(1, len(ids))}
        if return_offsets_mapping:
            out["offset_mapping"] = torch.tensor([offsets])
        if return_special_tokens_mask:
            out["special_tokens_mask"] = torch.tensor([special])
        return out

    def convert_ids_to_tokens(self, ids):
        return [self.pieces[int(i)] for i in ids]


class Model:
    """model(input_ids=..., attention_mask=..., output_attentions=True).attentions, as
    transformers' models answer; attn_implementation "sdpa" gives None weights (what recent
    transformers does) unless switched to eager through config._attn_implementation."""

    def __init__(self, folder, attn_implementation="eager"):
        from hf_reference import load_model
        self.module, cfg = load_model(folder)
        self.config = types.SimpleNamespace(model_type=cfg["model_type"], _name_or_path=folder,
                                            _attn_implementation=attn_implementation,
                                            is_encoder_decoder=False)
        self.training = False
        self.seen_implementations = []

    def __call__(self, input_ids, attention_mask=None, output_attentions=False):
        assert output_attentions
        assert attention_mask is None or bool(attention_mask.eq(1).all())
        self.seen_implementations.append(self.config._attn_implementation)
        out = self.module(input_ids)
        attentions = tuple(out[-1])
        if self.config._attn_implementation != "eager":
            attentions = tuple(None for _ in attentions)
        return types.SimpleNamespace(attentions=attentions, last_hidden_state=out[0])
