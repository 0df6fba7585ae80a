"""Writes tests/data/golden/value-norms-bert-tiny-uncased-f32.json: BERT's value norms and the
value-norm-weighted attention (issue 27), from the independent float64 reference.

    /usr/bin/python3 tools/reference/make_value_norm_golden.py build/fixtures tests/data/golden

For every layer l, head h and key j:
    n_j = ||v_j . W_O,h||      v_j = value(x_j) (bias included), head h's dh columns;
                               W_O,h = head h's rows of attention.output.dense in [in x out] form
                                       (nn.Linear keeps [out x in]: its columns), bias excluded
    w_ij = a_ij . n_j / sum_j' a_ij' . n_j'   (a row summing to 0 stays 0)
computed directly (v_j . W_O,h as a product, then its norm), not through a Gram matrix as attnscope
does, so the two meet only in the answer.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_reference import load_model  # noqa: E402
from make_golden import BERT_CASES, rounded  # noqa: E402

NAME = "bert-tiny-uncased-f32"


def value_norm_case(model, cfg, ids, types):
    """Each layer's [heads][keys] value norms, raw attention and value-weighted attention."""
    heads = cfg["num_attention_heads"]
    dh = cfg["hidden_size"] // heads
    values = []  # each layer's value(x) [n x d], captured on the way through the forward pass
    hooks = [layer.attention.self.value.register_forward_hook(lambda m, i, o: values.append(o[0]))
             for layer in model.encoder.layer]
    x = torch.tensor([ids])
    _, attentions = model(x, None if types is None else torch.tensor([types]))
    for h in hooks:
        h.remove()
    norms, weighted = [], []
    for layer, v, a in zip(model.encoder.layer, values, attentions):
        w_o = layer.attention.output.dense.weight.t()  # [in x out]
        layer_norms, layer_weighted = [], []
        for h in range(heads):
            moved = v[:, h * dh:(h + 1) * dh] @ w_o[h * dh:(h + 1) * dh, :]  # [n x d]
            n = moved.norm(dim=1)  # [n]
            scaled = a[0, h] * n.unsqueeze(0)  # [queries x keys]
            sums = scaled.sum(dim=1, keepdim=True)
            w = torch.where(sums > 0, scaled / torch.where(sums > 0, sums, torch.ones_like(sums)),
                            torch.zeros_like(scaled))
            layer_norms.append(n)
            layer_weighted.append(w)
        norms.append(rounded(torch.stack(layer_norms)))
        weighted.append(rounded(torch.stack(layer_weighted)))
    return norms, weighted


def main():
    fixtures, out_dir = sys.argv[1], sys.argv[2]
    model, cfg = load_model(os.path.join(fixtures, NAME))
    doc = {"model": NAME, "kind": "bert",
           "reference": "tools/reference/make_value_norm_golden.py (float64)", "cases": []}
    with torch.no_grad():
        for case in BERT_CASES[:3]:
            ids, types = case if isinstance(case, tuple) else (case, None)
            norms, weighted = value_norm_case(model, cfg, ids, types)
            entry = {"ids": ids}
            if types is not None:
                entry["token_types"] = types
            entry["value_norms"] = norms  # [layer][head][key]
            entry["value_weighted_attention"] = weighted  # [layer][head][query][key]
            doc["cases"].append(entry)
    path = os.path.join(out_dir, f"value-norms-{NAME}.json")
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
