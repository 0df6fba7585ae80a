"""Writes tests/data/golden/tiny-model.json: the built-in tiny model (assets/tiny_model) on one
sentence, computed by the independent float64 reference (hf_decoder_reference.py).

    /usr/bin/python3 tools/reference/make_tiny_golden.py assets/tiny_model tests/data/golden/tiny-model.json

The token ids come from the folder's tokenizer.json applied here in Python (the BPE merges by rank
after GPT-2's pre-tokenizer, ASCII text only), not from attnscope; the C++ test checks that
attnscope's tokenizer gives the same ids, and compares the tokenizer with Hugging Face's.
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tiny_model"))
from hf_decoder_reference import DecoderReference  # noqa: E402
from make_golden import rounded  # noqa: E402
import bpe  # noqa: E402

TEXT = "The cat sat on the mat. The dog lay by the door of the old house, and the cat"


def main():
    folder, out_path = sys.argv[1], sys.argv[2]
    with open(os.path.join(folder, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)["model"]
    merges = [tuple(m.split(" ")) for m in tok["merges"]]
    ids = [tok["vocab"][bpe.BOS]] + bpe.Encoder(tok["vocab"], merges).encode(TEXT)
    ref = DecoderReference(folder)
    with torch.no_grad():
        r = ref.forward(ids)
    last = r["logits"][-1]
    top = torch.topk(last, 10)
    probs = torch.softmax(last, dim=-1)
    logit_ids = sorted(set(top.indices.tolist()) | {0, 1, ref.cfg["vocab_size"] - 1})
    doc = {
        "model": "tiny", "kind": "llama", "text": TEXT,
        "reference": "tools/reference/hf_decoder_reference.py (float64)",
        "cases": [{
            "ids": ids,
            "attention": [rounded(a) for a in r["attention"]],  # [layer][head][query][key]
            "top_ids": top.indices.tolist(),
            "top_probabilities": rounded(probs[top.indices]),
            "logit_ids": logit_ids,
            "logits": rounded(r["logits"][:, logit_ids]),  # [position][logit_ids]
        }],
    }
    with open(out_path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print("wrote", out_path, len(ids), "tokens")


if __name__ == "__main__":
    main()
