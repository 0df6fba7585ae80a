"""A GGUF (version 3) writer, written from ggml's format specification (docs/gguf.md).

Numpy and the standard library only; run with /usr/bin/python3. The layout it writes:

    magic "GGUF", version 3 (uint32), tensor count, metadata count (uint64),
    metadata: key (uint64 length + UTF-8), value type (uint32), value,
    tensor infos: name, n_dims (uint32), ne[0..n_dims) (uint64, fastest-varying first), ggml type
    (uint32), offset (uint64, relative to the data section, a multiple of the alignment),
    zero padding to the alignment, then the tensor data, each tensor padded to the alignment.

    w = GgufWriter("model.gguf", "llama")          # writes general.architecture first
    w.add_uint32("llama.block_count", 2)
    w.add_string_array("tokenizer.ggml.tokens", ["a", "b"])
    w.add_tensor("token_embd.weight", raw_bytes, GGML_TYPE["Q8_0"], (rows, cols))
    w.write()

Shapes are given as numpy gives them (rows first); the file stores ggml's dims, reversed:
a [rows x cols] matrix is ne = {cols, rows}, each row cols / block_values blocks.
"""
import struct

import numpy as np

GGUF_MAGIC = b"GGUF"
GGUF_VERSION = 3
DEFAULT_ALIGNMENT = 32

# gguf_metadata_value_type
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)
_SCALAR_FORMAT = {UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i",
                  FLOAT32: "<f", BOOL: "<?", UINT64: "<Q", INT64: "<q", FLOAT64: "<d"}
_SCALAR_NUMPY = {UINT8: "<u1", INT8: "<i1", UINT16: "<u2", INT16: "<i2", UINT32: "<u4", INT32: "<i4",
                 FLOAT32: "<f4", BOOL: "<u1", UINT64: "<u8", INT64: "<i8", FLOAT64: "<f8"}

# ggml_type ids (docs/gguf.md) and their blocks: (values per block, bytes per block).
GGML_TYPE = {"F32": 0, "F16": 1, "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "Q8_1": 9,
             "Q2_K": 10, "Q3_K": 11, "Q4_K": 12, "Q5_K": 13, "Q6_K": 14, "Q8_K": 15, "IQ4_NL": 20,
             "IQ4_XS": 23, "I8": 24, "I16": 25, "I32": 26, "I64": 27, "F64": 28, "BF16": 30}
GGML_TYPE_NAME = {v: k for k, v in GGML_TYPE.items()}
QK_K = 256
GGML_BLOCK = {"F32": (1, 4), "F16": (1, 2), "BF16": (1, 2), "F64": (1, 8), "I8": (1, 1),
              "I16": (1, 2), "I32": (1, 4), "I64": (1, 8),
              "Q4_0": (32, 2 + 16), "Q4_1": (32, 4 + 16), "Q5_0": (32, 2 + 4 + 16),
              "Q5_1": (32, 4 + 4 + 16), "Q8_0": (32, 2 + 32), "Q8_1": (32, 4 + 32),
              "Q2_K": (QK_K, QK_K // 16 + QK_K // 4 + 4), "Q3_K": (QK_K, QK_K // 8 + QK_K // 4 + 12 + 2),
              "Q4_K": (QK_K, 4 + 12 + QK_K // 2), "Q5_K": (QK_K, 4 + 12 + QK_K // 8 + QK_K // 2),
              "Q6_K": (QK_K, QK_K // 2 + QK_K // 4 + QK_K // 16 + 2), "Q8_K": (QK_K, 4 + QK_K + QK_K // 8),
              "IQ4_NL": (32, 2 + 16), "IQ4_XS": (QK_K, 2 + 2 + QK_K // 64 + QK_K // 2)}

# llama_ftype (general.file_type), as llama.cpp's llama.h numbers them.
FILE_TYPE = {"ALL_F32": 0, "MOSTLY_F16": 1, "MOSTLY_Q4_0": 2, "MOSTLY_Q4_1": 3, "MOSTLY_Q8_0": 7,
             "MOSTLY_Q5_0": 8, "MOSTLY_Q5_1": 9, "MOSTLY_Q2_K": 10, "MOSTLY_Q3_K_S": 11,
             "MOSTLY_Q3_K_M": 12, "MOSTLY_Q3_K_L": 13, "MOSTLY_Q4_K_S": 14, "MOSTLY_Q4_K_M": 15,
             "MOSTLY_Q5_K_S": 16, "MOSTLY_Q5_K_M": 17, "MOSTLY_Q6_K": 18, "MOSTLY_IQ4_NL": 25,
             "MOSTLY_IQ4_XS": 30, "MOSTLY_BF16": 32}

# llama.cpp's token types (tokenizer.ggml.token_type).
TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_USER_DEFINED, TOKEN_UNUSED, TOKEN_BYTE = 1, 2, 3, 4, 5, 6


def row_bytes(type_name, cols):
    """Bytes of one row of `cols` values of a ggml type (cols must fill whole blocks)."""
    values, size = GGML_BLOCK[type_name]
    if cols % values:
        raise ValueError(f"{type_name} needs rows of a multiple of {values} values, not {cols}")
    return cols // values * size


def _pad(n, alignment):
    return (alignment - n % alignment) % alignment


def _string(s):
    b = s.encode("utf-8") if isinstance(s, str) else bytes(s)
    return struct.pack("<Q", len(b)) + b


class GgufWriter:
    def __init__(self, path, arch=None, alignment=DEFAULT_ALIGNMENT):
        if alignment <= 0 or alignment % 8:
            raise ValueError("the alignment must be a positive multiple of 8")
        self.path = path
        self.alignment = alignment
        self.kv = []  # (key, encoded value with its type)
        self.keys = set()
        self.tensors = []  # (name, dims ggml-order, type id, raw bytes)
        if arch is not None:
            self.add_string("general.architecture", arch)
        if alignment != DEFAULT_ALIGNMENT:
            self.add_uint32("general.alignment", alignment)

    # -- metadata --
    def _add(self, key, payload):
        if key in self.keys:
            raise ValueError(f"duplicate metadata key {key}")
        self.keys.add(key)
        self.kv.append((key, payload))

    @staticmethod
    def encode_value(vtype, value):
        """The bytes of one value (without its type) of metadata type `vtype`."""
        if vtype == STRING:
            return _string(value)
        if vtype == ARRAY:
            raise ValueError("arrays go through add_array")
        return struct.pack(_SCALAR_FORMAT[vtype], value)

    def add_value(self, key, vtype, value):
        self._add(key, struct.pack("<I", vtype) + self.encode_value(vtype, value))

    def add_uint8(self, k, v): self.add_value(k, UINT8, v)
    def add_int8(self, k, v): self.add_value(k, INT8, v)
    def add_uint16(self, k, v): self.add_value(k, UINT16, v)
    def add_int16(self, k, v): self.add_value(k, INT16, v)
    def add_uint32(self, k, v): self.add_value(k, UINT32, v)
    def add_int32(self, k, v): self.add_value(k, INT32, v)
    def add_uint64(self, k, v): self.add_value(k, UINT64, v)
    def add_int64(self, k, v): self.add_value(k, INT64, v)
    def add_float32(self, k, v): self.add_value(k, FLOAT32, v)
    def add_float64(self, k, v): self.add_value(k, FLOAT64, v)
    def add_bool(self, k, v): self.add_value(k, BOOL, bool(v))
    def add_string(self, k, v): self.add_value(k, STRING, v)

    def add_array(self, key, elem_type, values):
        """An array of one element type (scalars, strings, or nested arrays given as
        (elem_type, values) pairs)."""
        self._add(key, struct.pack("<I", ARRAY) + self.encode_array(elem_type, values))

    @classmethod
    def encode_array(cls, elem_type, values):
        head = struct.pack("<IQ", elem_type, len(values))
        if elem_type == STRING:
            return head + b"".join(_string(v) for v in values)
        if elem_type == ARRAY:
            return head + b"".join(cls.encode_array(t, v) for t, v in values)
        return head + np.asarray(values).astype(_SCALAR_NUMPY[elem_type]).tobytes()

    def add_string_array(self, k, values): self.add_array(k, STRING, values)

    # -- tensors --
    def add_tensor(self, name, raw, ggml_type, shape):
        """raw: the tensor's bytes in ggml's layout; ggml_type: an id or a name ("Q4_K");
        shape: numpy order (rows first), e.g. (rows, cols) or (n,)."""
        type_name = ggml_type if isinstance(ggml_type, str) else GGML_TYPE_NAME[ggml_type]
        type_id = GGML_TYPE[type_name]
        shape = tuple(int(s) for s in shape)
        if not shape or len(shape) > 4 or any(s <= 0 for s in shape):
            raise ValueError(f"{name}: bad shape {shape}")
        raw = bytes(raw)
        rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
        expected = rows * row_bytes(type_name, shape[-1])
        if len(raw) != expected:
            raise ValueError(f"{name}: {len(raw)} bytes for {type_name} {shape}, expected {expected}")
        if any(t[0] == name for t in self.tensors):
            raise ValueError(f"duplicate tensor {name}")
        self.tensors.append((name, tuple(reversed(shape)), type_id, raw))

    def add_tensor_f32(self, name, array):
        a = np.ascontiguousarray(array, dtype="<f4")
        self.add_tensor(name, a.tobytes(), "F32", a.shape)

    # -- the file --
    def to_bytes(self):
        out = bytearray()
        out += GGUF_MAGIC + struct.pack("<IQQ", GGUF_VERSION, len(self.tensors), len(self.kv))
        for key, payload in self.kv:
            out += _string(key) + payload
        offset = 0
        offsets = []
        for name, dims, type_id, raw in self.tensors:
            offsets.append(offset)
            out += _string(name) + struct.pack("<I", len(dims))
            out += struct.pack(f"<{len(dims)}Q", *dims) + struct.pack("<IQ", type_id, offset)
            offset += len(raw) + _pad(len(raw), self.alignment)
        out += b"\0" * _pad(len(out), self.alignment)
        for (name, dims, type_id, raw), off in zip(self.tensors, offsets):
            out += raw + b"\0" * _pad(len(raw), self.alignment)
        return bytes(out)

    def write(self):
        data = self.to_bytes()
        with open(self.path, "wb") as f:
            f.write(data)
        return len(data)
