"""Reading a model.safetensors file into numpy (no torch), for every reference in this folder."""
import json
import struct

import numpy as np


def read_safetensors(path):
    """name -> float32 numpy array, for F32, F16 and BF16 tensors."""
    with open(path, "rb") as f:
        blob = f.read()
    (header_len,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + header_len])
    data = memoryview(blob)[8 + header_len:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[begin:end]
        dtype = info["dtype"]
        if dtype == "F32":
            arr = np.frombuffer(raw, dtype="<f4")
        elif dtype == "F16":
            arr = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        elif dtype == "BF16":
            arr = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise ValueError(f"{name}: dtype {dtype} not supported by the reference")
        out[name] = arr.reshape(info["shape"]).copy()
    return out
