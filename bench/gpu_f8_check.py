"""f8e4m3 conversions on the GPU, bit for bit: the f8_cast kernel
(tests/gpu/f8_cast.tile) of each manifest given, against torch's float8_e4m3fn
conversion where both are defined (|x| <= 464: round to nearest even) and
cvt.rn.satfinite's rule past it (+-448; torch gives NaN there).

    python3 bench/gpu_f8_check.py .kiln-out/f8/f8_cast.json [...]
"""
import sys

import torch

import kiln


def probes():
    codes = torch.arange(256, dtype=torch.uint8, device="cuda").view(torch.float8_e4m3fn)
    v = codes.float()
    v = v[~torch.isnan(v)]
    pos = v[v > 0].sort().values
    mid = (pos[:-1] + pos[1:]) / 2
    up, down = torch.nextafter(mid, mid + 1), torch.nextafter(mid, mid * 0)
    big = torch.tensor([448, 463.9, 464, 480, 1e4, 1e30, float("inf")], device="cuda")
    x = torch.cat([v, mid, up, down, big, torch.randn(100000, device="cuda") * 8])
    return torch.cat([x, -x, torch.tensor([float("nan")], device="cuda")])


def main():
    x = probes()
    sat = x.abs() > 464
    want = x.clamp(-448, 448).where(~torch.isnan(x), x).to(torch.float8_e4m3fn).view(torch.uint8)
    bad = 0
    for manifest in sys.argv[1:]:
        kern = kiln.load(manifest)
        y = torch.full(x.shape, 0x55, dtype=torch.uint8, device="cuda").view(torch.float8_e4m3fn)
        z = torch.full_like(x, float("nan"))
        kern(x, y, z)
        torch.cuda.synchronize()
        yb = y.view(torch.uint8)
        nan_ok = torch.isnan(x) == ((yb & 0x7F) == 0x7F)
        diff = ((yb != want) & ~torch.isnan(x)) | ~nan_ok
        widened = y.float()
        zdiff = ~((z == widened) | (torch.isnan(z) & torch.isnan(widened)))
        n, nz = int(diff.sum()), int(zdiff.sum())
        bad += n + nz
        print(f"{manifest}: {x.numel()} values ({int(sat.sum())} saturating): "
              f"{n} narrowed and {nz} widened differ from torch's "
              f"{'PASS' if n + nz == 0 else 'FAIL'}")
        if n:
            i = diff.nonzero()[:5, 0]
            print("  e.g. x", x[i].tolist(), "got", yb[i].tolist(), "want", want[i].tolist())
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
