"""The launcher on a GPU: results against torch, the argument checks, CUDA
graphs, TMA descriptors re-pointed per call, an op's overlapped launches
against serial ones. Skipped without torch and CUDA; the kernels come from
kiln.compile (on a GPU machine, from a cache filled by gpu_builds.py)."""
import math

import pytest
from gpu_builds import build

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
K = V = 128


def rel(x, ref):
    return ((x.double() - ref.double()).norm() / ref.double().norm()).item()


@pytest.fixture(scope="module")
def matmul():
    return build("matmul")


def operands(M=256, N=512, K=64):
    a = torch.randn(M, K, device="cuda").bfloat16()
    b = torch.randn(K, N, device="cuda").bfloat16()
    return a, b, torch.full((M, N), float("nan"), device="cuda")


def test_matmul_matches_torch(matmul):
    a, b, c = operands()
    matmul(a, b, c)
    torch.cuda.synchronize()
    assert rel(c, a.double() @ b.double()) < 1e-5


def test_argument_errors_name_the_parameter(matmul):
    a, b, c = operands()
    cases = [
        ((a.float(), b, c), TypeError,
         "argument 'a' must be bf16 (torch.bfloat16), got torch.float32"),
        ((a.cpu(), b, c), TypeError, "argument 'a' must be a CUDA tensor, got one on cpu"),
        ((a, b.T.contiguous().T, c), ValueError, "argument 'b' must be contiguous"),
        ((a, b, torch.empty(256 * 512 + 1, device="cuda")[1:].view(256, 512)), ValueError,
         "argument 'c' must be 16-byte aligned"),
        ((a[:, :32].contiguous(), b, c), ValueError, "argument 'a' dim 1 must be 64, got 32"),
        ((a, b, c[:128]), ValueError, "argument 'c' dim 0 (M) is 128 but 'a' gave M = 256"),
        ((a, b, c, 1.0), TypeError, "takes 3 arguments, got 4"),
    ]
    for args, error, message in cases:
        with pytest.raises(error) as e:
            matmul(*args)
        assert message in str(e.value)
    matmul(a, b, c)  # a known shape with a bad tensor, then a good call
    with pytest.raises(TypeError, match="argument 'b' must be bf16"):
        matmul(a, b.half(), c)
    matmul(a, b, c)
    torch.cuda.synchronize()
    assert rel(c, a.double() @ b.double()) < 1e-5


def test_cuda_graph_capture(matmul):
    a, b, c = operands()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        matmul(a, b, c)  # the first call of a shape builds its plan: not in capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        matmul(a, b, c)
    c.fill_(float("nan"))
    a.copy_(torch.randn_like(a))
    graph.replay()
    torch.cuda.synchronize()
    assert rel(c, a.double() @ b.double()) < 1e-5


def decode_inputs(B=8, H=4, HV=8, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    bf = dict(device="cuda", dtype=torch.bfloat16)
    q, k = (torch.randn(B, 1, H, K, generator=g, **bf) for _ in range(2))
    v = torch.randn(B, 1, HV, V, generator=g, **bf)
    a, b = (torch.randn(B, 1, HV, generator=g, **bf) for _ in range(2))
    A_log = torch.rand(HV, generator=g, device="cuda") * 2 - 1
    dt_bias = 0.5 * torch.randn(HV, generator=g, device="cuda")
    slots = torch.randperm(B, generator=g, device="cuda").int()
    state = torch.randn(B, HV, V, K, generator=g, device="cuda")
    return q, k, v, a, b, A_log, dt_bias, slots, state


def test_decode_tma_maps_follow_the_tensors():
    plain, tma = build("decode"), build("decode_tma")
    assert tma.info.signature.tensor_maps  # the schedule passes its state by TMA
    q, k, v, a, b, A_log, dt_bias, slots, state = decode_inputs()
    outs = []
    for kern in (plain, tma, tma):  # tma twice: new state and o, so new descriptors
        s, o = state.clone(), torch.full_like(v, float("nan"))
        kern(q, k, v, a, b, A_log, dt_bias, slots, s, o, 1 / math.sqrt(K))
        outs.append((s, o))
    torch.cuda.synchronize()
    for s, o in outs[1:]:
        assert not o.isnan().any()
        assert rel(o, outs[0][1]) < 1e-2 and rel(s, outs[0][0]) < 1e-5
    assert torch.equal(outs[1][0], outs[2][0]) and torch.equal(outs[1][1], outs[2][1])


def test_overlapped_op_equals_serial():
    kern = build("prefill_overlap")
    assert kern.is_op and any(l.get("overlap") for l in kern.manifest["launches"])
    lens, H, HV = [3000, 1, 5000], 4, 8
    T = sum(lens)
    g = torch.Generator(device="cuda").manual_seed(7)
    bf = dict(device="cuda", dtype=torch.bfloat16)
    q, k = (torch.randn(T, H, K, generator=g, **bf) for _ in range(2))
    v = torch.randn(T, HV, V, generator=g, **bf)
    a, b = (torch.randn(T, HV, generator=g, **bf) for _ in range(2))
    A_log = torch.rand(HV, generator=g, device="cuda") * 2 - 1
    dt_bias = 0.5 * torch.randn(HV, generator=g, device="cuda")
    h0 = torch.randn(len(lens), HV, V, K, generator=g, device="cuda")
    cu = torch.tensor([0] + lens, device="cuda", dtype=torch.int64).cumsum(0)
    idx = torch.arange(len(lens), device="cuda", dtype=torch.int32)  # dense: row n

    def call():
        o = torch.full((T, HV, V), float("nan"), **bf)
        hT = torch.full_like(h0, float("nan"))
        kern(q, k, v, a, b, A_log, dt_bias, cu, idx, h0, hT, o, 1 / math.sqrt(K), 1)
        torch.cuda.synchronize()
        return o, hT

    kern.serial = True
    o_ref, s_ref = call()
    kern.serial = False
    assert kern.side_stream is not None and not o_ref.isnan().any()
    for _ in range(5):
        o, hT = call()
        assert torch.equal(o.view(torch.int16), o_ref.view(torch.int16))
        assert torch.equal(hT.view(torch.int32), s_ref.view(torch.int32))
    for i in range(len(kern.entries)):  # each kernel alone, on the scratch the call left
        kern.launch_one(i, q, k, v, a, b, A_log, dt_bias, cu, idx, h0, hT, o, 1 / math.sqrt(K),
                        1)
    torch.cuda.synchronize()
