"""Writes tests/data/golden/<fixture>.json for the encoder–decoder fixtures (bart-tiny, marian-tiny,
t5-tiny, flan-t5-tiny) with the independent float64 reference (seq2seq_reference.py).

    /usr/bin/python3 tools/reference/make_seq2seq_golden.py build/fixtures tests/data/golden [NAME ...]

Format "attnscope-seq2seq-golden/1" (tests/unit/seq2seq_test.cpp reads it): {format, fixture,
kind, reference, generation: {decoder_start_token_id, eos_token_id, max_new_tokens, banned_ids,
bad_words_ids, no_repeat_ngram_size, min_length, forced_bos_token_id, forced_eos_token_id, rule}, cases: [{source, target (null: greedy), encoder_ids, encoder_tokens, decoder_ids,
encoder_attention [layer][head][s][s], decoder_attention [layer][head][t][t], cross_attention
[layer][head][t][s], top10: [{ids, probs}] for every decoder position (softmax of the model's
logits, nothing banned), logits_sample: [[position, id, raw logit]], min_greedy_margin (greedy
cases: the smallest top-1/top-2 probability gap among the allowed tokens)}]}.

Ids: bart/t5 from the fixture's tokenizer.json through Hugging Face's tokenizers (the npm binding,
tests/tools/hf_tokenizers_reference.js, with the post-processor's specials: BART <s> … </s>, T5
… </s>); marian as MarianTokenizer makes them: source.spm / target.spm pieces
(python3-sentencepiece), ids from vocab.json (unknown pieces -> <unk>), </s> appended. The decoder
ids are decoder_start_token_id followed by the target's ids, or the greedy output.
Numbers have 9 significant digits; running the script twice gives byte-identical files.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from seq2seq_reference import Seq2SeqReference  # noqa: E402

MAX_NEW_TOKENS = 64
MIN_MARGIN = 1e-3  # greedy cases must have a clearer choice than this at every step

LONG_EN = ("Attention lets every word of a sentence look at every other word; when a model translates, "
           "each new word of the output also looks back at the whole source, one step at a time.")
LONG_DE = "Jedes neue Wort schaut auf den ganzen Satz."

# (source, target or None for greedy) per fixture: a sentence pair, a long source (T5's
# bidirectional buckets reach their logarithmic part past distance 8, 16 and 32), and greedy
# outputs chosen for their clear margins: some end with </s> after a few tokens, some run to
# the 64-token limit (random decoders repeat themselves).
T5_PREFIX = "translate English to German: "
CASES = {
    "bart-tiny": [
        ("The cat sat on the mat.", "Die Katze saß auf der Matte."),
        ("The cat drinks tea.", None),
        (LONG_EN, LONG_DE),
        ("My friend sleeps.", None),
    ],
    "marian-tiny": [
        ("The cat sat on the mat.", "Die Katze saß auf der Matte."),
        ("My friend reads a book.", None),  # ends with </s> after 33 tokens
        (LONG_EN, LONG_DE),
        ("A small child is happy.", None),  # <pad>, banned, is the model's first choice at every step
    ],
    "t5-tiny": [
        (T5_PREFIX + "The cat sat on the mat.", "Die Katze saß auf der Matte."),
        (T5_PREFIX + "The teacher is happy.", None),
        (T5_PREFIX + LONG_EN, LONG_DE),
        (T5_PREFIX + "A small child reads a book.", None),
    ],
    "flan-t5-tiny": [
        (T5_PREFIX + "The cat sat on the mat.", "Die Katze saß auf der Matte."),
        (T5_PREFIX + "My friend sings a song.", None),
        (T5_PREFIX + LONG_EN, LONG_DE),
        (T5_PREFIX + "The cat writes a letter.", None),
    ],
}


def rounded(values):
    """Nested lists with 9 significant digits (more than float32 carries)."""
    arr = np.asarray(values, dtype=np.float64)
    return json.loads(json.dumps(arr.tolist(), allow_nan=False), parse_float=lambda s: float(f"{float(s):.9g}"))


def hf_tokenize(tokenizer_json, texts):
    """[(ids with specials, tokens with specials)] from Hugging Face's tokenizers (npm binding)."""
    npm = os.path.join(REPO, "tests", "data", "npm")
    script = os.path.join(REPO, "tests", "tools", "hf_tokenizers_reference.js")
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "in.json"), os.path.join(tmp, "out.json")
        with open(src, "w", encoding="utf-8") as f:
            json.dump(texts, f, ensure_ascii=False)
        subprocess.run(["node", script, os.path.abspath(tokenizer_json), npm, src, dst], check=True)
        with open(dst, encoding="utf-8") as f:
            out = json.load(f)
    return [(r["ids_with_specials"], r["tokens_with_specials"]) for r in out]


def marian_tokenize(folder, text, side):
    """MarianTokenizer: the source (or target) SentencePiece model's pieces, each looked up in
    vocab.json (<unk>'s id when absent), then </s>."""
    import sentencepiece as spm  # python3-sentencepiece (scripts/setup.sh)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(folder, "source.spm" if side == "source" else "target.spm"))
    with open(os.path.join(folder, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    pieces = sp.encode(text, out_type=str)
    ids = [vocab.get(p, vocab["<unk>"]) for p in pieces] + [vocab["</s>"]]
    return ids, pieces + ["</s>"]


def tokenize(folder, kind, texts, side):
    if kind == "marian":
        return [marian_tokenize(folder, t, side) for t in texts]
    return hf_tokenize(os.path.join(folder, "tokenizer.json"), texts)


def greedy_margin(ref, logits, decoder_ids):
    """The smallest gap, over the greedy steps, between the probabilities of the best and second
    best allowed tokens (softmax of the model's logits; the tokens the logits processors rule out
    are not candidates; a step that a processor forces has no runner-up and is skipped)."""
    smallest = 1.0
    for t in range(len(decoder_ids) - 1):
        row = logits[t]
        scores = ref.next_token_scores(row, decoder_ids[: t + 1], MAX_NEW_TOKENS + 1)
        assert int(np.argmax(scores)) == decoder_ids[t + 1]
        allowed = np.isfinite(scores)
        if allowed.sum() < 2 or np.count_nonzero(scores[allowed] > -np.inf) < 2:
            continue
        if scores[decoder_ids[t + 1]] == 0 and np.count_nonzero(allowed) == 1:
            continue
        p = np.exp(row - row.max())
        p /= p.sum()
        p[~allowed] = -1.0
        top2 = np.sort(p)[-2:]
        smallest = min(smallest, float(top2[1] - top2[0]))
    return smallest


def golden(folder, name):
    ref = Seq2SeqReference(folder)
    kind = ref.kind
    cases = CASES[name]
    sources = tokenize(folder, kind, [s for s, _ in cases], "source")
    targets = tokenize(folder, kind, [t for _, t in cases if t is not None], "target")
    out = {"format": "attnscope-seq2seq-golden/1", "fixture": name, "kind": kind,
           "reference": "tools/reference/seq2seq_reference.py (float64)",
           "generation": {"decoder_start_token_id": ref.decoder_start, "eos_token_id": ref.eos,
                          "max_new_tokens": MAX_NEW_TOKENS, "banned_ids": ref.banned,
                          "bad_words_ids": ref.bad_words,
                          "no_repeat_ngram_size": ref.no_repeat_ngram_size, "min_length": ref.min_length,
                          "forced_bos_token_id": ref.forced_bos, "forced_eos_token_id": ref.forced_eos,
                          "rule": "argmax of the logits after generate's processors (no-repeat n-grams, "
                                  "bad words, min length, forced BOS at the first step, forced EOS at "
                                  "the last); stop after eos"},
           "cases": []}
    next_target = iter(targets)
    for (source, target), (encoder_ids, encoder_tokens) in zip(cases, sources):
        if target is None:
            decoder_ids = ref.greedy(encoder_ids, MAX_NEW_TOKENS)
        else:
            target_ids, _ = next(next_target)
            decoder_ids = [ref.decoder_start] + list(target_ids)
        r = ref.forward(encoder_ids, decoder_ids)
        logits = r["logits"]
        top10 = []
        for row in logits:
            p = np.exp(row - row.max())
            p /= p.sum()
            order = np.argsort(-p, kind="stable")[:10]
            top10.append({"ids": [int(i) for i in order], "probs": rounded(p[order])})
        sample = []
        for pos in sorted({0, len(decoder_ids) // 2, len(decoder_ids) - 1}):
            ids = {0, ref.eos, ref.pad, ref.decoder_start, ref.vocab - 1, top10[pos]["ids"][0]}
            sample += [[pos, i, rounded(logits[pos, i])] for i in sorted(ids)]
        case = {"source": source, "target": target,
                "encoder_ids": [int(i) for i in encoder_ids], "encoder_tokens": encoder_tokens,
                "decoder_ids": [int(i) for i in decoder_ids],
                "encoder_attention": [rounded(a) for a in r["encoder_attention"]],
                "decoder_attention": [rounded(a) for a in r["decoder_attention"]],
                "cross_attention": [rounded(a) for a in r["cross_attention"]],
                "top10": top10, "logits_sample": sample}
        if target is None:
            margin = greedy_margin(ref, logits, decoder_ids)
            if margin <= MIN_MARGIN:
                raise SystemExit(f"{name}: greedy margin {margin:.2e} for {source!r} is not clear")
            case["min_greedy_margin"] = rounded(margin)
        out["cases"].append(case)
    return out


def main():
    fixtures, golden_dir, only = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(golden_dir, exist_ok=True)
    for name in sorted(os.listdir(fixtures)):
        if (only and name not in only) or name not in CASES:
            continue
        folder = os.path.join(fixtures, name)
        if not os.path.isfile(os.path.join(folder, "config.json")):
            continue
        data = golden(folder, name)
        with open(os.path.join(golden_dir, name + ".json"), "w", encoding="utf-8") as f:
            json.dump(data, f, separators=(",", ":"), ensure_ascii=False)
            f.write("\n")
        print("wrote", name, [len(c["decoder_ids"]) for c in data["cases"]],
              [c.get("min_greedy_margin") for c in data["cases"]])


if __name__ == "__main__":
    main()
