"""The attention variants of bench/RESULTS.md, "2026-11-30, attention from its
stages in place" (tile x schedule [x D]), beside SDPA through
bench/attention_bench.measure. From the repository root, with the package
and a kiln binary (or a carried cache): python3 THIS_FILE --build, then on
the GPU machine python3 THIS_FILE 5x777x16,1x4096x16,... (the .tile files
are ops/attention/attention.tile's source as of that entry and two rewrites
of it; the .yaml files its schedules then and the variants)."""
import sys
from pathlib import Path
sys.path[:0] = ["bench", "python"]
import kiln  # noqa: E402
import attention_bench as ab  # noqa: E402

V = Path(__file__).parent
VARIANTS = [("base", "ws", 128), ("base", "ws_r", 128), ("base", "ws_q", 128), ("pipe3", "ws_pq2", 128),
            ("fullv", "ws_q", 128), ("base", "plain_causal", 128), ("base", "ws_q_causal", 128),
            ("pipe3", "ws_pq2_causal", 128),
            ("base", "plain", 64), ("base", "ws_q", 64), ("pipe3", "ws_pq2", 64),
            ("base", "plain_causal", 64), ("base", "ws_q_causal", 64), ("pipe3", "ws_pq2_causal", 64)]
kernels = {}
for t, y, d in VARIANTS:
    kernels[f"{t}:{y}" + ("" if d == 128 else f"@{d}")] = kiln.compile(
        V / f"attention_{t}.tile", V / f"{y}.yaml", None if d == 128 else {"D": d})
if "--build" in sys.argv:
    sys.exit(0)
for shape in sys.argv[1].split(","):
    dims = tuple(int(x) for x in shape.split("x"))
    row, line = ab.measure(dims, kernels)
    print(f"{shape:>14} {line}", flush=True)
