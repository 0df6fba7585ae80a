"""A byte-level BPE tokenizer trained here, written as Hugging Face's tokenizer.json (GPT-2's
scheme: ByteLevel pre-tokenizer with its regex, ByteLevel decoder) with a "<s>" added at the start
by a TemplateProcessing post-processor, as Llama's tokenizers do.

Deterministic: pairs are counted exactly, and among pairs with the same count the one whose two
token strings sort first (in Python's string order) is merged.
"""
import collections
import heapq
import json
import re

BOS, EOS = "<s>", "</s>"
SPECIALS = [BOS, EOS]  # ids 0 and 1; the 256 bytes follow, then one token per merge

# GPT-2's pre-tokenizer regex restricted to ASCII (the training text is ASCII: corpus.ascii_text),
# where \p{L} is [A-Za-z], \p{N} is [0-9] and the only whitespace is " " and "\n"; Python's `re`
# lacks \p{..}. Hugging Face's ByteLevel pre-tokenizer applies the full Unicode regex at run time.
PRE_TOKEN = re.compile(r"'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+")


def bytes_to_unicode():
    """GPT-2's table: each byte as a printable character (bytes that are printable keep theirs)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    chars = keep[:]
    n = 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(keep, chars)}


BYTE_CHAR = bytes_to_unicode()


def pre_tokens(text):
    for piece in PRE_TOKEN.findall(text):
        yield "".join(BYTE_CHAR[b] for b in piece.encode("utf-8"))


def train(word_counts, vocab_size):
    """word_counts: {pre-token (byte chars): count}. Returns (vocab {token: id}, merges [(a, b)])."""
    vocab = {t: i for i, t in enumerate(SPECIALS)}
    for b in range(256):
        vocab[BYTE_CHAR[b]] = len(vocab)
    words = sorted(word_counts)  # fixed order
    counts = [word_counts[w] for w in words]
    symbols = [list(w) for w in words]
    pair_count = collections.Counter()
    where = collections.defaultdict(set)
    for i, syms in enumerate(symbols):
        for a, b in zip(syms, syms[1:]):
            pair_count[(a, b)] += counts[i]
            where[(a, b)].add(i)
    heap = [(-c, p) for p, c in pair_count.items()]
    heapq.heapify(heap)
    merges = []
    while len(vocab) < vocab_size and heap:
        neg, pair = heapq.heappop(heap)
        if pair_count.get(pair, 0) != -neg or neg == 0:
            continue  # stale entry
        a, b = pair
        merged = a + b
        merges.append(pair)
        if merged not in vocab:
            vocab[merged] = len(vocab)
        changed = collections.Counter()
        for i in sorted(where.pop(pair, ())):
            syms = symbols[i]
            for x, y in zip(syms, syms[1:]):
                pair_count[(x, y)] -= counts[i]
                changed[(x, y)] += 1
            out, j = [], 0
            while j < len(syms):
                if j + 1 < len(syms) and syms[j] == a and syms[j + 1] == b:
                    out.append(merged)
                    j += 2
                else:
                    out.append(syms[j])
                    j += 1
            symbols[i] = out
            for x, y in zip(out, out[1:]):
                pair_count[(x, y)] += counts[i]
                where[(x, y)].add(i)
                changed[(x, y)] += 1
        for p in sorted(changed):
            if pair_count[p] <= 0:
                pair_count.pop(p, None)
            else:
                heapq.heappush(heap, (-pair_count[p], p))
    return vocab, merges


class Encoder:
    """Applies the merges as Hugging Face's BPE model does: repeatedly the pair of lowest rank."""

    def __init__(self, vocab, merges):
        self.vocab = vocab
        self.rank = {p: r for r, p in enumerate(merges)}
        self.cache = {}

    def word(self, w):
        got = self.cache.get(w)
        if got is not None:
            return got
        syms = list(w)
        while len(syms) > 1:
            best = min(range(len(syms) - 1),
                       key=lambda j: (self.rank.get((syms[j], syms[j + 1]), 1 << 30), j))
            pair = (syms[best], syms[best + 1])
            if pair not in self.rank:
                break
            out, j = [], 0
            while j < len(syms):
                if j + 1 < len(syms) and (syms[j], syms[j + 1]) == pair:
                    out.append(syms[j] + syms[j + 1])
                    j += 2
                else:
                    out.append(syms[j])
                    j += 1
            syms = out
        ids = [self.vocab[s] for s in syms]
        self.cache[w] = ids
        return ids

    def encode(self, text):
        ids = []
        for w in pre_tokens(text):
            ids.extend(self.word(w))
        return ids


def tokenizer_json(vocab, merges, max_length):
    """tokenizer.json as Hugging Face tokenizers 0.20+ writes it for this pipeline."""
    added = [{"id": vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for t in SPECIALS]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                  "use_regex": True}
    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": byte_level,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": BOS, "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": BOS, "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": BOS, "type_id": 1}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {BOS: {"id": BOS, "ids": [vocab[BOS]], "tokens": [BOS]}},
        },
        "decoder": byte_level,
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": [a + " " + b for a, b in merges]},
    }
    config = {"add_bos_token": True, "add_eos_token": False, "bos_token": BOS, "eos_token": EOS,
              "clean_up_tokenization_spaces": False, "model_max_length": max_length,
              "tokenizer_class": "PreTrainedTokenizerFast"}
    return (json.dumps(doc, ensure_ascii=False, indent=1) + "\n",
            json.dumps(config, indent=2) + "\n")
