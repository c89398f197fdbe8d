"""A TMA ring load of one row of a sub-view (a dropped dim): rows past the
sequence's end read zeros (the masked load), not the next sequence's row."""
import sys
from pathlib import Path
sys.path[:0] = ["python"]
import kiln
V = Path(__file__).parent
kern = kiln.compile(V / "k.tile", V / "s.yaml")
if "--build" in sys.argv:
    sys.exit(0)
import torch
T = 40
x = torch.randn(T, 64, device="cuda", dtype=torch.bfloat16)
cu = torch.tensor([0, 3, 10, 11, 40], device="cuda", dtype=torch.int32)
N = cu.numel() - 1
o = torch.full((N, 64), float("nan"), device="cuda", dtype=torch.float32)
kern(x, cu, o)
torch.cuda.synchronize()
ref = torch.zeros(N, 64, dtype=torch.float64)
xc = x.double().cpu()
for n in range(N):
    b, e = int(cu[n]), int(cu[n + 1])
    for j in range(4):
        if b + 2 * j < e:
            ref[n] += xc[b + 2 * j]
err = (o.double().cpu() - ref).abs().max().item()
print("max abs err", err, "PASS" if err < 1e-2 else "FAIL")
