"""Runs the README's Python snippet ("Writing a trace from Hugging Face transformers") exactly as
written, so the documentation cannot drift from attnscope_trace() and from the trace format.

transformers is not a Debian package, so a small stand-in `transformers` module is put in front
of it: AutoModel is our float64 PyTorch reference model (hf_reference.py) of a fixture GPT-2
folder, AutoTokenizer gives what GPT-2's fast tokenizer gives for the snippet's sentence (ids,
pieces, character offsets that include the leading space, no special tokens). Whatever name the
snippet asks for, the fixture folder is opened. The snippet writes trace.json in OUT_DIR.

    /usr/bin/python3 tools/reference/run_readme_snippet.py README.md build/fixtures/gpt2-tiny-f32 OUT_DIR
"""
import json
import os
import re
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))


def readme_snippet(readme):
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    found = [b for b in blocks if "output_attentions=True" in b and "attnscope_trace(" in b]
    if len(found) != 1:
        sys.exit(f"{readme}: expected one python block calling attnscope_trace, found {len(found)}")
    return found[0]


def stand_in_transformers(folder):
    import torch
    sys.path.insert(0, HERE)
    from attnscope_trace import byte_decoder
    from hf_reference import load_model

    with open(os.path.join(folder, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    pieces_of = {i: s for s, i in vocab.items()}
    decode = byte_decoder()

    class Tokenizer:
        # GPT-2's encoding of the sentences these tests use (byte-level BPE of the real vocab).
        known = {"The cat sat on the mat.": [464, 3797, 3332, 319, 262, 2603, 13]}

        def __call__(self, text, return_tensors=None, return_offsets_mapping=False,
                     return_special_tokens_mask=False):
            assert return_tensors == "pt"
            if text not in self.known:
                raise ValueError(f"the stand-in tokenizer knows only {list(self.known)}")
            ids = self.known[text]
            offsets, at = [], 0
            for i in ids:
                word = bytes(decode[c] for c in pieces_of[i]).decode("utf-8")
                offsets.append([at, at + len(word)])
                at += len(word)
            assert at == len(text)
            out = {"input_ids": torch.tensor([ids]), "attention_mask": torch.ones(1, len(ids))}
            if return_offsets_mapping:
                out["offset_mapping"] = torch.tensor([offsets])
            if return_special_tokens_mask:
                out["special_tokens_mask"] = torch.zeros(1, len(ids), dtype=torch.long)
            return out

        def convert_ids_to_tokens(self, ids):
            return [pieces_of[i] for i in ids]

    class Model:
        def __init__(self):
            self.module, cfg = load_model(folder)
            self.config = types.SimpleNamespace(model_type=cfg["model_type"])

        def __call__(self, input_ids, attention_mask=None, output_attentions=False):
            assert output_attentions, "the snippet must ask for the attention"
            assert attention_mask is None or bool(attention_mask.eq(1).all())
            _, _, attentions = self.module(input_ids)
            return types.SimpleNamespace(attentions=attentions)

    class AutoTokenizer:
        @staticmethod
        def from_pretrained(name):
            return Tokenizer()

    class AutoModel:
        @staticmethod
        def from_pretrained(name, attn_implementation=None):
            # Eager attention is what returns the weights in real transformers.
            assert attn_implementation == "eager"
            return Model()

    module = types.ModuleType("transformers")
    module.AutoTokenizer, module.AutoModel = AutoTokenizer, AutoModel
    return module


def main(readme, folder, out_dir):
    code = readme_snippet(readme)
    sys.modules["transformers"] = stand_in_transformers(os.path.abspath(folder))
    os.makedirs(out_dir, exist_ok=True)
    os.chdir(out_dir)
    exec(compile(code, f"{readme} (python snippet)", "exec"), {"__name__": "__snippet__"})
    if not os.path.exists("trace.json"):
        sys.exit("the snippet wrote no trace.json")


if __name__ == "__main__":
    main(*sys.argv[1:4])
