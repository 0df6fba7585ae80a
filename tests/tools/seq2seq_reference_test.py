#!/usr/bin/env python3
"""Checks tools/reference/seq2seq_reference.py against values worked out by hand from the formulas
in Hugging Face's modeling_t5.py, modeling_marian.py and modeling_bart.py (see each test), so that
the goldens it writes do not rest on the reference alone.

    /usr/bin/python3 tests/tools/seq2seq_reference_test.py      (numpy only; no fixtures needed)
"""
import math
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "reference"))
import seq2seq_reference as ref  # noqa: E402


class RelativePositionBuckets(unittest.TestCase):
    """T5Attention._relative_position_bucket, 32 buckets, max_distance 128."""

    def test_encoder_bidirectional(self):
        # 16 buckets a side; keys after the query (positive) start at 16; exact below 8, then
        # 8 + floor(log(d / 8) / log(128 / 8) * 8), at most 15:
        #   d = 8: 8 + 0; 15: log(1.875)/log(16)*8 = 1.81 -> 9; 16: log 2/log 16 * 8 = 2 -> 10;
        #   31: log(3.875)/log(16)*8 = 3.91 -> 11; 32: 4 -> 12; 64: 6 -> 14; 127: 7.98 -> 15;
        #   128 and beyond: 15.
        cases = {0: 0, 1: 17, -1: 1, 7: 23, -7: 7, 8: 24, -8: 8, 15: 25, -15: 9, 16: 26, -16: 10,
                 31: 27, 32: 28, -32: 12, 64: 30, -64: 14, 127: 31, -127: 15, 128: 31, -500: 15}
        got = ref.t5_relative_position_bucket(np.array(list(cases)), True, 32, 128)
        self.assertEqual(dict(zip(cases, got.tolist())), cases)

    def test_decoder_unidirectional(self):
        # Keys after the query (d > 0) all bucket 0; before: exact below 16, then
        # 16 + floor(log(k / 16) / log(128 / 16) * 16), at most 31:
        #   k = 16: 16; 32: log 2/log 8 * 16 = 5.33 -> 21; 100: log 6.25/log 8 * 16 = 14.1 -> 30;
        #   127: 15.9 -> 31; 128: 32 -> 31.
        cases = {5: 0, 0: 0, -1: 1, -15: 15, -16: 16, -32: 21, -100: 30, -127: 31, -128: 31, -1000: 31}
        got = ref.t5_relative_position_bucket(np.array(list(cases)), False, 32, 128)
        self.assertEqual(dict(zip(cases, got.tolist())), cases)

    def test_float32_and_float64_agree_for_the_fixtures(self):
        # The reference follows HF's float32 arithmetic; for these settings it is also the exact
        # (float64) bucket at every distance a 64-token sequence has and well beyond.
        for bidirectional in (True, False):
            d = np.arange(-700, 701)
            got = ref.t5_relative_position_bucket(d, bidirectional, 32, 128)
            n = 16 if bidirectional else 32
            exact = []
            for x in d.tolist():
                b = n if (bidirectional and x > 0) else 0
                a = abs(x) if bidirectional else max(-x, 0)
                if a < n // 2:
                    b += a
                else:
                    b += min(n // 2 + int(math.log(a / (n // 2)) / math.log(128 / (n // 2)) * (n - n // 2)), n - 1)
                exact.append(b)
            self.assertEqual(got.tolist(), exact)

    def test_compute_bias_layout(self):
        # compute_bias: bias[h, q, k] = table[bucket(k - q), h].
        table = np.arange(32 * 3, dtype=np.float64).reshape(32, 3)
        bias = ref.t5_compute_bias(table, 4, 5, True, 32, 128)
        self.assertEqual(bias.shape, (3, 4, 5))
        self.assertEqual(bias[2, 3, 1], table[2, 2])  # k - q = -2 -> bucket 2
        self.assertEqual(bias[1, 0, 4], table[20, 1])  # k - q = 4 -> 16 + 4


class Positions(unittest.TestCase):
    def test_marian_sinusoids(self):
        # MarianSinusoidalPositionalEmbedding._init_weight, dim 4: angles pos / 10000^(2*(j//2)/4)
        # = pos * (1, 1, 0.01, 0.01); the sines of the even j first, then the cosines of the odd j.
        table = ref.marian_sinusoids(3, 4)
        for pos in range(3):
            expected = [math.sin(pos), math.sin(pos * 0.01), math.cos(pos), math.cos(pos * 0.01)]
            np.testing.assert_allclose(table[pos], np.float32(expected), rtol=0, atol=0)

    def test_marian_sinusoids_odd_dim(self):
        # Odd dim 3: sentinel 2 sine columns (j = 0, 2), one cosine (j = 1).
        table = ref.marian_sinusoids(2, 3)
        angle2 = 1 / 10000 ** (2 / 3)
        np.testing.assert_allclose(table[1], np.float32([math.sin(1), math.sin(angle2), math.cos(1)]))

    def test_bart_learned_positions_offset(self):
        # BartLearnedPositionalEmbedding: position p reads row p + 2.
        weight = np.arange(10, dtype=np.float64)[:, None] * np.ones((1, 2))
        np.testing.assert_array_equal(ref.bart_learned_positions(weight, 3)[:, 0], [2, 3, 4])
        np.testing.assert_array_equal(ref.bart_learned_positions(weight, 2, past=4)[:, 0], [6, 7])


class SmallFunctions(unittest.TestCase):
    def test_t5_layer_norm_is_rms_without_mean(self):
        x = np.array([[3.0, 4.0]])
        # mean(x^2) = 12.5; x / sqrt(12.5 + eps) * weight
        np.testing.assert_allclose(ref.t5_layer_norm(x, np.array([1.0, 2.0]), 0.0),
                                   [[3 / math.sqrt(12.5), 8 / math.sqrt(12.5)]])

    def test_activations(self):
        self.assertAlmostEqual(float(ref.gelu(np.array([1.0]))[0]), 0.5 * (1 + math.erf(1 / math.sqrt(2))))
        self.assertAlmostEqual(float(ref.gelu_new(np.array([1.0]))[0]),
                               0.5 * (1 + math.tanh(math.sqrt(2 / math.pi) * 1.044715)))
        self.assertAlmostEqual(float(ref.silu(np.array([2.0]))[0]), 2 / (1 + math.exp(-2)))

    def test_causal_attention_rows(self):
        rng = np.random.default_rng(0)
        q, k, v = rng.normal(size=(3, 5, 8))
        _, w = ref.attention(q, k, v, 2, 4, 0.5, ref.causal_mask(5))
        np.testing.assert_allclose(w.sum(-1), 1.0)
        self.assertTrue(np.all(w[:, np.triu_indices(5, 1)[0], np.triu_indices(5, 1)[1]] == 0))
        # Head 1, query 0 sees only key 0.
        self.assertEqual(w[1, 0, 0], 1.0)


if __name__ == "__main__":
    unittest.main()
