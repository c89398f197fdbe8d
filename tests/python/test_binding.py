"""The launch rules on shapes and dtypes alone (binding.py): the C++
runtime's checks and messages, grids, divisors, scratch, overlap."""
import random

import pytest
import samples

from kiln import binding, manifest

KERNEL = manifest.parse(samples.single(), "toy.json").signature
OP = manifest.parse(samples.op(), "op.json")


def args(B=2, T=100, H=4, HV=8, N=3, x="bf16", y="f32"):
    return [(x, (B, T, H, 32)), (y, (B, T, HV)), ("i64", (N + 1,)), None, None]


def bind(a):
    return binding.bind("toy", KERNEL.params, KERNEL.dims, a)


def test_bind_solves_dims():
    assert bind(args()) == {"B": 2, "T": 100, "H": 4, "HV": 8, "N+1": 4, "N": 3}


@pytest.mark.parametrize("a, error, message", [
    (args(x="f32"), TypeError, "toy: argument 'x' must be bf16, got f32"),
    (args()[:4], TypeError, "toy takes 5 arguments, got 4"),
    ([("bf16", (2, 100, 4))] + args()[1:], ValueError, "argument 'x' must have 4 dims, got 3"),
    ([("bf16", (2, 100, 4, 64))] + args()[1:], ValueError, "argument 'x' dim 3 must be 32, got 64"),
    (args(T=0), ValueError, "argument 'x' dim 1 (T) must be positive, got 0"),
    ([args()[0], ("f32", (2, 99, 8))] + args()[2:], ValueError,
     "argument 'y' dim 1 (T) is 99 but 'x' gave T = 100"),
    (args(N=0), ValueError, "argument 'cu_seqlens' gives N+1 = 1, so N = 0 (must be positive)"),
])
def test_bind_errors_name_the_parameter_and_dim(a, error, message):
    with pytest.raises(error) as e:
        bind(a)
    assert message in str(e.value)


def test_plus_dims_agree_with_their_base():
    params = (manifest.Param("a", True, "f32", "in", ("N",)),
              manifest.Param("b", True, "f32", "in", ("N+1",)))
    assert binding.bind("k", params, ("N", "N+1"), [("f32", (3,)), ("f32", (4,))]) == \
        {"N": 3, "N+1": 4}
    with pytest.raises(ValueError, match="'b' gives N\\+1 = 5 but 'a' gave N = 3"):
        binding.bind("k", params, ("N", "N+1"), [("f32", (3,)), ("f32", (5,))])
    with pytest.raises(ValueError, match="no tensor argument fixes the dim 'M'"):
        binding.bind("k", params[:1], ("N", "M"), [("f32", (3,))])


def test_dims_must_fit_32_bits():
    binding.check_dims_fit("toy", {"T": 2**31 - 1})
    with pytest.raises(ValueError, match="dim T = 2147483648 exceeds 2\\^31 - 1"):
        binding.check_dims_fit("toy", {"T": 2**31})


def test_tma_strides_must_be_16_byte_multiples():
    binding.check_tma_strides("gemm", "a", [200, 304], 2)
    binding.check_tma_strides("gemm", "a", [200, 3], 16)
    with pytest.raises(ValueError, match="gemm: argument 'a' \\[200, 300\\] is copied by TMA, "
                                         "whose strides must be multiples of 16 bytes; its dim 0 "
                                         "steps 600 bytes"):
        binding.check_tma_strides("gemm", "a", [200, 300], 2)
    with pytest.raises(ValueError, match="its dim 1 steps 344 bytes"):
        binding.check_tma_strides("q", "q", [9, 3, 172], 2)


def test_expressions():
    dims = {"T": 100, "H": 4, "HV": 8}
    assert binding.eval_expr(["ceildiv", "T", 64], dims) == 2
    assert binding.eval_expr(["div", ["sub", 1, "T"], 64], dims) == -1  # C++ truncation
    assert binding.eval_expr(["min", ["mul", "H", 2], ["max", 3, ["add", "HV", 1]]], dims) == 8
    assert binding.expr_text(["div", "HV", ["sub", "H", 1]]) == "HV / (H - 1)"
    assert binding.expr_text(["ceildiv", "T", 64]) == "cdiv(T, 64)"
    with pytest.raises(ValueError, match="HV / \\(H - 4\\) divides by zero"):
        binding.eval_expr(["div", "HV", ["sub", "H", 4]], dims)
    with pytest.raises(ValueError, match="grid uses dim 'N' that has no value"):
        binding.eval_expr("N", dims)
    # 64 bits, as the C++ runtime: past them an error, as there.
    big = {"T": 2147483647, "HV": 64}
    with pytest.raises(ValueError, match=r"\(T \* HV\) \* \(T \* HV\) does not fit in 64 bits "
                                         r"at 137438953408, 137438953408"):
        binding.eval_expr(["mul", ["mul", "T", "HV"], ["mul", "T", "HV"]], big)


def test_grids():
    dims = bind(args())
    assert binding.launch_grid("toy", KERNEL, dims, sms=132) == (2, 2, 1)
    assert binding.launch_grid("toy", KERNEL, dict(dims, B=0), sms=132) is None  # gated off
    with pytest.raises(ValueError, match="grid extent 65536 along y exceeds the CUDA limit 65535"):
        binding.launch_grid("toy", KERNEL, dict(dims, T=64 * 65536), sms=132)
    second = OP.kernels[1]  # grid [4], two resident CTAs an SM
    assert binding.launch_grid("second", second, {}, sms=132) == (4, 1, 1)
    assert binding.launch_grid("second", second, {}, sms=1) == (2, 1, 1)


def test_divisors_multiply_exactly():
    rng = random.Random(1)
    for d in [1, 2, 3, 7, 64, 1000, 2**31 - 1] + [rng.randrange(1, 2**31) for _ in range(50)]:
        arg = binding.divisor_arg(d)
        m, s = arg & 0xFFFFFFFF, arg >> 32
        assert arg < 2**64
        for x in [0, 1, d - 1, d, d + 1, 2**31 - 1] + [rng.randrange(2**31) for _ in range(50)]:
            assert (x * m) >> s == x // d
    assert binding.divisor_args("toy", KERNEL.divisors, {"HV": 8, "H": 4}) == \
        [binding.divisor_arg(2)]
    with pytest.raises(ValueError, match="toy: the kernel divides by HV / H = 0, which must lie"):
        binding.divisor_args("toy", KERNEL.divisors, {"HV": 2, "H": 4})


def test_scratch_and_aligned_dims():
    dims = binding.with_aligned_dims("op", {"T": 10}, OP.aligned_dims)
    assert dims == {"T": 10, "TP": 12}
    assert binding.scratch_shape("op", OP.scratch[0], dims) == (12, 8)
    with pytest.raises(ValueError, match="scratch 'tmp' uses dim 'TP', which has no value"):
        binding.scratch_shape("op", OP.scratch[0], {"T": 10})


def test_fits_beside():
    plain = manifest.Launch("k", (), overlap=True)
    exclusive = manifest.Launch("k", (), overlap=True, beside_shared_bytes=232448)
    assert binding.fits_beside(plain, 131, 132) and not binding.fits_beside(plain, 132, 132)
    assert binding.fits_beside(exclusive, 66, 132) and not binding.fits_beside(exclusive, 67, 132)
    assert not binding.fits_beside(manifest.Launch("k", ()), 1, 132)  # not marked overlap
