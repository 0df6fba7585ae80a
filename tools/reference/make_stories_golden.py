"""Writes tests/data/golden/stories-model.json: the built-in `stories` model (assets/stories260K,
Karpathy's stories260K trained on TinyStories) on three short stories, computed by the independent
float64 reference (hf_decoder_reference.py), and its greedy continuation of "Once upon a time".

    /usr/bin/python3 tools/reference/make_stories_golden.py assets/stories260K tests/data/golden/stories-model.json

The token ids come from the folder's tokenizer.json applied here in Python (the legacy Llama
pipeline: prepend "▁", spaces to "▁", then BPE merges by rank over the whole text; every character
of these ASCII texts is in the vocabulary, so byte fallback never fires), not from attnscope; the C++
test checks that attnscope's tokenizer gives the same ids, and compares it with Hugging Face's.
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from hf_decoder_reference import DecoderReference  # noqa: E402
from make_golden import rounded  # noqa: E402

TEXTS = [
    "Once upon a time, there was a little girl named Lily.",
    "Tom and his mom went to the park. They saw a big red ball.",
    "The cat wanted to play with the bird, but the bird flew away.",
]
PROMPT = "Once upon a time"
GREEDY_TOKENS = 60


def fixed(t, places=7):
    """Nested lists rounded to `places` decimals (whole numbers written as 0 and 1, not 0.0)."""
    def one(s):
        v = round(float(s), places)
        return int(v) if v == int(v) else v
    return json.loads(json.dumps(t.tolist(), allow_nan=False), parse_float=one)


class Encoder:
    """Hugging Face's BPE model (no dropout, no pre-tokenizer) over the legacy Llama normalizer."""

    def __init__(self, tokenizer_json):
        model = tokenizer_json["model"]
        self.vocab = model["vocab"]
        merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
        self.rank = {pair: i for i, pair in enumerate(merges)}
        self.bos = self.vocab["<s>"]

    def encode(self, text):
        symbols = list("▁" + text.replace(" ", "▁"))
        for s in symbols:
            assert s in self.vocab, f"{s!r} would need byte fallback"
        while True:
            best = None
            for i in range(len(symbols) - 1):
                r = self.rank.get((symbols[i], symbols[i + 1]))
                if r is not None and (best is None or r < best[0]):
                    best = (r, i)
            if best is None:
                break
            i = best[1]
            symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
        return [self.bos] + [self.vocab[s] for s in symbols]


def main():
    folder, out_path = sys.argv[1], sys.argv[2]
    with open(os.path.join(folder, "tokenizer.json"), encoding="utf-8") as f:
        tokenizer_json = json.load(f)
    enc = Encoder(tokenizer_json)
    id_to_piece = {v: k for k, v in enc.vocab.items()}
    ref = DecoderReference(folder)
    cases = []
    with torch.no_grad():
        for text in TEXTS:
            ids = enc.encode(text)
            r = ref.forward(ids)
            last = r["logits"][-1]
            top = torch.topk(last, 10)
            probs = torch.softmax(last, dim=-1)
            logit_ids = sorted(set(top.indices.tolist()) | {0, 1, 2, ref.cfg["vocab_size"] - 1})
            cases.append({
                "text": text,
                "ids": ids,
                # [layer][head][query][key], to 7 decimals (5e-8, far below the tests' 1e-4):
                # 9 significant digits made the file 1.5 MB
                "attention": [fixed(a) for a in r["attention"]],
                "top_ids": top.indices.tolist(),
                "top_probabilities": rounded(probs[top.indices]),
                "logit_ids": logit_ids,
                "logits": rounded(r["logits"][:, logit_ids]),  # [position][logit_ids]
            })
            print(len(ids), "tokens:", text)
        # Greedy decoding, the whole sequence recomputed each step (no cache: independent).
        ids = enc.encode(PROMPT)
        prompt_len = len(ids)
        for _ in range(GREEDY_TOKENS):
            ids.append(int(torch.argmax(ref.forward(ids)["logits"][-1])))
    generated = ids[prompt_len:]
    # The tokenizer's decoder: "▁" to " ", byte-fallback pieces "<0x0A>" to their bytes.
    out = bytearray()
    for i in generated:
        piece = id_to_piece[i]
        if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
            out.append(int(piece[3:5], 16))
        else:
            out += piece.replace("▁", " ").encode("utf-8")
    text = PROMPT + out.decode("utf-8")
    print("greedy:", text)
    doc = {
        "model": "stories", "kind": "llama",
        "reference": "tools/reference/hf_decoder_reference.py (float64)",
        "cases": cases,
        "greedy": {"prompt": PROMPT, "ids": ids, "generated_ids": generated, "text": text},
    }
    with open(out_path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print("wrote", out_path)


if __name__ == "__main__":
    main()
