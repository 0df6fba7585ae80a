"""Writes tests/data/golden/interventions/<name>.json: head ablation, edge knockout, the logit lens,
head effects, direct logit attribution and value-norm attention of the fixture models and the two
real llama-style models, computed by the independent float64 reference (intervention_reference.py).

    /usr/bin/python3 tools/reference/make_intervention_golden.py build/fixtures tests/data/golden/interventions

Models: every decoder and GPT-2 fixture in the fixtures folder except the f16/bf16 GPT-2 copies and
the BERT encoders, plus assets/tiny_model ("tiny-model") and assets/stories260K ("stories260K"),
the two built-in trained models (override with --extra name=folder ...). Each model first passes
intervention_reference.self_check (the clean run against the plain reference forward, the lens, the
no-op interventions, the DLA sum); the script stops on the first failure.

Ids: decoders make_golden.decoder_cases(cfg)[0] (14 tokens), GPT-2 make_golden.GPT2_CASES[2].
Numbers: 9 significant digits, like make_golden.py.
"""
import json
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import intervention_reference as ir  # noqa: E402
from make_golden import DECODER_KINDS, GPT2_CASES, decoder_cases, rounded  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
EXTRA = {"tiny-model": os.path.join(REPO, "assets", "tiny_model"),
         "stories260K": os.path.join(REPO, "assets", "stories260K")}
SKIP = ("gpt2-tiny-f16", "gpt2-tiny-bf16")
MAX_BYTES = 300_000  # above this, value_norm_weights keeps only layers 0 and L-1


def run_list(L, H, T):
    """(at, ablate, mode, knockout) of the golden runs, indices clipped to the model."""
    last = T - 1

    def lh(l, h):
        return [min(l, L - 1), min(h, H - 1)]

    def ko(l, h, q, k):
        return [min(l, L - 1), None if h is None else min(h, H - 1), q, k]

    return [
        (last, [], "zero", []),
        (5, [], "zero", []),
        (last, [lh(0, 1)], "zero", []),
        (last, [lh(L - 1, 0), lh(0, H - 1)], "mean", []),
        (5, [lh(1, 0)], "zero", []),
        (5, [lh(0, 0)], "mean", []),
        (last, [], "zero", [ko(1, None, last, 0)]),
        (last, [], "zero", [ko(0, 1, last, last - 1), ko(L - 1, 0, last, 0)]),
        (last, [lh(1, 1)], "zero", [ko(0, None, last, 0)]),
        (6, [], "zero", [ko(0, 0, 6, 6)]),
        (6, [], "zero", [ko(0, None, 6, 3)]),
    ]


def golden(folder, name):
    model = ir.load(folder)
    kind = model.kind
    with torch.no_grad():
        if kind == "gpt2":
            ids = GPT2_CASES[2]
            _, plain, _ = model.model(torch.tensor([ids]))
            plain = plain[0]
        else:
            ids = decoder_cases(model.cfg)[0]
            plain = model.forward(ids)["logits"]
        clean = ir.self_check(model, ids, plain)
        T, L, H = len(ids), model.layers, model.heads
        last = T - 1
        means = ir.clean_means(clean)
        final = clean["logits"][last]
        checked = sorted(set(torch.topk(final, 10).indices.tolist()) | {0, 1, ids[0], model.vocab - 1})

        runs = []
        for at, ablate, mode, knockout in run_list(L, H, T):
            r = clean if not ablate and not knockout else \
                model.run(ids, ablate=[tuple(a) for a in ablate], mode=mode,
                          knockout=[tuple(k) for k in knockout], means=means)
            runs.append({"at": at, "ablate": ablate, "ablate_mode": mode, "knockout": knockout,
                         "logprobs": rounded(ir.logprobs(r, at)[checked])})

        lens = []
        for at in (last, 5):
            rows = ir.logit_lens(model, clean, at)
            lens.append({"at": at, "layers": [{"after_block": b - 1, "logprobs": rounded(row[checked])}
                                              for b, row in enumerate(rows)]})

        target = int(final.argmax())
        effect = ir.head_effects(model, ids, target, clean)
        logit, heads, components = ir.direct_logit_attribution(model, clean, target, last)
        norms = ir.value_norms(model, clean)
        weights = [ir.value_norm_weights(clean["attention"][l], norms[l]) for l in range(L)]

    doc = {
        "model": name, "kind": kind, "reference": "tools/reference/intervention_reference.py (float64)",
        "layers": L, "heads": H, "kv_heads": model.kv_heads,
        "ids": ids, "checked_ids": checked,
        "runs": runs,
        "lens": lens,
        "effect": {"target": target, "target_logprob": rounded(ir.logprobs(clean, last)[target]),
                   "effect": rounded(torch.tensor(effect, dtype=torch.float64))},
        "dla": {"target": target, "logit": rounded(torch.tensor(logit, dtype=torch.float64)),
                "dla": rounded(torch.tensor(heads, dtype=torch.float64)),
                "components": None if model.post_attention_norm else {
                    "embedding": rounded(torch.tensor(components["embedding"], dtype=torch.float64)),
                    "attention_bias": rounded(torch.tensor(components["attention_bias"], dtype=torch.float64)),
                    "mlp": rounded(torch.tensor(components["mlp"], dtype=torch.float64)),
                    "final_norm_bias": rounded(torch.tensor(components["final_norm_bias"], dtype=torch.float64))}},
        "value_norms": [rounded(nm) for nm in norms],
        "value_norm_weights": {"layers": list(range(L)), "weights": [rounded(w) for w in weights]},
    }
    if len(dump(doc)) > MAX_BYTES:
        keep = sorted({0, L - 1})
        doc["value_norm_weights"] = {"layers": keep, "weights": [rounded(weights[l]) for l in keep]}
    return doc


def dump(doc):
    return json.dumps(doc, separators=(",", ":"), allow_nan=False) + "\n"


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    fixtures, out_dir = args[0], args[1]
    extra = dict(EXTRA)
    if "--extra" in args:
        extra = dict(a.split("=", 1) for a in args[args.index("--extra") + 1:])
    os.makedirs(out_dir, exist_ok=True)
    models = []
    for name in sorted(os.listdir(fixtures)):
        folder = os.path.join(fixtures, name)
        if name in SKIP or not os.path.isfile(os.path.join(folder, "config.json")):
            continue
        with open(os.path.join(folder, "config.json")) as f:
            kind = json.load(f)["model_type"]
        if kind in DECODER_KINDS or kind == "gpt2":
            models.append((name, folder))
    models += [(n, f) for n, f in sorted(extra.items()) if os.path.isfile(os.path.join(f, "config.json"))]
    start = time.time()
    for name, folder in models:
        t = time.time()
        text = dump(golden(folder, name))
        with open(os.path.join(out_dir, name + ".json"), "w") as f:
            f.write(text)
        print(f"wrote {name} ({len(text) // 1000} KB, {time.time() - t:.1f} s)")
    print(f"{len(models)} models in {time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
