#!/usr/bin/python3
"""Cases for tests/unit/quant_test.cpp: blocks of every ggml type attnscope reads, and their values
as tools/gguf/ggml_quants.py (numpy, written independently from ggml's C) dequantises them.

    quant_cases.py OUTDIR   ->  OUTDIR/TYPE.bin (the blocks), OUTDIR/TYPE.f32 (float32 values),
                                OUTDIR/blocks.txt ("TYPE values bytes" per line, gguf_writer's table)

Per type: blocks of uniformly random bytes (every quant, scale and bit pattern a file can hold)
whose f16 scales are set to extreme finite values in turn (±0, the smallest subnormals, the
largest subnormal, the smallest normal, ±65504, ordinary values), then blocks from
ggml_quants.random_blocks (realistic weights). Non-finite scales are not dequantised here: attnscope
refuses them at load (first_non_finite_block), which quant_test checks on its own.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "tools", "gguf"))
import ggml_quants  # noqa: E402
from gguf_writer import GGML_BLOCK  # noqa: E402

# f16 bit patterns for d and for dmin/m, cycled through the blocks (different periods, so the
# pairs vary too).
EXTREME_D = [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x0400, 0x7BFF, 0xFBFF, 0x3C00,
             0xBC00, 0x1234, 0x2E66, 0xA9E3, 0x5A00]
EXTREME_M = [0x8000, 0x0000, 0x7BFF, 0x0001, 0x83FF, 0xFBFF, 0x0400, 0x3800, 0xB555, 0x2A00, 0x9C01]
# Where each block type keeps its f16 scales (d, min or None): ggml-common.h.
SCALES = {"Q4_0": (0, None), "Q4_1": (0, 2), "Q5_0": (0, None), "Q5_1": (0, 2), "Q8_0": (0, None),
          "Q2_K": (80, 82), "Q3_K": (108, None), "Q4_K": (0, 2), "Q5_K": (0, 2), "Q6_K": (208, None),
          "IQ4_NL": (0, None), "IQ4_XS": (0, None)}


def cases(type_name, rng):
    values, size = GGML_BLOCK[type_name]
    if type_name in ("F32", "F16", "BF16"):
        raw = rng.integers(0, 256, size=4096 * size, dtype=np.uint8)
        v = raw.view({"F32": "<u4", "F16": "<u2", "BF16": "<u2"}[type_name])
        exp = {"F32": 0x7F800000, "F16": 0x7C00, "BF16": 0x7F80}[type_name]
        v[(v & exp) == exp] &= ~np.array(exp >> 1, dtype=v.dtype)  # no inf/NaN
        return raw.tobytes()
    n = 3 * max(len(EXTREME_D), len(EXTREME_M)) * 2
    b = rng.integers(0, 256, size=(n, size), dtype=np.uint8)
    at_d, at_m = SCALES[type_name]
    for i in range(n):
        b[i, at_d:at_d + 2] = np.array([EXTREME_D[i % len(EXTREME_D)]], dtype="<u2").view(np.uint8)
        if at_m is not None:
            b[i, at_m:at_m + 2] = np.array([EXTREME_M[i % len(EXTREME_M)]], dtype="<u2").view(np.uint8)
    realistic = ggml_quants.random_blocks(type_name, 64 * values, 0.05, rng)
    return b.tobytes() + realistic


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(26)
    with open(os.path.join(out, "blocks.txt"), "w") as f:
        for t in ggml_quants.TYPES:
            values, size = GGML_BLOCK[t]
            f.write(f"{t} {values} {size}\n")
            raw = cases(t, rng)
            y = ggml_quants.dequantize(raw, t).astype("<f4")
            with open(os.path.join(out, t + ".bin"), "wb") as g:
                g.write(raw)
            with open(os.path.join(out, t + ".f32"), "wb") as g:
                g.write(y.tobytes())


if __name__ == "__main__":
    main()
