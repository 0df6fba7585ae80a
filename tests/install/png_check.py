#!/usr/bin/env python3
"""Checks a PNG without third-party modules: prints "WIDTH HEIGHT COLOURS" (distinct colours, up to
a cap) and exits 1 when the file is not a PNG, or its pixels are all one colour (a blank window).
Usage: png_check.py FILE [--size WxH]   (--size: the dimensions it must have)"""
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    at, idat, ihdr = 8, b"", None
    while at < len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + length]
        at += 12 + length
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = ihdr
    if depth != 8 or interlace != 0 or colour not in (0, 2, 4, 6):
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})")
    bpp = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def main():
    path = sys.argv[1]
    want = None
    if len(sys.argv) == 4 and sys.argv[2] == "--size":
        want = tuple(int(v) for v in sys.argv[3].split("x"))
    try:
        width, height, bpp, rows = pixels(path)
    except (OSError, ValueError, zlib.error, TypeError, struct.error) as e:
        print(f"{path}: {e}")
        return 1
    colours = set()
    for row in rows:
        for x in range(0, len(row), bpp):
            colours.add(row[x:x + bpp])
        if len(colours) > 1000:
            break
    print(width, height, len(colours))
    if want and (width, height) != want:
        print(f"{path}: {width}x{height}, expected {want[0]}x{want[1]}")
        return 1
    if len(colours) < 2:
        print(f"{path}: every pixel is one colour")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
