#!/usr/bin/env python3
"""Writes the libFuzzer seed corpus (tests/c/fuzz-corpus/): one valid call per variant and flag
combination at small sizes, in the input format tests/c/fuzz_api.c reads, so fuzzing starts from
accepted plans. Run from the repository root."""
import os, struct

VARIANTS = 11          # ATTN_VARIANT_COUNT (softmax ... fixed, variants.def order)
MIXTURE = 6
OPTIONS_BYTES = 100    # sizeof(attn_options): 9 fields + component[8] + alpha[8]

def dim(value):        # selector >= 6: value % 70 + 1
    return bytes([6]) + struct.pack('>I', value - 1)

def options(fields):   # fields: {offset: bytes}; every other byte keeps its default
    out = bytearray()
    raw = bytearray(OPTIONS_BYTES)
    set_at = set()
    for off, b in fields.items():
        raw[off:off + len(b)] = b
        set_at.update(range(off, off + len(b)))
    for i in range(OPTIONS_BYTES):
        out += bytes([1, raw[i]]) if i in set_at else bytes([0])
    return bytes(out)

os.makedirs('tests/c/fuzz-corpus', exist_ok=True)
for v in range(VARIANTS):
    for flags in range(8):
        n, d, dv = 5 + v, 3 + flags, 4
        dims = [n, d, dv, 3, n + 2, 1, n + 2, 2]   # n d dv h L a b rank (a*b = L)
        fields = {}
        if v == MIXTURE:
            fields = {28: struct.pack('<i', 2), 40: struct.pack('<i', 3),
                      68: struct.pack('<f', 0.5), 72: struct.pack('<f', 0.5)}
        data = bytes([v, flags]) + b''.join(dim(x) for x in dims) + options(fields)
        data += bytes([0])  # not 'm': an attention call
        data += bytes((i * 37 + v) % 256 for i in range(4096))
        with open(f'tests/c/fuzz-corpus/seed-{v:02d}-{flags}', 'wb') as f:
            f.write(data)
    # a model: vocab = rank, seqLen = n, dModel = d, heads = h, layers = a, dFF = dv
    n = 6
    mdims = [n, 4, 8, 2, n, 1, n, 5]
    fields = {}
    if v == MIXTURE:
        fields = {28: struct.pack('<i', 2), 40: struct.pack('<i', 3),
                  68: struct.pack('<f', 0.5), 72: struct.pack('<f', 0.5)}
    data = bytes([v, 0]) + b''.join(dim(x) for x in mdims) + options(fields) + b'm'
    data += bytes((i * 53 + v) % 256 for i in range(4096))
    with open(f'tests/c/fuzz-corpus/model-{v:02d}', 'wb') as f:
        f.write(data)
