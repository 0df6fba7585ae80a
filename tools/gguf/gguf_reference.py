"""The float64 reference (tools/reference) on a GGUF fixture's Hugging Face folder: attention of every
layer and head and the next-token distribution for given token ids (the ids attnscope's or
llama.cpp's GGUF tokenizer produced, so that both sides see the same input).

    from gguf_reference import reference_run
    r = reference_run("build/fixtures/gguf/llama.hf", [128000, 791, 4062])
    r["attention"][layer]   # numpy float64 [heads, n, n]
    r["probabilities"]      # numpy float64 [vocab], softmax of the last position's logits

Needs Debian's python3-torch (run with /usr/bin/python3).
"""
import json
import os
import sys

import numpy as np

_REF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference")
if _REF not in sys.path:
    sys.path.insert(0, _REF)

_CACHE = {}


def _model(folder):
    import torch  # noqa: F401  (imported here so that the fixture tools need only numpy)
    if folder not in _CACHE:
        with open(os.path.join(folder, "config.json")) as f:
            kind = json.load(f)["model_type"]
        if kind == "gpt2":
            import hf_reference
            _CACHE[folder] = ("gpt2", hf_reference.load_model(folder)[0])
        else:
            import hf_decoder_reference
            _CACHE[folder] = ("decoder", hf_decoder_reference.DecoderReference(folder))
    return _CACHE[folder]


def reference_run(folder, ids):
    import torch
    kind, model = _model(folder)
    with torch.no_grad():
        if kind == "gpt2":
            _, logits, attentions = model(torch.tensor([ids]))
            attention = [a[0].double().numpy() for a in attentions]
            last = logits[0, -1]
        else:
            out = model.forward(list(ids))
            attention = [a.double().numpy() for a in out["attention"]]
            last = out["logits"][-1]
        probs = torch.softmax(last.double(), dim=-1).numpy()
    return {"attention": attention, "probabilities": probs, "logits": last.double().numpy()}
