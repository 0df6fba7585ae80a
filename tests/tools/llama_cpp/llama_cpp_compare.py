"""attnscope against llama.cpp itself (node-llama-cpp 3.21.1, reference.mjs) on GGUF files:

  - token ids: `attnscope tokenize --model F.gguf --special` equals llama.cpp's tokenization with
    the BOS/EOS llama.cpp adds;
  - next-token probabilities: the top 10 of `attnscope export` ("predictions") within TOL (2e-3) of
    llama.cpp's full-vocabulary softmax, rank by rank and id by id; the same ids, except ones whose
    probability is within TOL of the 10th (the boundary); the same order wherever two
    probabilities differ by more than TOL;
  - greedy continuations: `attnscope generate -n N` (temperature 0) writes exactly llama.cpp's
    tokens. A step where the two best tokens are nearly tied can swap by llama.cpp's rounding
    alone; the failure then says how near the tie was (the fixtures are shaped to have none).

Models: every entry of FIXTURES/manifest.json (tiny GGUFs of each architecture and tensor type,
shaped so that llama.cpp's rounding stays small), and stories260K (a real trained Llama,
assets/stories260K) converted here to GGUF as F32, F16, Q8_0 and Q4_0 by hf_llama_to_gguf.py.
For each, the Hugging Face folder of the same weights (NAME.hf: dequantised, un-permuted) goes
through attnscope's safetensors path too: reported beside the GGUF path, and the two paths must
agree within SAME (1e-5) with the same greedy tokens.

stories260K-Q8_0 and -Q4_0 are the exception to TOL: llama.cpp quantises the activations of a
32-block weight to Q8_0 before multiplying, and on a 64-wide real model that moves probabilities by
up to ~2e-2 (bench/llama_cpp_distance.py shows a reference emulating that rounding agrees with
llama.cpp to ~1e-6 except where a single activation rounds the other way). There attnscope must be
within LOOSE (5e-2) of llama.cpp with the same most likely token where llama.cpp's leads by more
than LOOSE — which a wrong permutation, type or tokenizer breaks by far — and equal to its own
safetensors path.

llama.cpp runs with one thread and an F32 KV cache (-ctk f32 -ctv f32): its default F16 cache rounds
keys and values (and the queries multiplied with them) to half precision, a rounding attnscope
does not do. What remains is llama.cpp's quantisation of activations before quantised matmuls
(Q8_0/Q8_1/Q8_K; F16 for F16 weights): see bench/llama_cpp_distance.py.

    /usr/bin/python3 llama_cpp_compare.py --attnscope BIN --fixtures DIR --stories DIR --work DIR
        [--models all|fixtures|stories] [--only NAME_REGEX] [--generate N] [--tol 2e-3]
Exit 0 when every check passes, 1 otherwise (each failure is printed), 77 when node-llama-cpp is not
installed and ATTNSCOPE_LLAMA_CPP_OPTIONAL=1 (a skip).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
INSTALL = os.environ.get("ATTNSCOPE_NODE_LLAMA_CPP",
                         os.path.join(ROOT, "tests", "data", "npm", "node-llama-cpp"))

TEXTS = [
    "Once upon a time",
    "The quick brown fox jumps over the lazy dog.",
    " leading space and  two  spaces",
    "Numbers 1234567 and 3.14159, dates 2024-06-01!",
    "line one\nline two\n\n\ttabbed",
    "Unicode: café naïve Straße, ελληνικά, русский, 日本語のテキスト, 한국어 😀👍🏽",
    "code: def f(x):\n    return x**2  # square",
    "a",
]
# Tokenizer-only fixtures get more text: ids are all that is compared there.
VOCAB_TEXTS = TEXTS + [
    "",
    "   ",
    "Hello world",
    "HELLO World hello WORLD",
    "don't you'll I'm we've they're it's",
    "€100 £50 ¥1000 ₹500",
    "\u00a0non-breaking\u3000ideographic space",
    "中文文本测试，还有标点符号。",
    "مرحبا بالعالم",
    "नमस्ते दुनिया",
    "emoji zwj 👨‍👩‍👧‍👦 flags 🇩🇪🇯🇵",
    "x" * 200,
]


class Failures:
    def __init__(self):
        self.items = []

    def add(self, model, what):
        self.items.append(f"{model}: {what}")
        print(f"  FAIL {what}", flush=True)


def run(cmd, **kw):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    except OSError as e:  # not there, not executable (being rebuilt)
        raise RuntimeError(f"{cmd[0]}: {e}") from e
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:6])}... exited {p.returncode}: {p.stderr.strip()[-600:]}")
    return p.stdout


def llama_cpp(gguf, texts, generate, vocab_only, work):
    fd, inp = tempfile.mkstemp(suffix=".json", dir=work)
    os.close(fd)
    out = inp[:-5] + ".out.json"
    with open(inp, "w") as f:
        json.dump(texts, f)
    cmd = ["node", os.path.join(HERE, "reference.mjs"), "--threads", "1", "--kv", "f32",
           "--generate", str(generate)]
    if vocab_only:
        cmd.append("--vocab-only")
    run(cmd + [gguf, inp, out])
    with open(out) as f:
        result = json.load(f)
    os.remove(inp)
    os.remove(out)
    return result


def attnscope_ids(binary, model, text):
    d = json.loads(run([binary, "tokenize", "--model", model, "--text", text, "--special"]))
    return [t["id"] for t in d["tokens"]]


def attnscope_predictions(binary, model, text):
    d = json.loads(run([binary, "export", "--model", model, "--text", text, "--backend", "cpu"]))
    return [(p["id"], p["probability"]) for p in d["predictions"]], [t["id"] for t in d["tokens"]]


def attnscope_generate(binary, model, text, n):
    d = json.loads(run([binary, "generate", "--model", model, "--text", text, "-n", str(n),
                        "--backend", "cpu"]))
    generated = [t for t in d["tokens"] if t.get("generated")]
    # Each step's predictions ({id: p}) say how near a tie each choice was.
    steps = [{p["id"]: p["probability"] for p in t.get("predictions") or []} for t in generated]
    return [t["id"] for t in generated], steps


def greedy_verdict(ours, steps, theirs, tol):
    """None when the continuations are equal; otherwise a description of the first difference,
    with how near a tie it was (each probability may be `tol` off, so a pair within 2 * tol may
    swap by llama.cpp's rounding alone)."""
    if ours == theirs:
        return None
    at = first_difference(ours, theirs)
    if at < len(ours) and at < len(theirs) and at < len(steps):
        mine = steps[at].get(ours[at])
        other = steps[at].get(theirs[at])
        if mine is not None and other is not None:
            tie = " — a near-tie, within 2 x tol" if mine - other <= 2 * tol else ""
            detail = f"attnscope gives llama.cpp's token p {other:.5f} against its own {mine:.5f}{tie}"
        else:
            detail = "llama.cpp's token is not in attnscope's top predictions"
    else:
        detail = "one stops earlier"
    return f"attnscope {ours}, llama.cpp {theirs} (first difference at step {at}: {detail})"


def compare_top(ours, ref, tol):
    """Problems (strings) between attnscope's top list [(id, p)] and llama.cpp's; and max |dp|."""
    problems = []
    n = min(len(ours), len(ref))
    if n < min(10, len(ref)):
        problems.append(f"attnscope gave {len(ours)} predictions, llama.cpp {len(ref)}")
    worst = 0.0
    for k in range(n):  # rank by rank
        worst = max(worst, abs(ours[k][1] - ref[k][1]))
    ours_p, ref_p = dict(ours[:n]), dict(ref[:n])
    for i, p in ref_p.items():  # id by id
        if i in ours_p:
            worst = max(worst, abs(ours_p[i] - p))
    if worst > tol:
        problems.append(f"max |dp| {worst:.3g} > {tol:g}")
    edge = min(ref[n - 1][1], ours[n - 1][1]) if n else 0.0
    for i, p in ref_p.items():
        if i not in ours_p and p > edge + tol:
            problems.append(f"llama.cpp's id {i} (p {p:.4g}) missing from attnscope's top {n}")
    for i, p in ours_p.items():
        if i not in ref_p and p > edge + tol:
            problems.append(f"attnscope's id {i} (p {p:.4g}) missing from llama.cpp's top {n}")
    rank = {i: k for k, (i, _) in enumerate(ours[:n])}
    for a in range(n):
        for b in range(a + 1, n):
            ia, ib = ref[a][0], ref[b][0]
            if ref[a][1] - ref[b][1] > tol and ia in rank and ib in rank and rank[ia] > rank[ib]:
                problems.append(f"order: llama.cpp ranks {ia} ({ref[a][1]:.4g}) above {ib} "
                                f"({ref[b][1]:.4g}), attnscope below")
    return problems, worst


def loose_problems(ours, ref, loose):
    """For models whose llama.cpp result carries its activation rounding (quantised real weights):
    max |dp| within `loose`, and the same most likely token wherever llama.cpp's top-1 leads its
    runner-up by more than `loose`."""
    worst = max(abs(a[1] - b[1]) for a, b in zip(ours, ref))
    problems = []
    if worst > loose:
        problems.append(f"max |dp| {worst:.3g} > {loose:g}")
    if len(ref) > 1 and ref[0][1] - ref[1][1] > loose and ours[0][0] != ref[0][0]:
        problems.append(f"most likely token: attnscope {ours[0][0]}, llama.cpp {ref[0][0]} "
                        f"(p {ref[0][1]:.4g}, runner-up {ref[1][1]:.4g})")
    return problems, worst


def first_difference(a, b):
    return next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def check_model(name, gguf, hf, vocab_only, exact, texts, args, failures, table):
    """exact: llama.cpp is expected within --tol (F32 weights, or fixtures shaped to keep its
    rounding small); otherwise within --loose, and attnscope's GGUF path must equal its
    safetensors path on the same (dequantised) weights within --same."""
    print(f"== {name} ({os.path.basename(gguf)}{', vocab only' if vocab_only else ''}"
          f"{'' if exact or vocab_only else ', llama.cpp rounds activations: compared loosely'})",
          flush=True)
    try:
        ref = llama_cpp(gguf, texts, args.generate, vocab_only, args.work)
    except RuntimeError as e:
        failures.add(name, f"llama.cpp could not run it: {e}")
        return
    have_hf = bool(hf) and os.path.isdir(hf)
    stats = {"gguf": [0.0, 0, 0], "hf": [0.0, 0, 0]}  # max |dp| vs llama.cpp, greedy same, total
    same_worst = 0.0
    gguf_opens = True  # after one failure to open the GGUF, only the safetensors path is run
    for r in ref["results"]:
        text = r["text"]
        if gguf_opens:
            try:
                ids = attnscope_ids(args.attnscope, gguf, text)
                if ids != r["ids"]:
                    failures.add(name, f"ids of {text!r}: attnscope {ids}, llama.cpp {r['ids']}")
            except RuntimeError as e:
                failures.add(name, f"attnscope cannot open the GGUF: {e}")
                gguf_opens = False
        if vocab_only or not r["ids"]:
            continue
        llama_top = [(t["id"], t["probability"]) for t in r["top"]]
        runs = {}
        paths = ([("gguf", gguf)] if gguf_opens else []) + ([("hf", hf)] if have_hf else [])
        for kind, model in paths:
            try:
                top, seen = attnscope_predictions(args.attnscope, model, text)
                run_text = text
                if kind == "hf" and seen == r["ids"][1:] and r["ids"][:1] == [ref["model"]["bos"]]:
                    # A tokenizer.json without the BOS post-processor (the npm copy of Llama 3's):
                    # the BOS written into the text gives the safetensors path llama.cpp's ids.
                    run_text = r["pieces"][0] + text
                    top, seen = attnscope_predictions(args.attnscope, model, run_text)
                gen, margins = attnscope_generate(args.attnscope, model, run_text, args.generate) \
                    if args.generate > 0 else ([], [])
            except RuntimeError as e:
                failures.add(name, f"[{kind}] attnscope failed: {e}")
                continue
            if seen != r["ids"]:
                if kind == "hf":  # the HF folder's tokenizer.json is not what is tested here
                    print(f"  note: [hf] tokens of {text!r} differ from llama.cpp's: {seen[:12]}... "
                          f"(the safetensors path is not compared on it)", flush=True)
                else:
                    failures.add(name, f"export's tokens of {text!r}: {seen}, llama.cpp {r['ids']} "
                                 f"(predictions not compared)")
                continue
            runs[kind] = (top, gen)
            problems, w = (compare_top(top, llama_top, args.tol) if exact
                           else loose_problems(top, llama_top, args.loose))
            st = stats[kind]
            st[0] = max(st[0], w)
            if args.generate > 0:
                st[2] += 1
                st[1] += gen == r["generated"]
            if kind != "gguf":
                continue  # the safetensors path is only reported beside it
            for p in problems:
                failures.add(name, f"{text!r}: {p}")
            if exact and args.generate > 0:
                verdict = greedy_verdict(gen, margins, r["generated"], args.tol)
                if verdict:
                    failures.add(name, f"greedy continuation of {text!r}: {verdict}")
        if "gguf" in runs and "hf" in runs:
            (gt, gg), (ht, hg) = runs["gguf"], runs["hf"]
            if [i for i, _ in gt] != [i for i, _ in ht]:
                failures.add(name, f"{text!r}: the GGUF path's top ids {[i for i, _ in gt]} differ "
                             f"from the safetensors path's {[i for i, _ in ht]} (same weights)")
            else:
                w = max(abs(a[1] - b[1]) for a, b in zip(gt, ht))
                same_worst = max(same_worst, w)
                if w > args.same:
                    failures.add(name, f"{text!r}: GGUF and safetensors paths differ by {w:.3g} > "
                                 f"{args.same:g} on the same weights")
            if gg != hg:
                failures.add(name, f"greedy continuation of {text!r}: GGUF path {gg}, safetensors "
                             f"path {hg} (same weights)")
    if vocab_only:
        return
    for kind in (["gguf"] if gguf_opens else []) + (["hf"] if have_hf else []):
        w, same, total = stats[kind]
        table.append((name, kind, w, f"{same}/{total}",
                      same_worst if kind == "gguf" and have_hf else None))
        print(f"  [{kind}] vs llama.cpp: max |dp| top-10 {w:.3g}, greedy equal {same}/{total}",
              flush=True)
    if have_hf and gguf_opens:
        print(f"  GGUF path vs safetensors path: max |dp| {same_worst:.3g}", flush=True)


def stories_models(args):
    """stories260K as GGUF files of three types (written once into the work folder)."""
    out = []
    for t in ("F32", "F16", "Q8_0", "Q4_0"):
        name = f"stories260K-{t}"
        gguf = os.path.join(args.work, name + ".gguf")
        if not os.path.exists(gguf) or os.path.getmtime(gguf) < os.path.getmtime(
                os.path.join(HERE, "hf_llama_to_gguf.py")):
            run([sys.executable, os.path.join(HERE, "hf_llama_to_gguf.py"), args.stories, args.work,
                 name, t])
        # F32: llama.cpp multiplies in float too, so it must agree closely; F16 rounds the
        # activations to half precision (measured 1.0e-3); the 32-blocks quantise them to Q8_0,
        # which on a 64-wide model moves p by up to ~2e-2 (bench/llama_cpp_distance.py).
        out.append((name, gguf, os.path.join(args.work, name + ".hf"), False, t in ("F32", "F16")))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attnscope", required=True)
    ap.add_argument("--fixtures", required=True, help="build/fixtures/gguf (manifest.json)")
    ap.add_argument("--stories", required=True, help="a stories260K Hugging Face folder")
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", default="", help="a regex on the model names")
    ap.add_argument("--models", choices=("all", "fixtures", "stories"), default="all",
                    help="the manifest's fixtures, stories260K, or both")
    ap.add_argument("--generate", type=int, default=8)
    ap.add_argument("--tol", type=float, default=2e-3, help="|dp| against llama.cpp")
    ap.add_argument("--loose", type=float, default=5e-2,
                    help="|dp| against llama.cpp on quantised real weights (stories260K)")
    ap.add_argument("--same", type=float, default=1e-5,
                    help="|dp| between the GGUF and the safetensors path on the same weights")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    if not os.path.exists(os.path.join(INSTALL, "node_modules", "node-llama-cpp", "package.json")):
        msg = f"node-llama-cpp is not installed in {INSTALL}: run scripts/fetch_test_data.sh"
        if os.environ.get("ATTNSCOPE_LLAMA_CPP_OPTIONAL") == "1":
            print("SKIP " + msg)
            return 77
        print("FAIL " + msg)
        return 1

    failures, table = Failures(), []
    models = []
    manifest = os.path.join(args.fixtures, "manifest.json")
    if args.models == "stories":
        pass
    elif os.path.exists(manifest):
        with open(manifest) as f:
            for entry in json.load(f):
                name = entry["name"]
                vocab_only = name.startswith("vocab-")
                hf = os.path.join(args.fixtures, entry["hf"]) if entry.get("hf") else None
                models.append((name, os.path.join(args.fixtures, entry.get("gguf", name + ".gguf")),
                               hf, vocab_only, True))
    else:
        failures.add("fixtures", f"{manifest} is missing (the gguf_fixtures target writes it)")
    # The tokenizer-only GGUFs of vocab_manifest.json are no models attnscope's commands open:
    # llama_cpp_tokenizer_test compares their tokenizers with reference.mjs --vocab-only directly.
    if args.models != "fixtures":
        models += stories_models(args)
    pattern = re.compile(args.only) if args.only else None
    for name, gguf, hf, vocab_only, exact in models:
        if pattern and not pattern.search(name):
            continue
        check_model(name, gguf, hf, vocab_only, exact, VOCAB_TEXTS if vocab_only else TEXTS, args,
                    failures, table)

    print("\nagainst llama.cpp         path  max|dp| top-10  greedy equal  GGUF vs safetensors")
    for name, kind, worst, greedy, same in table:
        print(f"{name:25s} {kind:5s} {worst:14.3g}  {greedy:12s}  {'' if same is None else f'{same:.3g}'}")
    if failures.items:
        print(f"\n{len(failures.items)} failure(s):")
        for f in failures.items:
            print("  " + f)
        return 1
    print("\nevery check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
