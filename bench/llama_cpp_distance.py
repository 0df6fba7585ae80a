"""How far is attnscope from llama.cpp on a realistic shape, and why?

Writes a GGUF of Llama-3.2-1B's shape (hidden 2048, 32 query heads sharing 8 key/value heads of 64,
MLP 8192, the real Llama 3 tokenizer and its 128,256-row tied embedding; --layers of the 16) with
llama.cpp's Q4_K_M mix (Q4_K, with attn_v and ffn_down Q6_K in the layers llama-quantize gives more
bits, the embedding Q6_K) of random valid blocks (tools/gguf/ggml_quants.py, weight scale 0.02 as a
trained model's projections; the final norm's weight set so the logits spread like a trained
model's: top-1 probabilities of ~0.05-0.3 over 128k tokens), and the Hugging Face folder of the same dequantised
weights. Then for a few texts:

  llama.cpp  node-llama-cpp 3.21.1 (tests/tools/llama_cpp/reference.mjs), one thread, KV cache F32
             and, separately, its default F16, and fed one token at a time (--batch 1: other
             kernels, the same roundings in another order);
  exact      the float64 reference (tools/reference/hf_decoder_reference.py) on the dequantised
             weights: what attnscope computes (exact dequantisation, float arithmetic);
  emulated   the same reference rounding every matmul's input as llama.cpp's CPU backend does for
             that weight's type (Q8_K for K-quants: tests/tools/llama_cpp/llama_cpp_rounding.py);
  attnscope  `attnscope export`/`generate` on the GGUF (and on the HF folder) when --attnscope is
             given;

and prints, per text and overall: max |dp| over llama.cpp's top-10, the KL divergence of the
top-10, and whether the greedy continuations (N tokens) are equal.

    /usr/bin/python3 bench/llama_cpp_distance.py --out DIR [--layers 4] [--generate 16]
        [--mix Q4_K_M|Q8_0|F16|F32] [--attnscope build/bin/attnscope] [--seed 0]
Needs node-llama-cpp (scripts/fetch_test_data.sh) and ~6 GB of memory (the float64 reference holds
the 128,256 x 2048 embedding); the files take ~2.5 GB (HF folder F32) + the GGUF.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "gguf"))
sys.path.insert(0, os.path.join(ROOT, "tests", "tools", "llama_cpp"))
import ggml_quants as gq  # noqa: E402
import gguf_vocab as gv  # noqa: E402
import gguf_writer as gw  # noqa: E402

TEXTS = [
    "The capital of France is",
    "Once upon a time, in a small village by the sea, there lived an old fisherman who",
    "def fibonacci(n):\n    if n < 2:\n        return n\n    return",
    "Photosynthesis converts light energy into chemical energy. The main products are",
    "In 1969, Neil Armstrong became the first person to",
    "Q: What is 17 times 23?\nA:",
]

SHAPE = dict(hidden=2048, heads=32, kv_heads=8, head_dim=64, ffn=8192, rope_theta=500000.0,
             eps=1e-5)


def mix_types(mix, layers):
    """{gguf tensor base name: ggml type} of llama.cpp's file type `mix` (llama-quant.cpp's
    choices for Q4_K_M: Q6_K for attn_v and ffn_down where use_more_bits(i, n) — the first and
    last eighth and every third layer between — and for the output/tied embedding)."""
    def more_bits(i):
        return i < layers // 8 or i >= 7 * layers // 8 or (i - layers // 8) % 3 == 2
    out = {}
    for i in range(layers):
        for t in ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"):
            if mix == "Q4_K_M":
                out[f"blk.{i}.{t}"] = "Q6_K" if t in ("attn_v", "ffn_down") and more_bits(i) else "Q4_K"
            else:
                out[f"blk.{i}.{t}"] = mix
    out["token_embd"] = {"Q4_K_M": "Q6_K"}.get(mix, mix)
    return out


def permute(w, n_head):
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def unpermute(w, n_head):
    return (w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def random_matrix(type_name, rows, cols, scale, rng, chunk_rows=4096):
    """(raw bytes, dequantised float32 [rows, cols]) of random valid blocks, made in row chunks."""
    raws, deqs = [], []
    for r0 in range(0, rows, chunk_rows):
        n = min(chunk_rows, rows - r0)
        raw = gq.random_blocks(type_name, n * cols, scale, rng)
        raws.append(raw)
        deqs.append(gq.dequantize(raw, type_name, (n, cols)))
    return b"".join(raws), np.concatenate(deqs, axis=0)


def write_safetensors(path, tensors):
    header, offset = {}, 0
    for name, a in tensors.items():
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [offset, offset + a.size * 4]}
        offset += a.size * 4
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h)
        for a in tensors.values():
            f.write(np.ascontiguousarray(a, dtype="<f4").tobytes())


def make_model(out, name, mix, layers, seed, logit_spread):
    s = SHAPE
    rng = np.random.default_rng(seed)
    npm = os.path.join(ROOT, "tests", "data", "npm", "llama3")
    with open(os.path.join(npm, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    with open(os.path.join(npm, "tokenizer_config.json"), encoding="utf-8") as f:
        tok_cfg = json.load(f)
    vocab = gv.build_vocab(tok, tok_cfg, pre="llama-bpe", add_bos=True)
    n_vocab = len(vocab["tokens"])
    types = mix_types(mix, layers)

    w = gw.GgufWriter(os.path.join(out, name + ".gguf"), "llama")
    w.add_string("general.name", name)
    ftype = {"Q4_K_M": "MOSTLY_Q4_K_M", "Q8_0": "MOSTLY_Q8_0", "F16": "MOSTLY_F16",
             "F32": "ALL_F32"}[mix]
    w.add_uint32("general.file_type", gw.FILE_TYPE[ftype])
    w.add_uint32("general.quantization_version", 2)
    for key, value in (("context_length", 131072), ("embedding_length", s["hidden"]),
                       ("block_count", layers), ("feed_forward_length", s["ffn"]),
                       ("rope.dimension_count", s["head_dim"]),
                       ("attention.head_count", s["heads"]),
                       ("attention.head_count_kv", s["kv_heads"]),
                       ("attention.key_length", s["head_dim"]),
                       ("attention.value_length", s["head_dim"]), ("vocab_size", n_vocab)):
        w.add_uint32(f"llama.{key}", value)
    w.add_float32("llama.attention.layer_norm_rms_epsilon", s["eps"])
    w.add_float32("llama.rope.freq_base", s["rope_theta"])
    gv.add_vocab(w, vocab)

    hf = {}
    d, q_rows, kv_rows = s["hidden"], s["heads"] * s["head_dim"], s["kv_heads"] * s["head_dim"]

    def matrix(gguf_name, hf_name, rows, cols, scale, heads=None):
        t = types[gguf_name]
        raw, deq = random_matrix(t, rows, cols, scale, rng)
        w.add_tensor(gguf_name + ".weight", raw, t, (rows, cols))
        # The file's rows are llama.cpp's interleaved rotary layout; HF's are rotate_half's.
        hf[hf_name] = unpermute(deq, heads) if heads else deq

    def norm(gguf_name, hf_name, value):
        v = (value * (1.0 + 0.1 * rng.standard_normal(d))).astype(np.float32)
        w.add_tensor_f32(gguf_name + ".weight", v)
        hf[hf_name] = v

    matrix("token_embd", "model.embed_tokens.weight", n_vocab, d, 0.02)
    for i in range(layers):
        p, g = f"model.layers.{i}.", f"blk.{i}."
        norm(g + "attn_norm", p + "input_layernorm.weight", 1.0)
        matrix(g + "attn_q", p + "self_attn.q_proj.weight", q_rows, d, 0.02, s["heads"])
        matrix(g + "attn_k", p + "self_attn.k_proj.weight", kv_rows, d, 0.02, s["kv_heads"])
        matrix(g + "attn_v", p + "self_attn.v_proj.weight", kv_rows, d, 0.02)
        matrix(g + "attn_output", p + "self_attn.o_proj.weight", d, q_rows, 0.02)
        norm(g + "ffn_norm", p + "post_attention_layernorm.weight", 1.0)
        matrix(g + "ffn_gate", p + "mlp.gate_proj.weight", s["ffn"], d, 0.02)
        matrix(g + "ffn_up", p + "mlp.up_proj.weight", s["ffn"], d, 0.02)
        matrix(g + "ffn_down", p + "mlp.down_proj.weight", d, s["ffn"], 0.02)
    # logits = norm(x) * g . E: E's rows have |e| ~ 0.02 sqrt(d), so g sets the logits' spread.
    norm("output_norm", "model.norm.weight", logit_spread / (0.02 * math.sqrt(d)))
    size = w.write()

    folder = os.path.join(out, name + ".hf")
    os.makedirs(folder, exist_ok=True)
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": d,
           "intermediate_size": s["ffn"], "num_hidden_layers": layers,
           "num_attention_heads": s["heads"], "num_key_value_heads": s["kv_heads"],
           "head_dim": s["head_dim"], "vocab_size": n_vocab, "max_position_embeddings": 131072,
           "rms_norm_eps": s["eps"], "rope_theta": s["rope_theta"], "hidden_act": "silu",
           "tie_word_embeddings": True, "bos_token_id": 128000, "eos_token_id": 128001,
           "torch_dtype": "float32", "attention_bias": False, "mlp_bias": False}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    for extra in ("tokenizer.json", "tokenizer_config.json"):
        with open(os.path.join(npm, extra), "rb") as src, open(os.path.join(folder, extra), "wb") as dst:
            dst.write(src.read())
    write_safetensors(os.path.join(folder, "model.safetensors"), hf)
    return size


def llama_cpp(gguf, texts, generate, kv, out, batch=0):
    inp = os.path.join(out, "texts.json")
    res = os.path.join(out, f"llama_cpp_{kv}{f'_b{batch}' if batch else ''}.json")
    with open(inp, "w") as f:
        json.dump(texts, f)
    subprocess.run(["node", os.path.join(ROOT, "tests", "tools", "llama_cpp", "reference.mjs"),
                    "--threads", "1", "--kv", kv, "--generate", str(generate), "--batch", str(batch),
                    gguf, inp, res], check=True)
    with open(res) as f:
        return json.load(f)


def attnscope_run(binary, model, text, generate, ids, bos_text):
    """attnscope's top-10 and greedy tokens, or (None, why). The HF folder's tokenizer.json (the npm
    copy of Llama 3's) has no BOS post-processor: the BOS is then written into the text."""
    for attempt in (text, bos_text + text):
        e = subprocess.run([binary, "export", "--model", model, "--text", attempt, "--backend", "cpu",
                            "--layers", "0", "--heads", "0"], capture_output=True, text=True)
        if e.returncode:
            return None, e.stderr.strip()
        doc = json.loads(e.stdout)
        if [t["id"] for t in doc["tokens"]] == ids:
            text = attempt
            break
    else:
        return None, "attnscope's tokens differ from llama.cpp's"
    top = [(p["id"], p["probability"]) for p in doc["predictions"]]
    g = subprocess.run([binary, "generate", "--model", model, "--text", text, "-n", str(generate),
                        "--backend", "cpu"], capture_output=True, text=True)
    if g.returncode:
        return None, g.stderr.strip()
    gen = [t["id"] for t in json.loads(g.stdout)["tokens"] if t.get("generated")]
    return (top, gen), None


def top_distance(ref_top, probs_of):
    """max |dp| over the reference's top-10 ids (an id the other side does not list counts as p 0),
    and the KL divergence of the top-10 renormalised (None when the other side lacks one of them)."""
    p = np.array([q for _, q in ref_top])
    got = [probs_of(i) for i, _ in ref_top]
    q = np.array([0.0 if g is None else g for g in got])
    kl = None
    if all(g is not None for g in got):
        kl = float(np.sum(p / p.sum() * np.log((p / p.sum()) / np.maximum(q / q.sum(), 1e-30))))
    return float(np.max(np.abs(p - q))), kl


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--generate", type=int, default=16)
    ap.add_argument("--mix", default="Q4_K_M", choices=("Q4_K_M", "Q8_0", "F16", "F32"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--logit-spread", type=float, default=3.0,
                    help="standard deviation of the logits over the vocabulary")
    ap.add_argument("--attnscope", default=None)
    ap.add_argument("--no-reference", action="store_true", help="llama.cpp and attnscope only")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    name = f"llama3.2-1b-shape-{args.layers}l-{args.mix}"
    gguf = os.path.join(args.out, name + ".gguf")
    hf = os.path.join(args.out, name + ".hf")
    t0 = time.time()
    if not os.path.exists(gguf) or not os.path.exists(os.path.join(hf, "model.safetensors")):
        size = make_model(args.out, name, args.mix, args.layers, args.seed, args.logit_spread)
        print(f"wrote {gguf} ({size / 1e6:.0f} MB) and {hf} in {time.time() - t0:.0f} s", flush=True)

    runs = {kv: llama_cpp(gguf, TEXTS, args.generate, kv, args.out) for kv in ("f32", "f16")}
    # The same llama.cpp fed one token at a time: other kernels (gemv instead of gemm), another
    # order of the same roundings.
    runs["f32_b1"] = llama_cpp(gguf, TEXTS, args.generate, "f32", args.out, batch=1)
    results = {"model": name, "layers": args.layers, "mix": args.mix, "texts": []}
    rows = {k: [] for k in ("llama.cpp F16 KV vs F32 KV", "llama.cpp batch 1 vs whole text",
                            "exact vs llama.cpp", "emulated vs llama.cpp",
                            "attnscope gguf vs llama.cpp", "attnscope hf vs llama.cpp",
                            "attnscope gguf vs exact", "attnscope hf vs exact")}
    greedy = {k: [0, 0] for k in rows}

    refs, sens = {}, {}
    if not args.no_reference:
        import torch
        from llama_cpp_rounding import reference_for
        for emulate in (False, True):
            t1 = time.time()
            ref = reference_for(gguf, hf, emulate)
            per_text = []
            for r in runs["f32"]["results"]:
                ids = list(r["ids"])
                probs = torch.softmax(ref.forward(ids, last_logits_only=True)["logits"][-1], -1)
                gen = []
                for _ in range(len(r["generated"])):
                    nxt = int(ref.forward(ids, last_logits_only=True)["logits"][-1].argmax())
                    gen.append(nxt)
                    ids.append(nxt)
                per_text.append((probs.numpy(), gen))
            # Sensitivity: the same texts with the embedding scaled by (1 + 1e-6). Float
            # arithmetic moves by ~1e-6; with llama.cpp's roundings, activations near a rounding
            # boundary land on its other side, and the answer moves by as much as it differs
            # from llama.cpp's.
            e = ref.w[ref.names.embed]
            ref.w[ref.names.embed] = e * (1 + 1e-6)
            label = f"{'emulated' if emulate else 'exact'}: embedding x (1 + 1e-6)"
            sens[label] = [torch.softmax(ref.forward(r["ids"], last_logits_only=True)["logits"][-1],
                                         -1).numpy() for r in runs["f32"]["results"]]
            ref.w[ref.names.embed] = e
            refs["emulated" if emulate else "exact"] = per_text
            del ref
            print(f"{'emulated' if emulate else 'exact'} reference: {time.time() - t1:.0f} s", flush=True)

    for k, r in enumerate(runs["f32"]["results"]):
        entry = {"text": r["text"], "tokens": len(r["ids"]), "llama_cpp_top": r["top"][:3]}
        ref_top = [(t["id"], t["probability"]) for t in r["top"]]

        def add(label, probs_of, gen):
            dp, kl = top_distance(ref_top, probs_of)
            rows[label].append(dp)
            greedy[label][1] += 1
            greedy[label][0] += gen == r["generated"]
            entry[label] = {"max_dp": dp, "kl": kl, "greedy_equal": gen == r["generated"]}

        f16 = runs["f16"]["results"][k]
        f16_p = dict((t["id"], t["probability"]) for t in f16["top"])
        add("llama.cpp F16 KV vs F32 KV", lambda i: f16_p.get(i), f16["generated"])
        b1 = runs["f32_b1"]["results"][k]
        b1_p = dict((t["id"], t["probability"]) for t in b1["top"])
        add("llama.cpp batch 1 vs whole text", lambda i: b1_p.get(i), b1["generated"])
        for label in ("exact", "emulated"):
            if label in refs:
                probs, gen = refs[label][k]
                add(f"{label} vs llama.cpp", lambda i, p=probs: float(p[i]), gen)
                moved = sens[f"{label}: embedding x (1 + 1e-6)"][k]
                dp = max(abs(float(moved[i]) - float(probs[i])) for i, _ in ref_top)
                rows.setdefault(f"{label} moved by 1e-6 input", []).append(dp)
                greedy.setdefault(f"{label} moved by 1e-6 input", [0, 0])
                entry[f"{label} moved by 1e-6 input"] = dp
        if args.attnscope:
            for kind, model in (("gguf", gguf), ("hf", hf)):
                got, err = attnscope_run(args.attnscope, model, r["text"], args.generate, r["ids"],
                                         r["pieces"][0])
                if got is None:
                    entry[f"attnscope {kind}"] = err
                    continue
                top, gen = got
                tp = dict(top)
                add(f"attnscope {kind} vs llama.cpp", lambda i: tp.get(i), gen)
                if "exact" in refs:
                    probs, egen = refs["exact"][k]
                    dp = max(abs(p - float(probs[i])) for i, p in top)
                    rows[f"attnscope {kind} vs exact"].append(dp)
                    greedy[f"attnscope {kind} vs exact"][1] += 1
                    greedy[f"attnscope {kind} vs exact"][0] += gen == egen
        results["texts"].append(entry)
        print(json.dumps(entry), flush=True)

    print(f"\n{name}: {len(TEXTS)} texts, greedy {args.generate} tokens, llama.cpp one thread")
    print(f"{'':32s} {'max |dp| top-10':>16s} {'median':>10s} {'greedy equal':>13s}")
    summary = {}
    for label, values in rows.items():
        if not values:
            continue
        g = greedy[label]
        summary[label] = {"max_dp": max(values), "median_dp": float(np.median(values)),
                          "greedy_equal": f"{g[0]}/{g[1]}" if g[1] else None}
        print(f"{label:32s} {max(values):16.3g} {float(np.median(values)):10.3g} "
              f"{f'{g[0]:>9d}/{g[1]}' if g[1] else ''}")
    results["summary"] = summary
    with open(os.path.join(args.out, name + ".results.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
