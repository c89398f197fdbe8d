"""Checks the tensor-core lowering on a GPU: the plain products of
tests/gpu/matmul.tile (compiled by bench/build_prefill_kernels.sh into
.kiln-out/matmul) against float64 products of the same inputs, outputs
poisoned with NaN first. bf16 operands multiply exactly (f32 accumulation);
f32 operands go as tf32, so their tolerance is the tf32 rounding's.
Exits 1 on any failure."""
import sys

import torch

import kiln

CASES = [  # manifest, M, N, tolerance (||c - ref|| / ||ref||)
    (".kiln-out/matmul/matmul_bf16.json", 256, 512, 1e-5),
    (".kiln-out/matmul/matmul_tf32.json", 96, 144, 2e-3),
    (".kiln-out/matmul/matmul_bf16_mma.json", 256, 512, 1e-5),
    # Warp-level mma.sync: bf16, and f16 with both operands transposed.
    (".kiln-out/matmul/matmul_bf16_sync.json", 256, 512, 1e-5),
    (".kiln-out/matmul/matmul_f16_sync.json", 96, 144, 1e-5),
    # B staged N-major in every form (bench/build_prefill_kernels.sh).
    (".kiln-out/matmul/matmul_bf16_bm128_bn8.json", 256, 64, 1e-5),
    (".kiln-out/matmul/matmul_bf16_bm128_bn24.json", 256, 480, 1e-5),
    (".kiln-out/matmul/matmul_bf16_bm128_bn16.json", 256, 512, 1e-5),
    (".kiln-out/matmul/matmul_bf16_bm128_bn32.json", 256, 512, 1e-5),
    (".kiln-out/matmul/matmul_bf16_bm128_bn64.json", 256, 512, 1e-5),
    (".kiln-out/matmul/matmul_bf16_bm64_bn128.json", 192, 512, 1e-5),
    # C^T [N, 128] in bf16 from the accumulators, as the prefill scans
    # store O^T; N = 100 masks a tile's last rows. Its tolerance is bf16's
    # rounding of the output.
    (".kiln-out/matmul/matmul_bf16_ct.json", 128, 512, 4e-3),
    (".kiln-out/matmul/matmul_bf16_ct.json", 128, 100, 4e-3),
    # Two products reading B's ring stage in place (M is the build's BM;
    # N here, L = 512: eight blocks of B through a ring two deep).
    (".kiln-out/matmul/matmul_bf16_two.json", 64, 512, 1e-5),
    # (A B)(A B) per 32-row block, the second product's A and B from the
    # first's accumulators (movmatrix); N is 32. Z's bf16 rounding may
    # differ from the float64 reference's by an ulp in a few elements.
    (".kiln-out/matmul/matmul_bf16_square_sync.json", 256, 32, 1e-3),
    # S = S s_j + dot(x_j / t_j as f16, y_j) t_j over six steps, S in the
    # accumulators, x_j and t_j about 1e-30: unscaled, x_j would flush to
    # zero in f16 (S all zeros). Its tolerance is f16's rounding of A.
    (".kiln-out/matmul/matmul_scaled_update.json", 64, 128, 2e-3),
]


def main():
    torch.manual_seed(0)
    failed = 0
    for path, M, N, tol in CASES:
        kern = kiln.load(path)
        K = kern.manifest["consts"]["K"]
        c = torch.full((M, N), float("nan"), device="cuda")
        if kern.manifest["entry"] == "matmul_bf16_two":
            L = 8 * K
            a1, a2 = (torch.randn(M, L, device="cuda").bfloat16() for _ in range(2))
            bt = torch.randn(N, L, device="cuda").bfloat16()
            c2 = torch.full((M, N), float("nan"), device="cuda")
            kern(a1, a2, bt, c, c2)
            # Both products: the second checked as one more output below.
            ref = a1.double() @ bt.double().T
            ref2 = a2.double() @ bt.double().T
            torch.cuda.synchronize()
            bad2 = bool(torch.isnan(c2).any()) or \
                ((c2.double() - ref2).norm() / ref2.norm()).item() >= tol
            failed += bad2
            print(f"  matmul_bf16_two's second product: {'FAIL' if bad2 else 'PASS'}")
        elif kern.manifest["entry"] == "matmul_bf16_ct":
            a = torch.randn(M, K, device="cuda").bfloat16()
            b = torch.randn(K, N, device="cuda").bfloat16()
            c = torch.full((N, M), float("nan"), device="cuda").bfloat16()
            kern(a, b, c)
            ref = (a.double() @ b.double()).T
        elif kern.manifest["entry"] == "matmul_bf16_square":
            K = 32
            a = torch.randn(M, K, device="cuda").bfloat16()
            b = torch.randn(K, N, device="cuda").bfloat16()
            kern(a, b, c)
            z = (a.double().view(M // 32, 32, K) @ b.double()).bfloat16().double()
            ref = (z @ z).reshape(M, N)
        elif kern.manifest["entry"] == "matmul_scaled_update":
            K = 32
            t = torch.tensor([1e-30, 3e-31, 2e-30, 5e-31, 1e-30, 4e-30], device="cuda")
            s = torch.rand(len(t), device="cuda") + 0.5
            x = torch.randn(len(t), M, K, device="cuda") * t[:, None, None]
            y = torch.randn(len(t), K, N, device="cuda").half()
            kern(x, y, s, t, c)
            ref = torch.zeros(M, N, dtype=torch.float64, device="cuda")
            for j in range(len(t)):
                ref = ref * s[j].double() + x[j].double() @ y[j].double()
        elif kern.manifest["entry"] == "matmul_bf16":
            a = torch.randn(M, K, device="cuda").bfloat16()
            b = torch.randn(K, N, device="cuda").bfloat16()
            kern(a, b, c)
            ref = a.double() @ b.double()
        elif kern.manifest["entry"] == "matmul_f16_tt":
            at = torch.randn(K, M, device="cuda").half()
            bt = torch.randn(N, K, device="cuda").half()
            kern(at, bt, c)
            ref = at.double().T @ bt.double().T + 1.0
        else:
            a = torch.randn(M, K, device="cuda")
            bt = torch.randn(N, K, device="cuda")
            kern(a, bt, c)
            ref = a.double() @ bt.double().T + 1.0
        torch.cuda.synchronize()
        nan = bool(torch.isnan(c).any() or torch.isinf(c).any())
        err = ((c.double() - ref).norm() / ref.norm()).item()
        ok = not nan and err < tol
        failed += not ok
        print(f"{kern.manifest['entry']:16s} M={M} N={N} K={K}: rel_err {err:.3e} (tol {tol:.0e})"
              f"{' NaN' if nan else ''} {'PASS' if ok else 'FAIL'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
