"""ggml's tensor types in numpy: dequantisation exactly as ggml defines it, and random valid blocks.

Written from ggml's src/ggml-common.h (the block layouts) and src/ggml-quants.c (dequantize_row_*),
read, not copied. Every result is float32 computed with the same operations in the same order as
the C code (an int times a float rounds once; q4_1's x*d + m rounds twice, since the reference C
code is not contracted to a fused multiply-add; q6_K's d * scale * q is (d * scale) * q), so the
values are bit-identical to ggml's scalar dequantisation.

    values = dequantize(raw_bytes, "Q4_K", (rows, cols))      # float32 [rows, cols]
    raw = random_blocks("Q4_K", rows * cols, scale=0.02, rng=np.random.default_rng(0))

random_blocks needs no quantiser: random quants and random (f16) scales make a valid block, and its
dequantised values are the weights the model has.
"""
import numpy as np

from gguf_writer import GGML_BLOCK, QK_K

KVALUES_IQ4NL = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113],
                         dtype=np.int8)

TYPES = ["F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K",
         "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS"]


def _f16(b, at):
    """The float16 at byte `at` of every block (rows of b), widened exactly to float32."""
    return b[:, at:at + 2].copy().view("<f2").astype(np.float32)[:, 0]


def _f32(x):
    return np.asarray(x, dtype=np.float32)


def _blocks(raw, type_name):
    values, size = GGML_BLOCK[type_name]
    b = np.frombuffer(bytes(raw), dtype=np.uint8)
    if b.size % size:
        raise ValueError(f"{type_name}: {b.size} bytes is not a whole number of {size}-byte blocks")
    return b.reshape(-1, size)


def _q4_0(b):
    d = _f16(b, 0)[:, None]
    qs = b[:, 2:18]
    x = np.concatenate([(qs & 0x0F).astype(np.int32) - 8, (qs >> 4).astype(np.int32) - 8], axis=1)
    return _f32(x) * d


def _q4_1(b):
    d, m = _f16(b, 0)[:, None], _f16(b, 2)[:, None]
    qs = b[:, 4:20]
    x = np.concatenate([qs & 0x0F, qs >> 4], axis=1)
    return _f32(x) * d + m


def _qh_bits(qh4):
    """The 32 fifth bits of a q5 block (uint32 little-endian): bit j belongs to value j."""
    qh = qh4.copy().view("<u4")[:, 0].astype(np.uint64)
    return ((qh[:, None] >> np.arange(32, dtype=np.uint64)) & 1).astype(np.int32)


def _q5_0(b):
    d = _f16(b, 0)[:, None]
    h = _qh_bits(b[:, 2:6])
    qs = b[:, 6:22].astype(np.int32)
    x = np.concatenate([(qs & 0x0F) | (h[:, :16] << 4), (qs >> 4) | (h[:, 16:] << 4)], axis=1) - 16
    return _f32(x) * d


def _q5_1(b):
    d, m = _f16(b, 0)[:, None], _f16(b, 2)[:, None]
    h = _qh_bits(b[:, 4:8])
    qs = b[:, 8:24].astype(np.int32)
    x = np.concatenate([(qs & 0x0F) | (h[:, :16] << 4), (qs >> 4) | (h[:, 16:] << 4)], axis=1)
    return _f32(x) * d + m


def _q8_0(b):
    d = _f16(b, 0)[:, None]
    return _f32(b[:, 2:34].view(np.int8)) * d


def _q2_k(b):
    scales, qs = b[:, 0:16], b[:, 16:80]
    d, dmin = _f16(b, 80), _f16(b, 82)
    out = np.empty((b.shape[0], 2, 4, 2, 16), dtype=np.float32)
    for h in range(2):
        for j in range(4):
            for p in range(2):
                sc = scales[:, h * 8 + j * 2 + p]
                dl = d * _f32(sc & 0xF)
                ml = dmin * _f32(sc >> 4)
                q = (qs[:, h * 32 + p * 16: h * 32 + p * 16 + 16] >> (2 * j)) & 3
                out[:, h, j, p] = dl[:, None] * _f32(q) - ml[:, None]
    return out.reshape(b.shape[0], QK_K)


def _q3_k_scales(s12):
    """The 16 signed 6-bit scales of a q3_K block (already minus 32)."""
    i = np.arange(16)
    low = np.where(i < 8, s12[:, i % 8] & 0xF, s12[:, i % 8] >> 4).astype(np.int32)
    high = ((s12[:, 8 + i % 4] >> (2 * (i // 4))) & 3).astype(np.int32)
    return (low | (high << 4)) - 32


def _q3_k(b):
    hmask, qs, sc = b[:, 0:32], b[:, 32:96], _q3_k_scales(b[:, 96:108])
    d = _f16(b, 108)
    out = np.empty((b.shape[0], 2, 4, 2, 16), dtype=np.float32)
    for h in range(2):
        for j in range(4):
            m = 1 << (h * 4 + j)
            for p in range(2):
                dl = d * _f32(sc[:, h * 8 + j * 2 + p])
                q = ((qs[:, h * 32 + p * 16: h * 32 + p * 16 + 16] >> (2 * j)) & 3).astype(np.int32)
                hm = hmask[:, p * 16: p * 16 + 16] & m
                out[:, h, j, p] = dl[:, None] * _f32(q - np.where(hm != 0, 0, 4))
    return out.reshape(b.shape[0], QK_K)


def _scale_min_k4(s12):
    """get_scale_min_k4 for j = 0..7: (scales, mins), each [blocks, 8] ints."""
    sc = np.empty((s12.shape[0], 8), dtype=np.int32)
    mn = np.empty_like(sc)
    for j in range(8):
        if j < 4:
            sc[:, j] = s12[:, j] & 63
            mn[:, j] = s12[:, j + 4] & 63
        else:
            sc[:, j] = (s12[:, j + 4] & 0xF) | ((s12[:, j - 4] >> 6) << 4)
            mn[:, j] = (s12[:, j + 4] >> 4) | ((s12[:, j] >> 6) << 4)
    return sc, mn


def _q45_k(b, five):
    d, dmin = _f16(b, 0), _f16(b, 2)
    sc, mn = _scale_min_k4(b[:, 4:16])
    qh = b[:, 16:48] if five else None
    qs = b[:, 48:176] if five else b[:, 16:144]
    out = np.empty((b.shape[0], 4, 2, 32), dtype=np.float32)
    for j in range(4):
        q = qs[:, j * 32:(j + 1) * 32]
        for p in range(2):
            dl = d * _f32(sc[:, 2 * j + p])
            ml = dmin * _f32(mn[:, 2 * j + p])
            v = ((q & 0xF) if p == 0 else (q >> 4)).astype(np.int32)
            if five:
                v = v + np.where(qh & (1 << (2 * j + p)), 16, 0)
            out[:, j, p] = dl[:, None] * _f32(v) - ml[:, None]
    return out.reshape(b.shape[0], QK_K)


def _q6_k(b):
    ql, qh, sc = b[:, 0:128], b[:, 128:192], b[:, 192:208].view(np.int8)
    d = _f16(b, 208)
    out = np.empty((b.shape[0], 2, 4, 32), dtype=np.float32)
    for h in range(2):
        lo, hi = ql[:, h * 64: h * 64 + 64].astype(np.int32), qh[:, h * 32: h * 32 + 32].astype(np.int32)
        qv = [(lo[:, :32] & 0xF) | (((hi >> 0) & 3) << 4), (lo[:, 32:] & 0xF) | (((hi >> 2) & 3) << 4),
              (lo[:, :32] >> 4) | (((hi >> 4) & 3) << 4), (lo[:, 32:] >> 4) | (((hi >> 6) & 3) << 4)]
        for k in range(4):
            # is = l / 16: scales h*8 + 2k + (0 for l < 16, 1 after)
            s = np.repeat(sc[:, h * 8 + 2 * k: h * 8 + 2 * k + 2].astype(np.int32), 16, axis=1)
            out[:, h, k] = (d[:, None] * _f32(s)) * _f32(qv[k] - 32)
    return out.reshape(b.shape[0], QK_K)


def _iq4_nl(b):
    d = _f16(b, 0)[:, None]
    qs = b[:, 2:18]
    kv = KVALUES_IQ4NL.astype(np.float32)
    return d * np.concatenate([kv[qs & 0xF], kv[qs >> 4]], axis=1)


def _iq4_xs(b):
    d = _f16(b, 0)
    sh = b[:, 2:4].copy().view("<u2")[:, 0].astype(np.int32)
    sl = b[:, 4:8].astype(np.int32)
    qs = b[:, 8:136]
    kv = KVALUES_IQ4NL.astype(np.float32)
    out = np.empty((b.shape[0], 8, 32), dtype=np.float32)
    for ib in range(8):
        ls = ((sl[:, ib // 2] >> (4 * (ib % 2))) & 0xF) | (((sh >> (2 * ib)) & 3) << 4)
        dl = d * _f32(ls - 32)
        q = qs[:, ib * 16:(ib + 1) * 16]
        out[:, ib, :16] = dl[:, None] * kv[q & 0xF]
        out[:, ib, 16:] = dl[:, None] * kv[q >> 4]
    return out.reshape(b.shape[0], QK_K)


_DEQUANT = {"Q4_0": _q4_0, "Q4_1": _q4_1, "Q5_0": _q5_0, "Q5_1": _q5_1, "Q8_0": _q8_0,
            "Q2_K": _q2_k, "Q3_K": _q3_k, "Q4_K": lambda b: _q45_k(b, False),
            "Q5_K": lambda b: _q45_k(b, True), "Q6_K": _q6_k, "IQ4_NL": _iq4_nl, "IQ4_XS": _iq4_xs}


def dequantize(raw, type_name, shape=None):
    """float32 values of a tensor's bytes (shape: numpy order, rows first; default flat)."""
    if type_name == "F32":
        y = np.frombuffer(bytes(raw), dtype="<f4").astype(np.float32)
    elif type_name == "F16":
        y = np.frombuffer(bytes(raw), dtype="<f2").astype(np.float32)
    elif type_name == "BF16":
        y = (np.frombuffer(bytes(raw), dtype="<u2").astype(np.uint32) << 16).view(np.float32)
    else:
        y = _DEQUANT[type_name](_blocks(raw, type_name)).reshape(-1)
    return y.reshape(shape) if shape is not None else y


# ---- encoding plain floats and making random valid blocks ------------------------------------------

def to_f16_bytes(x):
    return np.asarray(x, dtype=np.float32).astype("<f2").tobytes()


def to_bf16_bits(x):
    """float32 -> bfloat16 bits, rounded to nearest even (finite inputs)."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return rounded.astype("<u2")


def encode_float(x, type_name):
    """Bytes of a float array as F32, F16 or BF16."""
    if type_name == "F32":
        return np.asarray(x, dtype="<f4").tobytes()
    if type_name == "F16":
        return to_f16_bytes(x)
    if type_name == "BF16":
        return to_bf16_bits(x).tobytes()
    raise ValueError(type_name)


# Where each block keeps its f16 scales: offset of the delta, offset of the min (or None), and the
# min as a multiple of the delta that roughly centres the values on zero.
_SCALE_FIELDS = {"Q4_0": (0, None, 0), "Q4_1": (0, 2, -7.5), "Q5_0": (0, None, 0), "Q5_1": (0, 2, -15.5),
                 "Q8_0": (0, None, 0), "Q2_K": (80, 82, 1.5), "Q3_K": (108, None, 0),
                 "Q4_K": (0, 2, 7.5), "Q5_K": (0, 2, 15.5), "Q6_K": (208, None, 0),
                 "IQ4_NL": (0, None, 0), "IQ4_XS": (0, None, 0)}


def _with_scales(b, type_name, unit, rng):
    at_d, at_m, m_ratio = _SCALE_FIELDS[type_name]
    n = b.shape[0]
    d = (unit * rng.uniform(0.6, 1.4, size=n)).astype(np.float32)
    b[:, at_d:at_d + 2] = d.astype("<f2").view(np.uint8).reshape(n, 2)
    if at_m is not None:
        m = (m_ratio * d).astype(np.float32)
        b[:, at_m:at_m + 2] = m.astype("<f2").view(np.uint8).reshape(n, 2)
    return b


def random_blocks(type_name, count, scale, rng):
    """Bytes of `count` values (whole blocks) of a type whose dequantised values have a standard
    deviation near `scale`: random quants, random f16 deltas (and mins), the deltas calibrated on
    a first draw. F32/F16/BF16: normal values of that deviation, rounded to the type."""
    if type_name in ("F32", "F16", "BF16"):
        return encode_float(rng.normal(0.0, scale, size=count), type_name)
    values, size = GGML_BLOCK[type_name]
    if count % values:
        raise ValueError(f"{type_name}: {count} values is not a whole number of {values}-value blocks")
    n = count // values
    b = rng.integers(0, 256, size=(n, size), dtype=np.uint8)
    trial = dequantize(_with_scales(b.copy(), type_name, 1.0, np.random.default_rng(1)).tobytes(), type_name)
    unit = scale / max(float(np.std(trial)), 1e-30)
    return _with_scales(b, type_name, unit, rng).tobytes()
