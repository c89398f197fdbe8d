"""Manifests shaped like the ones `kiln compile` writes (backends/runtime/
Manifest.cpp toJson), small enough to reason about in a test."""


def view(name, dtype, shape, access="in"):
    return {"name": name, "kind": "view", "dtype": dtype, "access": access, "shape": shape}


def scalar(name, dtype):
    return {"name": name, "kind": "scalar", "dtype": dtype}


def single(**changes):
    """One kernel: bf16 x[B, T, H, 32] and cu_seqlens[N + 1] in, f32 y[B, T,
    HV] out through a TMA map, scalars scale (f32) and n (i32); a grid of
    B x cdiv(T, 64) and one invariant divisor HV / H."""
    m = {
        "entry": "toy", "target": "sm_90a", "image": "toy.cubin", "op": "toy",
        "schedule": "toy_sm_90a.yaml", "mma": "none", "rounded_operands": False,
        "threads": 128, "dynamic_shared_bytes": 1024,
        "grid": ["B", ["ceildiv", "T", 64]], "persistent": 0,
        "tensor_maps": [{"param": 1, "box": [1, 64, 8], "swizzle": 0}],
        "divisors": [["div", "HV", "H"]],
        "dims": ["B", "T", "H", "HV", "N", "N+1"],
        "params": [view("x", "bf16", ["B", "T", "H", 32]),
                   view("y", "f32", ["B", "T", "HV"], "out"),
                   view("cu_seqlens", "i64", ["N+1"]),
                   scalar("scale", "f32"), scalar("n", "i32")],
        "consts": {"K": 32},
        "resources": {"registers": 40, "static_shared_bytes": 0, "spill_bytes": 0},
    }
    m.update(changes)
    return m


def op(**changes):
    """An op of two kernels: first(x, tmp) then second(tmp, y, s) beside it
    (`overlap`, exclusive), tmp a scratch f32[TP, 8] with TP = align(T, 4)."""
    first = single(entry="first", image="", dynamic_shared_bytes=0, grid=[["ceildiv", "T", 32]],
                   tensor_maps=[], divisors=[], dims=["T", "TP"],
                   params=[view("x", "f32", ["T", 8]), view("tmp", "f32", ["TP", 8], "out")])
    second = single(entry="second", image="", dynamic_shared_bytes=2048, grid=[4],
                    persistent=2, tensor_maps=[{"param": 0, "box": [4, 8], "swizzle": 32}],
                    divisors=[], dims=["TP", "T"],
                    params=[view("tmp", "f32", ["TP", 8]), view("y", "f32", ["T", 8], "out"),
                            scalar("s", "f32")])
    m = single(entry="two_pass", grid=[1], threads=0, dynamic_shared_bytes=0, tensor_maps=[],
               divisors=[], dims=["T"],
               params=[view("x", "f32", ["T", 8]), view("y", "f32", ["T", 8], "out"),
                       scalar("s", "f32")])
    m.update({
        "aligned_dims": [{"name": "TP", "of": "T", "multiple": 4}],
        "scratch": [view("tmp", "f32", ["TP", 8], "scratch")],
        "launches": [{"kernel": "first", "args": [0, -1]},
                     {"kernel": "second", "args": [-1, 1, 2], "overlap": True,
                      "beside_shared_bytes": 232448}],
        "kernels": [first, second],
    })
    m.update(changes)
    return m
