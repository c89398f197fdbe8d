"""What the benches of bundled ops share: their builds through the kiln
package, the command line (--shapes, --json, --build) and CUDA-graph timing.

A bench names its op and schedules and measures one shape at a time;
`--build` only fills kiln.compile's cache (on the build host, to carry to a
GPU machine, which has no kiln binary).
"""
import argparse
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def builds(op, schedules):
    """kiln.compile of ops/OP/OP.tile with each schedule, by name; a name
    "SCHEDULE@NAME=V:NAME=V..." also sets those consts (as -D NAME=V; V
    an integer or an element type such as f16)."""
    import kiln
    root = REPO / "ops" / op
    out = {}
    for s in schedules:
        name, _, defs = s.partition("@")
        consts = {k: int(v) if v.lstrip("-").isdigit() else v
                  for k, v in (d.split("=") for d in defs.split(":") if d)}
        out[s] = kiln.compile(root / f"{op}.tile", root / "schedules" / f"{name}.yaml",
                              consts or None)
    return out


def check_tags(ap, kernels):
    """Each kernel's results are keyed by its tag (its schedule, and its
    image where that says more): two manifests of one tag would overwrite
    each other's rows, so that is an error naming both."""
    seen = {}
    for k in kernels:
        if k.tag in seen:
            ap.error(f"{seen[k.tag].path} and {k.path} are both '{k.tag}' (one schedule, one"
                     " image name): give one build another image name (-o OTHER.cubin)")
        seen[k.tag] = k


def state_dtype(kern):
    """The torch dtype of a kernel's `STATE` dtype param (GDN's state: f32,
    bf16, f16 or f8e4m3; f32 where the op has none)."""
    import torch
    return {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16,
            "f8e4m3": torch.float8_e4m3fn}[kern.manifest["consts"].get("STATE", "f32")]


def state_for(kern, s0):
    """A copy of s0 in kern's state dtype (rounded once where 16-bit); never s0
    itself, which .to() returns when the dtype already matches, so that a
    kernel updating its state in place leaves s0 to the next one."""
    return s0.to(state_dtype(kern), copy=True)


def graph_ms(fn):
    """CUDA-graph replay median of `fn`, in ms."""
    import triton
    return triton.testing.do_bench_cudagraph(fn, rep=200, return_mode="median")


def run(op, schedules, default_shapes, measure):
    """Parses the command line; builds; then for each shape (a string such
    as "4096x4096") calls measure(dims, kernels) -> (row, line), prints the
    line and writes the rows as JSON with --json."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default=default_shapes)
    ap.add_argument("--json")
    ap.add_argument("--build", action="store_true", help="only compile into the cache")
    ap.add_argument("--schedules", default=None,
                    help="these schedules of the op instead of the bench's list"
                         " (a,b@D=64,c@AB=f16:OUT=f32,...)")
    args = ap.parse_args()
    kernels = builds(op, args.schedules.split(",") if args.schedules else schedules)
    if args.build:
        for name, k in kernels.items():
            print(name, k.path)
        return
    import torch
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}")
    rows = []
    for shape in args.shapes.split(","):
        row, line = measure([int(d) for d in shape.split("x")], kernels)
        rows.append(row)
        print(f"{shape:>16}  {line}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"device": torch.cuda.get_device_name(),
                                               "rows": rows}, indent=1))
