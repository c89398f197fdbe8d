import math, sys, torch, kiln
sys.path.insert(0, "bench")
from cuda_vs_ptx import gdn_prefill, gemm
torch.manual_seed(0)
for name in sys.argv[1:]:
    ptx = kiln.load(f".kiln-out/cuda/ptx/{name}.json"); cu = kiln.load(f".kiln-out/cuda/nvcc/{name}-cuda.json")
    if name.startswith("gemm"):
        _, setup, _ = gemm(256, 256, 128)
    else:
        _, setup, _ = gdn_prefill(lens=(200,), H=4, HV=8)
    res = {}
    for tag, k in (("ptx", ptx), ("cuda", cu)):
        args, outs = setup()
        k(*args); torch.cuda.synchronize()
        if k.is_op:
            plan = k._plan(args)
            for s in plan.scratch: s.fill_(float("nan")) if s.dtype.is_floating_point else s.fill_(-7)
            for o in outs: o.fill_(float("nan"))
            snaps = []
            for i in range(len(plan.steps)):
                plan.launch_one(i); torch.cuda.synchronize()
                snaps.append([t.clone() for t in plan.scratch] + [o.clone() for o in outs])
            res[tag] = (snaps, k.entries)
        else:
            res[tag] = ([[o.clone() for o in outs]], [k.manifest["entry"]])
    for i, (a, b) in enumerate(zip(res["ptx"][0], res["cuda"][0])):
        for j, (x, y) in enumerate(zip(a, b)):
            xf, yf = x.double(), y.double()
            nanx, nany = torch.isnan(xf).sum().item(), torch.isnan(yf).sum().item()
            same = torch.equal(torch.nan_to_num(xf, 1e9), torch.nan_to_num(yf, 1e9))
            d = (torch.nan_to_num(xf) - torch.nan_to_num(yf)).abs().max().item()
            print(f"{name} step {i} {res['ptx'][1][i] if i < len(res['ptx'][1]) else ''} tensor {j} {tuple(x.shape)} {x.dtype}: nan ptx {nanx} cuda {nany} same {same} maxdiff {d:.3e}")
            if nany and not nanx and y.dim() >= 1:
                idx = torch.isnan(yf).nonzero()[:6].tolist(); print("   first NaN at", idx)
