#!/usr/bin/env python3
"""GGUF fixtures against independent references (issue 26).

    /usr/bin/python3 tests/tools/gguf_reference_test.py build/fixtures/gguf [build/bin/attnscope]

- Dequantisation (tools/gguf/ggml_quants.py) on blocks worked out by hand from ggml-common.h's
  layouts and ggml-quants.c's formulas, so that the fixtures' values do not rest on the code alone.
- Every fixture GGUF read back by a small parser written here from docs/gguf.md (not the writer's
  code): header, metadata, alignment, tensor offsets; each tensor dequantised equals
  NAME.dequant.safetensors bit for bit, [rows x cols] = ggml's dims reversed; the keys llama.cpp
  reads for the architecture are present.
- The HF folder holds the same model: NAME.hf's tensors are the dequantised GGUF tensors under the
  conversions convert_hf_to_gguf.py makes, checked here through what they compute: llama's q/k
  rows in GGUF order with interleaved (GPT-J) rotation give the same scores as the HF rows with
  rotate_half (the reason llama.cpp permutes them); Gemma's norms are the GGUF's minus 1.
- attnscope's attention on each fixture against the float64 reference (tools/reference, float64
  torch) on NAME.hf, every layer, head and row within 1e-4, fed the ids attnscope's tokenizer
  produced (taken from the exported trace): through the GGUF file, and through NAME.hf with
  attnscope's safetensors path; where both paths tokenize a text alike, their attention agrees
  within 1e-5.
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools", "gguf"))
sys.path.insert(0, os.path.join(ROOT, "tools", "reference"))
import ggml_quants as gq  # noqa: E402
from safetensors_np import read_safetensors  # noqa: E402

FIXTURES = None
ATTNSCOPE = None
TEXTS = ["The quick brown fox jumps over the lazy dog. Hello world!",
         "Ünïcödé 12345 naïve café, 東京 and\tTabs\n  two spaces: it's 3.14!"]
ATTENTION_TOLERANCE = 1e-4


def f16(x):
    return np.float16(x).tobytes()


class DequantisationByHand(unittest.TestCase):
    """Blocks whose values follow directly from ggml's definitions."""

    def test_q4_0(self):
        # d = 0.5; byte j holds value j (low nibble) and value j + 16 (high nibble); x = (q - 8) d.
        qs = bytes([(j % 16) | ((15 - j % 16) << 4) for j in range(16)])
        got = gq.dequantize(f16(0.5) + qs, "Q4_0")
        want = [(j % 16 - 8) * 0.5 for j in range(16)] + [(15 - j % 16 - 8) * 0.5 for j in range(16)]
        np.testing.assert_array_equal(got, np.float32(want))

    def test_q4_1(self):
        # x = q d + m with d = 0.25, m = -1.
        qs = bytes([3 | (12 << 4)] * 16)
        got = gq.dequantize(f16(0.25) + f16(-1.0) + qs, "Q4_1")
        np.testing.assert_array_equal(got, np.float32([3 * 0.25 - 1] * 16 + [12 * 0.25 - 1] * 16))

    def test_q5_0_fifth_bit(self):
        # qh bit j is value j's fifth bit (j < 16 low nibbles, j >= 16 high): x = (q | h<<4) - 16.
        qh = struct.pack("<I", (1 << 0) | (1 << 17))
        qs = bytes([0x21] + [0x00] * 15)  # value 0: 1, value 16: 2
        got = gq.dequantize(f16(1.0) + qh + qs, "Q5_0")
        want = np.full(32, -16.0, np.float32)
        want[0] = (1 | 16) - 16
        want[16] = 2 - 16
        want[17] = 16 - 16
        np.testing.assert_array_equal(got, want)

    def test_q5_1(self):
        qh = struct.pack("<I", 0xFFFFFFFF)
        got = gq.dequantize(f16(2.0) + f16(0.5) + qh + bytes([0x0F] * 16), "Q5_1")
        np.testing.assert_array_equal(got, np.float32([31 * 2 + 0.5] * 16 + [16 * 2 + 0.5] * 16))

    def test_q8_0(self):
        qs = np.arange(-16, 16, dtype=np.int8).tobytes()
        got = gq.dequantize(f16(0.125) + qs, "Q8_0")
        np.testing.assert_array_equal(got, np.float32(np.arange(-16, 16) * 0.125))

    def test_iq4_nl(self):
        qs = bytes([j | ((15 - j) << 4) for j in range(16)])
        got = gq.dequantize(f16(0.5) + qs, "IQ4_NL")
        table = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113]
        np.testing.assert_array_equal(got, np.float32([t * 0.5 for t in table] + [t * 0.5 for t in table[::-1]]))

    def test_q4_k_scales_and_mins(self):
        # 8 sub-blocks of 32; sub-block j: scale sc_j and min m_j (6 bits, packed in 12 bytes:
        # j < 4 in bytes j and j + 4; j >= 4: low 4 bits in byte j + 4, high 2 bits in the top of
        # bytes j - 4 and j); x = d sc q - dmin m. Pick sc_j = j + 1, m_j = 40 + j.
        sc = [j + 1 for j in range(8)]
        mn = [40 + j for j in range(8)]
        s = [0] * 12
        for j in range(4):
            s[j] = sc[j] | ((sc[j + 4] >> 4) << 6)
            s[j + 4] = mn[j] | ((mn[j + 4] >> 4) << 6)
            s[j + 8] = (sc[j + 4] & 0xF) | ((mn[j + 4] & 0xF) << 4)
        # quants: pair of sub-blocks (2i, 2i + 1) shares 32 bytes, low nibble then high nibble.
        qs = bytes([(7 | (9 << 4))] * 128)
        got = gq.dequantize(f16(0.5) + f16(0.25) + bytes(s) + qs, "Q4_K").reshape(8, 32)
        for j in range(8):
            q = 7 if j % 2 == 0 else 9
            self.assertTrue(np.all(got[j] == np.float32(np.float32(0.5 * sc[j]) * q - np.float32(0.25 * mn[j]))), j)

    def test_q6_k(self):
        # 16 scales (int8) of 16 values; value (half h, l in 0..31, k in 0..3) at h*128 + 32k + l:
        # low 4 bits from ql[h*64 + l + 32*(k odd)] (low nibble for k < 2), 2 high bits from
        # qh[h*32 + l] >> 2k; x = d * scale * (q - 32).
        ql = bytes([0x5A] * 128)  # low nibble 10, high nibble 5
        qh = bytes([0b11100100] * 64)  # k = 0: 0, 1: 1, 2: 2, 3: 3
        scales = np.arange(1, 17, dtype=np.int8).tobytes()
        got = gq.dequantize(ql + qh + scales + f16(0.5), "Q6_K").reshape(2, 4, 32)
        for h in range(2):
            for k in range(4):
                low = 10 if k < 2 else 5
                q = (low | (k << 4)) - 32
                for l in (0, 15, 16, 31):
                    scale = h * 8 + 2 * k + l // 16 + 1
                    self.assertEqual(got[h, k, l], np.float32(np.float32(0.5 * scale) * q), (h, k, l))

    def test_q3_k_signed_scales(self):
        # 16 six-bit scales minus 32: low 4 bits in bytes 0..7 (low nibble for i < 8, high for
        # i >= 8), high 2 bits in byte 8 + i % 4 at bit 2 (i // 4); all quants 3 with their hmask
        # bit set -> q = 3; hmask clear -> 3 - 4 = -1.
        want_scales = [(i * 5) % 64 for i in range(16)]
        s = [0] * 12
        for i in range(16):
            low, high = want_scales[i] & 0xF, want_scales[i] >> 4
            s[i % 8] |= low << (4 * (i // 8))
            s[8 + i % 4] |= high << (2 * (i // 4))
        hmask = bytes([0x0F] * 32)  # bits 0..3 set: the first 128 values (shifts of the first half)
        got = gq.dequantize(hmask + bytes([0xFF] * 64) + bytes(s) + f16(1.0), "Q3_K").reshape(16, 16)
        for i in range(16):
            q = 3 if i < 8 else -1
            self.assertTrue(np.all(got[i] == np.float32((want_scales[i] - 32) * q)), i)

    def test_q2_k(self):
        # 16 sub-blocks of 16: scale byte low nibble * d, high nibble * dmin; x = dl q - ml.
        scales = bytes([(i % 16) | (1 << 4) for i in range(16)])
        qs = bytes([0b11100100] * 64)  # shift 0: 0, 2: 1, 4: 2, 6: 3
        got = gq.dequantize(scales + qs + f16(1.0) + f16(0.5), "Q2_K").reshape(2, 4, 2, 16)
        for h in range(2):
            for j in range(4):
                for p in range(2):
                    sc = (h * 8 + 2 * j + p) % 16
                    self.assertTrue(np.all(got[h, j, p] == np.float32(sc * j - 0.5)), (h, j, p))

    def test_iq4_xs(self):
        # sub-block ib scale: low 4 bits from scales_l[ib // 2] (nibble ib % 2), high 2 bits from
        # scales_h >> 2 ib; x = d (ls - 32) table[q].
        ls = [(ib * 9) % 64 for ib in range(8)]
        sh = sum((v >> 4) << (2 * ib) for ib, v in enumerate(ls))
        sl = bytes([(ls[2 * i] & 0xF) | ((ls[2 * i + 1] & 0xF) << 4) for i in range(4)])
        got = gq.dequantize(f16(0.25) + struct.pack("<H", sh) + sl + bytes([0x8F] * 128), "IQ4_XS").reshape(8, 32)
        for ib in range(8):
            dl = np.float32(0.25 * (ls[ib] - 32))
            self.assertTrue(np.all(got[ib, :16] == dl * np.float32(113)), ib)
            self.assertTrue(np.all(got[ib, 16:] == dl * np.float32(1)), ib)

    def test_bf16_and_f16(self):
        x = np.float32([1.0, -2.5, 3.140625, 65504.0])
        np.testing.assert_array_equal(gq.dequantize(gq.encode_float(x, "F16"), "F16"), x)
        # bf16 keeps 8 bits of mantissa: 65504 rounds to 65536, 1 + 2^-9 to 1 (even), 1 + 3 * 2^-9 up.
        y = np.float32([1.0, -2.5, 65504.0, 1 + 2 ** -9, 1 + 3 * 2 ** -9])
        np.testing.assert_array_equal(gq.dequantize(gq.encode_float(y, "BF16"), "BF16"),
                                      np.float32([1.0, -2.5, 65536.0, 1.0, 1 + 2 ** -7]))

    def test_random_blocks_have_the_wanted_scale(self):
        rng = np.random.default_rng(5)
        for t in gq.TYPES:
            v = gq.dequantize(gq.random_blocks(t, 256 * 64, 0.05, rng), t)
            self.assertTrue(0.03 < float(np.std(v)) < 0.08, (t, float(np.std(v))))
            self.assertTrue(np.all(np.isfinite(v)), t)


# ---- GGUF read back with a parser of the specification -----------------------------------------

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_TYPE_NAMES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 6: "Q5_0", 7: "Q5_1", 8: "Q8_0", 10: "Q2_K",
               11: "Q3_K", 12: "Q4_K", 13: "Q5_K", 14: "Q6_K", 20: "IQ4_NL", 23: "IQ4_XS", 30: "BF16"}
_BLOCKS = {"F32": (1, 4), "F16": (1, 2), "BF16": (1, 2), "Q4_0": (32, 18), "Q4_1": (32, 20),
           "Q5_0": (32, 22), "Q5_1": (32, 24), "Q8_0": (32, 34), "Q2_K": (256, 84), "Q3_K": (256, 110),
           "Q4_K": (256, 144), "Q5_K": (256, 176), "Q6_K": (256, 210), "IQ4_NL": (32, 18),
           "IQ4_XS": (256, 136)}


def read_gguf(path):
    with open(path, "rb") as f:
        data = f.read()
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return v[0]

    def string():
        nonlocal pos
        n = take("<Q")
        s = data[pos:pos + n].decode("utf-8")
        pos += n
        return s

    def value(t):
        if t == 8:
            return string()
        if t == 9:
            et, n = take("<I"), take("<Q")
            return [value(et) for _ in range(n)]
        return take(_SCALARS[t])

    assert data[:4] == b"GGUF", "magic"
    pos = 4
    version, n_tensors, n_kv = take("<I"), take("<Q"), take("<Q")
    meta = {}
    for _ in range(n_kv):
        key = string()
        meta[key] = value(take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = string()
        dims = [take("<Q") for _ in range(take("<I"))]
        infos.append((name, dims, _TYPE_NAMES[take("<I")], take("<Q")))
    align = meta.get("general.alignment", 32)
    start = pos + (align - pos % align) % align
    tensors = {}
    for name, dims, t, off in infos:
        values, size = _BLOCKS[t]
        assert off % align == 0, (name, off)
        count = int(np.prod(dims))
        raw = data[start + off:start + off + count // values * size]
        tensors[name] = (t, list(reversed(dims)), raw)
    return version, meta, tensors


# The hyper-parameter keys llama.cpp's load_hparams and each architecture's load_arch_hparams read.
REQUIRED_KEYS = {
    "*": ["general.architecture", "general.name", "general.file_type", "{a}.context_length",
          "{a}.embedding_length", "{a}.block_count", "{a}.feed_forward_length",
          "{a}.attention.head_count", "{a}.attention.head_count_kv", "tokenizer.ggml.model",
          "tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type"],
    "llama": ["{a}.attention.layer_norm_rms_epsilon", "{a}.rope.freq_base", "{a}.rope.dimension_count"],
    "qwen2": ["{a}.attention.layer_norm_rms_epsilon", "{a}.rope.freq_base"],
    "qwen3": ["{a}.attention.layer_norm_rms_epsilon", "{a}.attention.key_length"],
    "gemma2": ["{a}.attention.layer_norm_rms_epsilon", "{a}.attention.sliding_window",
               "{a}.attn_logit_softcapping", "{a}.final_logit_softcapping"],
    "gemma3": ["{a}.attention.layer_norm_rms_epsilon", "{a}.attention.sliding_window",
               "{a}.attention.key_length", "{a}.rope.freq_base"],
    "phi3": ["{a}.attention.layer_norm_rms_epsilon"],
    "gpt2": ["{a}.attention.layer_norm_epsilon"],
}


class Writer(unittest.TestCase):
    def test_every_value_type_and_a_wider_alignment(self):
        import gguf_writer as gw
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "t.gguf")
            w = gw.GgufWriter(path, "llama", alignment=64)
            w.add_uint8("a.u8", 250)
            w.add_int8("a.i8", -5)
            w.add_uint16("a.u16", 65000)
            w.add_int16("a.i16", -30000)
            w.add_uint32("a.u32", 4000000000)
            w.add_int32("a.i32", -2000000000)
            w.add_float32("a.f32", 0.5)
            w.add_bool("a.bool", True)
            w.add_string("a.str", "naïve ✓")
            w.add_uint64("a.u64", 2 ** 63 + 5)
            w.add_int64("a.i64", -(2 ** 62))
            w.add_float64("a.f64", 1.25)
            w.add_string_array("a.strs", ["", "x", "東京"])
            w.add_array("a.nested", gw.ARRAY, [(gw.INT32, [1, -2]), (gw.STRING, ["y"])])
            raw = gq.random_blocks("Q4_K", 2 * 256, 0.1, np.random.default_rng(3))
            w.add_tensor("t", raw, "Q4_K", (2, 256))
            w.add_tensor_f32("v", np.float32([1, 2, 3]))
            with self.assertRaises(ValueError):
                w.add_tensor("bad", raw, "Q4_K", (1, 256))
            w.write()
            version, meta, tensors = read_gguf(path)
        self.assertEqual(version, 3)
        want = {"general.architecture": "llama", "general.alignment": 64, "a.u8": 250, "a.i8": -5,
                "a.u16": 65000, "a.i16": -30000, "a.u32": 4000000000, "a.i32": -2000000000, "a.f32": 0.5,
                "a.bool": True, "a.str": "naïve ✓", "a.u64": 2 ** 63 + 5, "a.i64": -(2 ** 62), "a.f64": 1.25,
                "a.strs": ["", "x", "東京"], "a.nested": [[1, -2], ["y"]]}
        self.assertEqual(meta, want)
        self.assertEqual(tensors["t"][:2], ("Q4_K", [2, 256]))
        self.assertEqual(tensors["t"][2], raw)
        np.testing.assert_array_equal(gq.dequantize(tensors["v"][2], "F32"), np.float32([1, 2, 3]))


def manifest():
    with open(os.path.join(FIXTURES, "manifest.json")) as f:
        return json.load(f)


class FixtureFiles(unittest.TestCase):
    def test_manifest_covers_every_type_and_architecture(self):
        m = manifest()
        self.assertEqual({e["arch"] for e in m}, {"llama", "qwen2", "qwen3", "gemma2", "gemma3", "phi3", "gpt2"})
        self.assertEqual(set().union(*[e["types"] for e in m]), set(gq.TYPES))
        self.assertIn("Q4_K_M", {e["file_type"] for e in m})

    def test_gguf_reads_back_as_the_dequantised_file(self):
        for e in manifest():
            with self.subTest(fixture=e["name"]):
                version, meta, tensors = read_gguf(os.path.join(FIXTURES, e["gguf"]))
                self.assertEqual(version, 3)
                a = meta["general.architecture"]
                self.assertEqual(a, e["arch"])
                for key in REQUIRED_KEYS["*"] + REQUIRED_KEYS[a]:
                    self.assertIn(key.format(a=a), meta)
                self.assertEqual(len(meta["tokenizer.ggml.tokens"]), e["vocab_size"])
                self.assertEqual(tensors["token_embd.weight"][1], [e["vocab_size"], e["hidden"]])
                deq = read_safetensors(os.path.join(FIXTURES, e["dequant"]))
                self.assertEqual(set(deq), set(tensors))
                for name, (t, shape, raw) in tensors.items():
                    v = gq.dequantize(raw, t, shape)
                    self.assertEqual(list(deq[name].shape), shape, name)
                    np.testing.assert_array_equal(v.view(np.uint32), deq[name].view(np.uint32), err_msg=name)
                self.assertEqual(sorted({t for t, _, _ in tensors.values()}), sorted(e["types"]))

    def test_vocab_only_files(self):
        with open(os.path.join(FIXTURES, "vocab_manifest.json")) as f:
            entries = json.load(f)
        self.assertEqual({e["tokenizer"] for e in entries}, {"llama3", "qwen3", "gemma3", "mistral", "gpt2"})
        for e in entries:
            with self.subTest(vocab=e["name"]):
                _, meta, tensors = read_gguf(os.path.join(FIXTURES, e["gguf"]))
                self.assertEqual(tensors, {})
                self.assertEqual(len(meta["tokenizer.ggml.tokens"]), e["vocab_size"])
                self.assertEqual(len(meta["tokenizer.ggml.token_type"]), e["vocab_size"])
                if meta["tokenizer.ggml.model"] == "llama":
                    self.assertEqual(len(meta["tokenizer.ggml.scores"]), e["vocab_size"])
                else:
                    self.assertGreater(len(meta["tokenizer.ggml.merges"]), 10000)


def interleaved_rope(x, positions, base):
    """GPT-J / llama.cpp's LLAMA_ROPE_TYPE_NORM: pairs (2i, 2i+1) rotated by pos * base^(-2i/d)."""
    d = x.shape[-1]
    theta = positions[:, None] * base ** (-np.arange(0, d, 2) / d)
    c, s = np.cos(theta), np.sin(theta)
    out = x.copy()
    out[..., 0::2] = x[..., 0::2] * c - x[..., 1::2] * s
    out[..., 1::2] = x[..., 0::2] * s + x[..., 1::2] * c
    return out


def half_rope(x, positions, base):
    """Hugging Face's rotate_half: dims i and i + d/2 rotated together."""
    d = x.shape[-1]
    theta = positions[:, None] * base ** (-np.arange(0, d, 2) / d)
    c, s = np.cos(np.concatenate([theta, theta], -1)), np.sin(np.concatenate([theta, theta], -1))
    rot = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], -1)
    return x * c + rot * s


class HfFolders(unittest.TestCase):
    def test_llama_q_k_scores_agree_across_the_permutation(self):
        for e in manifest():
            if e["arch"] != "llama":
                continue
            with self.subTest(fixture=e["name"]):
                g = read_safetensors(os.path.join(FIXTURES, e["dequant"]))
                h = read_safetensors(os.path.join(FIXTURES, e["hf"], "model.safetensors"))
                d, n = e["head_dim"], 7
                x = np.random.default_rng(0).normal(size=(n, e["hidden"]))
                pos = np.arange(n, dtype=np.float64)
                q_g = (x @ g["blk.0.attn_q.weight"].T.astype(np.float64)).reshape(n, e["heads"], d)
                k_g = (x @ g["blk.0.attn_k.weight"].T.astype(np.float64)).reshape(n, e["kv_heads"], d)
                q_h = (x @ h["model.layers.0.self_attn.q_proj.weight"].T.astype(np.float64)).reshape(n, e["heads"], d)
                k_h = (x @ h["model.layers.0.self_attn.k_proj.weight"].T.astype(np.float64)).reshape(n, e["kv_heads"], d)
                self.assertFalse(np.allclose(q_g, q_h))  # the rows really are in another order
                for head in range(e["heads"]):
                    kv = head // (e["heads"] // e["kv_heads"])
                    sg = interleaved_rope(q_g[:, head], pos, 1e4) @ interleaved_rope(k_g[:, kv], pos, 1e4).T
                    sh = half_rope(q_h[:, head], pos, 1e4) @ half_rope(k_h[:, kv], pos, 1e4).T
                    np.testing.assert_allclose(sg, sh, rtol=1e-12, atol=1e-12)

    def test_gemma_norms_are_the_gguf_minus_one(self):
        for e in manifest():
            if e["arch"] not in ("gemma2", "gemma3"):
                continue
            g = read_safetensors(os.path.join(FIXTURES, e["dequant"]))
            h = read_safetensors(os.path.join(FIXTURES, e["hf"], "model.safetensors"))
            pairs = [("output_norm.weight", "model.norm.weight"),
                     ("blk.0.attn_norm.weight", "model.layers.0.input_layernorm.weight"),
                     ("blk.0.ffn_norm.weight", "model.layers.0.pre_feedforward_layernorm.weight"),
                     ("blk.0.post_ffw_norm.weight", "model.layers.0.post_feedforward_layernorm.weight")]
            for gn, hn in pairs:
                np.testing.assert_array_equal(h[hn].astype(np.float64) + 1.0, g[gn].astype(np.float64), err_msg=gn)


# ---- attnscope against the float64 reference ------------------------------------------------------

def export(model, text):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "trace.json")
        r = subprocess.run([ATTNSCOPE, "export", "--backend", "cpu", "--model", model, "--text", text, "-o", out],
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise AssertionError(f"attnscope export --model {model} failed ({r.returncode}): {r.stderr.strip()}")
        with open(out) as f:
            return json.load(f)


def max_attention_difference(trace, reference):
    worst = 0.0
    for layer, ref in enumerate(reference):
        got = np.array(trace["attention"][layer], dtype=np.float64)
        if got.shape != ref.shape:
            raise AssertionError(f"layer {layer}: shape {got.shape}, reference {ref.shape}")
        worst = max(worst, float(np.max(np.abs(got - ref))))
    return worst


def gguf_support_built():
    """Whether the source defines open_gguf_model (H5's loader): until then the GGUF paths skip."""
    for folder, _, files in os.walk(os.path.join(ROOT, "core")):
        for name in files:
            if name.endswith(".cpp"):
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                    if re.search(r"open_gguf_model\s*\([^;{)]*\)\s*\{", f.read()):
                        return True
    return False


@unittest.skipIf(ATTNSCOPE is None and len(sys.argv) < 3, "no attnscope executable given")
class AttnscopeAgainstReference(unittest.TestCase):
    def check(self, path, name, e):
        from gguf_reference import reference_run
        worst_all = 0.0
        for text in TEXTS:
            trace = export(path, text)
            ids = [t["id"] for t in trace["tokens"]]
            self.assertEqual(len(trace["attention"]), e["layers"])
            ref = reference_run(os.path.join(FIXTURES, e["hf"]), ids)
            worst = max_attention_difference(trace, ref["attention"])
            worst_all = max(worst_all, worst)
            self.assertLessEqual(worst, ATTENTION_TOLERANCE, f"{name}: {len(ids)} tokens of {text!r}")
        print(f"  {name}: max |attention - float64 reference| = {worst_all:.2e}", file=sys.stderr)
        return worst_all

    def test_safetensors_path_on_the_hf_folders(self):
        for e in manifest():
            with self.subTest(fixture=e["name"]):
                self.check(os.path.join(FIXTURES, e["hf"]), e["name"] + ".hf", e)

    @unittest.skipUnless(gguf_support_built(), "attnscope's GGUF model (open_gguf_model) not in core/ yet")
    def test_gguf_files(self):
        for e in manifest():
            with self.subTest(fixture=e["name"]):
                self.check(os.path.join(FIXTURES, e["gguf"]), e["name"] + ".gguf", e)

    @unittest.skipUnless(gguf_support_built(), "attnscope's GGUF model (open_gguf_model) not in core/ yet")
    def test_gguf_and_safetensors_paths_agree(self):
        for e in manifest():
            for text in TEXTS:
                with self.subTest(fixture=e["name"], text=text):
                    g = export(os.path.join(FIXTURES, e["gguf"]), text)
                    h = export(os.path.join(FIXTURES, e["hf"]), text)
                    self.assertEqual(g["model"]["layers"], h["model"]["layers"])
                    self.assertEqual(g["model"]["heads"], h["model"]["heads"])
                    self.assertEqual(g.get("source", {}).get("format"), "gguf")
                    gi = [t["id"] for t in g["tokens"]]
                    hi = [t["id"] for t in h["tokens"]]
                    if text == TEXTS[0]:
                        # Plain English: both tokenizers split it alike (a BOS may be added by
                        # one side only: Llama 3's npm tokenizer.json has no BOS post-processor).
                        self.assertEqual([t["id"] for t in g["tokens"] if not t.get("special")],
                                         [t["id"] for t in h["tokens"] if not t.get("special")])
                    if gi != hi:
                        # The tokenizers (llama.cpp's rules from the GGUF, HF's tokenizer.json)
                        # may split a text differently; the attention is compared on equal ids only.
                        continue
                    for layer in range(len(g["attention"])):
                        np.testing.assert_allclose(np.array(g["attention"][layer]), np.array(h["attention"][layer]),
                                                   rtol=0, atol=1e-5, err_msg=f"layer {layer}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    FIXTURES = sys.argv[1]
    ATTNSCOPE = sys.argv[2] if len(sys.argv) > 2 else None
    if not os.path.exists(os.path.join(FIXTURES, "manifest.json")):
        print(f"gguf_reference_test: {FIXTURES}/manifest.json missing (build the gguf_fixtures target)")
        sys.exit(1)
    unittest.main(argv=sys.argv[:1], verbosity=2)
