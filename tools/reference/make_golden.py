"""Writes tests/data/golden/*.json from the fixture models with the independent reference.

    /usr/bin/python3 tools/reference/make_golden.py build/fixtures tests/data/golden [NAME ...]

With NAMEs, only those fixtures' goldens are written.

The reference runs in float64, so the golden numbers are the exact answer for the stored weights;
attnscope (float32) must match them within 1e-4.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_reference import load_model  # noqa: E402
from hf_decoder_reference import DecoderReference  # noqa: E402

# Fixed token-id sequences: GPT-2 "The cat sat on the mat." style ids, a single token, and a longer
# run covering ids near both ends of the vocabulary.
GPT2_CASES = [
    [464, 3797, 3332, 319, 262, 2603, 13],
    [50256],
    [15496, 11, 616, 1438, 318, 41191, 290, 314, 588, 284, 4483, 2057, 0, 50255, 1, 198],
]
# BERT: [CLS] ... [SEP] as the tokenizer adds them.
# A case is a list of ids, or (ids, token types) for a sentence pair: [CLS] A [SEP] B [SEP].
BERT_CASES = [
    [101, 1996, 4937, 2938, 2006, 1996, 13523, 1012, 102],
    [101, 102],
    ([101, 1996, 4937, 2938, 102, 2009, 2001, 5458, 1012, 102], [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]),
    [101, 7592, 1010, 2026, 2171, 2003, 100, 1998, 1045, 2066, 2000, 4521, 30521, 999, 103, 102],
]
FULL = ["gpt2-tiny-f32", "bert-tiny-uncased-f32"]  # every case; the f16/bf16 variants: the last
# The encoders after BERT: a sentence ("The cat sat on the MAT." as the fixture's tokenizer writes
# it, with the family's specials), the specials alone, the pair "The cat sat" / "it was tired." as
# tokenizer(a, b) writes it (RoBERTa: <s> a </s></s> b </s>, one token type; DistilBERT: no types),
# and ids that reach the ends of the vocabulary with a padding token inside (RoBERTa's positions
# skip it: create_position_ids_from_input_ids). RoBERTa also gets 64 tokens, the most its 66
# position rows hold.
ROBERTA_CASES = [
    [0, 468, 3801, 3336, 323, 266, 36779, 17, 2],
    [0, 2],
    [0, 468, 3801, 3336, 2, 2, 274, 377, 10036, 17, 2],
    [0, 15500, 50264, 999, 224, 1, 2128, 50263, 50260, 4, 2],
    [0] + [(i * 7919 + 13) % 50265 for i in range(62)] + [2],
]
XLMR_CASES = [
    [0, 160, 22, 15, 13, 15, 101, 17, 96, 707, 28441, 2],
    [0, 2],
    [0, 160, 22, 15, 13, 15, 2, 2, 123, 148, 6, 1105, 28441, 2],
    [0, 22283, 31708, 1271, 28423, 1, 1063, 31707, 4, 2],
]
DISTILBERT_CASES = [c if isinstance(c, list) else c[0] for c in BERT_CASES]
ENCODER_CASES = {"roberta": ROBERTA_CASES, "xlm-roberta": XLMR_CASES, "distilbert": DISTILBERT_CASES}


def rounded(t):
    """Nested lists with 9 significant digits (more than float32 carries)."""
    return json.loads(json.dumps(t.tolist(), allow_nan=False), parse_float=lambda s: float(f"{float(s):.9g}"))


def golden_for(folder, name):
    model, cfg = load_model(folder)
    kind = cfg["model_type"]
    cases = GPT2_CASES if kind == "gpt2" else ENCODER_CASES.get(kind, BERT_CASES)
    if name not in FULL and kind not in ENCODER_CASES:
        cases = cases[-1:]
    out = {"model": name, "kind": kind, "reference": "tools/reference/hf_reference.py (float64)", "cases": []}
    with torch.no_grad():
        for ids in cases:
            types = None
            if isinstance(ids, tuple):
                ids, types = ids
            x = torch.tensor([ids])
            case = {"ids": ids}
            if types is not None:
                case["token_types"] = types
            if kind == "gpt2":
                hidden, logits, attentions = model(x)
                last = logits[0, -1]
                probs = torch.softmax(last, dim=-1)
                top = torch.topk(last, 10)
                case["final_hidden"] = rounded(hidden[0])
                case["top_ids"] = top.indices.tolist()
                case["top_probabilities"] = rounded(probs[top.indices])
                fixed = [0, 1, 13, 50256]
                case["logit_ids"] = fixed
                case["logits"] = rounded(last[fixed])
            else:
                hidden, attentions = model(x, None if types is None else torch.tensor([types]))
                case["last_hidden"] = rounded(hidden[0])
            case["attention"] = [rounded(a[0]) for a in attentions]  # [layer][head][query][key]
            out["cases"].append(case)
    return out


SEQ2SEQ_KINDS = ("bart", "marian", "t5")
DECODER_KINDS = ("llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text", "smollm3", "olmo2", "gemma3", "gpt_neox",
                 "phi3")


def decoder_cases(cfg):
    """A 14-token sequence (longer than every fixture's sliding window) that starts with BOS and
    ends with the last row of the padded vocabulary, and BOS alone. Ids are spread over the
    vocabulary with a fixed stride so no tokenizer is needed to make them. LongRoPE configs (Phi-3)
    add a sequence 4 tokens longer than original_max_position_embeddings (the long factors) and
    its first original_max_position_embeddings tokens (the short ones, the longest such prefix)."""
    vocab = cfg["vocab_size"]
    bos = cfg.get("bos_token_id") or 0
    spread = [(i * 7919 + 13) % (vocab - 1) for i in range(1, 13)]
    cases = [[bos] + spread + [vocab - 1], [bos]]
    scaling = cfg.get("rope_scaling") or {}
    if cfg.get("model_type") == "phi3" and scaling.get("rope_type", scaling.get("type")) in ("longrope", "su"):
        original = scaling.get("original_max_position_embeddings") or cfg["original_max_position_embeddings"]
        longer = [bos] + [(i * 6007 + 101) % (vocab - 1) for i in range(1, original + 4)]
        cases += [longer, longer[:original]]
    return cases


def decoder_golden(folder, name):
    ref = DecoderReference(folder)
    cfg = ref.cfg
    out = {"model": name, "kind": cfg["model_type"], "reference": "tools/reference/hf_decoder_reference.py (float64)",
           "cases": []}
    with torch.no_grad():
        for ids in decoder_cases(cfg):
            r = ref.forward(ids)
            last = r["logits"][-1]
            top = torch.topk(last, 10)
            probs = torch.softmax(last, dim=-1)
            logit_ids = sorted(set(top.indices.tolist()) | {0, 1, ids[0], cfg["vocab_size"] - 1})
            out["cases"].append({
                "ids": ids,
                "attention": [rounded(a) for a in r["attention"]],  # [layer][head][query][key]
                "q": [rounded(q) for q in r["q"]],  # [layer][head][token][dim], rotated
                "k": [rounded(k) for k in r["k"]],  # [layer][kv head][token][dim], rotated
                "top_ids": top.indices.tolist(),
                "top_probabilities": rounded(probs[top.indices]),
                "logit_ids": logit_ids,
                "logits": rounded(r["logits"][:, logit_ids]),  # [position][logit_ids]
            })
    return out


def main():
    fixtures, golden_dir, only = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(golden_dir, exist_ok=True)
    for name in sorted(os.listdir(fixtures)):
        if only and name not in only:
            continue
        folder = os.path.join(fixtures, name)
        if not os.path.isfile(os.path.join(folder, "config.json")):
            continue
        with open(os.path.join(folder, "config.json")) as f:
            kind = json.load(f)["model_type"]
        if kind in SEQ2SEQ_KINDS:
            continue  # make_seq2seq_golden.py writes those
        data = decoder_golden(folder, name) if kind in DECODER_KINDS else golden_for(folder, name)
        with open(os.path.join(golden_dir, name + ".json"), "w") as f:
            json.dump(data, f, separators=(",", ":"))
            f.write("\n")
        print("wrote", name)


if __name__ == "__main__":
    main()
