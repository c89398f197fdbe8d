"""The launch rules, as pure functions of shapes and dtypes.

Solving runtime dims from argument shapes, evaluating grid and divisor
expressions, sizing scratch tensors and deciding whether a launch may run
beside the one before it: each is the twin of a function in
backends/runtime (Signature.cpp bindArguments, Manifest.cpp evalGridExpr and
invariantDivisorArg, OpPlan.cpp runOpPlan and Launch::runsBeside, and
GpuLauncher.cpp's grid limits), with the same messages. They take no tensors
and touch no GPU, so the launcher computes them once per shape and the tests
check them on any machine.

A tensor argument is described as (dtype name, shape tuple); `name` prefixes
every message (the kernel or op and its schedule).
"""

INT32_MAX = 2**31 - 1
GRID_LIMITS = (INT32_MAX, 65535, 65535)  # CUDA's largest grid, x y z


def bind(name, params, runtime_dims, args):
    """The runtime dims that tensor arguments `args` (one per parameter; any
    value for a scalar) fix, after checking each against its parameter.
    Raises TypeError (dtype) or ValueError (rank, sizes, dims that disagree),
    naming the parameter and the dim."""
    if len(args) != len(params):
        raise TypeError(f"{name} takes {len(params)} arguments, got {len(args)}")
    dims, bound_by = {}, {}
    for p, a in zip(params, args):
        if not p.is_view:
            continue
        dtype, shape = a
        where = f"{name}: argument '{p.name}'"
        if dtype != p.dtype:
            raise TypeError(f"{where} must be {p.dtype}, got {dtype}")
        if len(shape) != len(p.shape):
            raise ValueError(f"{where} must have {len(p.shape)} dims, got {len(shape)}")
        for d, (want, got) in enumerate(zip(p.shape, shape)):
            if isinstance(want, int):
                if got != want:
                    raise ValueError(f"{where} dim {d} must be {want}, got {got}")
                continue
            if got <= 0:
                raise ValueError(f"{where} dim {d} ({want}) must be positive, got {got}")
            if want not in dims:
                dims[want], bound_by[want] = got, p.name
            elif dims[want] != got:
                raise ValueError(f"{where} dim {d} ({want}) is {got} but '{bound_by[want]}' "
                                 f"gave {want} = {dims[want]}")
    # A dim named `N+c` is fixed by its tensor like any other and must agree
    # with N; it also fixes N when no tensor has a plain N dim.
    for n in runtime_dims:
        if "+" not in n or n not in dims:
            continue
        base, offset = n.split("+", 1)
        offset = int(offset)
        if base not in dims:
            if dims[n] - offset <= 0:
                raise ValueError(f"{name}: argument '{bound_by[n]}' gives {n} = {dims[n]}, so "
                                 f"{base} = {dims[n] - offset} (must be positive)")
            dims[base], bound_by[base] = dims[n] - offset, bound_by[n]
        elif dims[base] + offset != dims[n]:
            raise ValueError(f"{name}: argument '{bound_by[n]}' gives {n} = {dims[n]} but "
                             f"'{bound_by[base]}' gave {base} = {dims[base]}")
    for n in runtime_dims:
        if n not in dims:
            raise ValueError(f"{name}: no tensor argument fixes the dim '{n}'")
    return dims


def check_dims_fit(name, dims):
    """GPU kernels divide dims and grid coordinates in 32 bits
    (tile-narrow-index-division): every dim must be below 2^31."""
    for n, value in sorted(dims.items()):
        if value > INT32_MAX:
            raise ValueError(f"{name}: dim {n} = {value} exceeds 2^31 - 1, the largest a GPU "
                             "kernel divides in 32 bits")


def check_tma_strides(name, param, shape, elem_bytes):
    """A TMA engine copies from a contiguous tensor only where every stride
    but the innermost's is a multiple of 16 bytes (cuTensorMapEncodeTiled);
    the runtime's tmaStridesFit, word for word."""
    stride = elem_bytes
    for i in range(len(shape) - 1, 0, -1):
        stride *= shape[i]
        if stride % 16:
            raise ValueError(f"{name}: argument '{param}' [{', '.join(map(str, shape))}] is "
                             "copied by TMA, whose strides must be multiples of 16 bytes; "
                             f"its dim {i - 1} steps {stride} bytes")


def _div(a, b):
    """C++'s integer division, truncating toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_OPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
        "div": _div, "ceildiv": lambda a, b: _div(a + b - 1, b), "min": min, "max": max}


def fits_int64(v):
    """Whether v fits in 64 bits: the C++ runtime evaluates grids and
    selection conditions there and refuses what does not
    (backends/runtime/CheckedInt.h), so the Python twins refuse it too."""
    return -(1 << 63) <= v < (1 << 63)


def eval_expr(expr, dims):
    """A grid or divisor expression's value: a number, a dim name, or
    [op, lhs, rhs] with op in add sub mul div ceildiv min max."""
    if isinstance(expr, (int, float)) and not isinstance(expr, bool):
        return int(expr)
    if isinstance(expr, str):
        if expr not in dims:
            raise ValueError(f"grid uses dim '{expr}' that has no value")
        return dims[expr]
    if not (isinstance(expr, (list, tuple)) and len(expr) == 3 and expr[0] in _OPS):
        raise ValueError(f"malformed grid expression {expr!r}")
    op, a, b = expr[0], eval_expr(expr[1], dims), eval_expr(expr[2], dims)
    if op in ("div", "ceildiv") and b == 0:
        raise ValueError(f"grid expression {expr_text(expr)} divides by zero")
    v = _OPS[op](a, b)
    if not fits_int64(a + b - 1 if op == "ceildiv" else v):
        raise ValueError(f"grid expression {expr_text(expr)} does not fit in 64 bits at {a}, {b}")
    return v


def expr_text(expr, nested=False):
    """An expression as the source writes it: `HV / H`, `cdiv(T, 64)`."""
    if not isinstance(expr, (list, tuple)) or len(expr) != 3:
        return str(expr)
    op, a, b = expr[0], expr_text(expr[1], True), expr_text(expr[2], True)
    calls = {"ceildiv": "cdiv", "min": "minimum", "max": "maximum"}
    if op in calls:
        return f"{calls[op]}({a}, {b})"
    text = f"{a} {dict(add='+', sub='-', mul='*').get(op, '/')} {b}"
    return f"({text})" if nested else text


def launch_grid(name, kernel, dims, sms):
    """The (x, y, z) grid a launch of `kernel` on `dims` uses, or None when
    an extent is 0 or less (nothing to launch: ops gate kernels this way). A
    persistent kernel gets min(all points, sms * persistent) CTAs along x,
    each looping over grid points."""
    grid = []
    for axis, expr in enumerate(kernel.grid):
        extent = eval_expr(expr, dims)
        if extent <= 0:
            return None
        if extent > GRID_LIMITS[axis]:
            raise ValueError(f"{name}: grid extent {extent} along {'xyz'[axis]} exceeds the "
                             f"CUDA limit {GRID_LIMITS[axis]}")
        grid.append(extent)
    grid += [1] * (3 - len(grid))
    if kernel.persistent:
        return (min(grid[0] * grid[1] * grid[2], sms * kernel.persistent), 1, 1)
    return tuple(grid)


def divisor_arg(d):
    """The kernel argument for invariant divisor d (1 <= d < 2^31):
    m | s << 32 with s = 31 + ceil(log2 d) and m = ceil(2^s / d), so that
    x / d == (x * m) >> s for every 0 <= x < 2^31 (invariantDivisorArg)."""
    s = 31 + (d - 1).bit_length()
    return -(-(1 << s) // d) | s << 32


def divisor_args(name, divisors, dims):
    """Each divisor expression's kernel argument on `dims`."""
    out = []
    for expr in divisors:
        d = eval_expr(expr, dims)
        if not 1 <= d <= INT32_MAX:
            raise ValueError(f"{name}: the kernel divides by {expr_text(expr)} = {d}, which must "
                             "lie in [1, 2^31)")
        out.append(divisor_arg(d))
    return out


def with_aligned_dims(name, dims, aligned_dims):
    """`dims` plus an op's aligned dims (`dim TP = align(T, 4)`)."""
    out = dict(dims)
    for a in aligned_dims:
        if a.of not in out:
            raise ValueError(f"{name}: aligned dim '{a.name}' rounds up '{a.of}', which has "
                             "no value")
        out[a.name] = -(-out[a.of] // a.multiple) * a.multiple
    return out


def scratch_shape(name, scratch, dims):
    """The shape of scratch tensor `scratch` for the op's dims."""
    for d in scratch.shape:
        if isinstance(d, str) and d not in dims:
            raise ValueError(f"{name}: scratch '{scratch.name}' uses dim '{d}', which has no value")
    return tuple(dims[d] if isinstance(d, str) else d for d in scratch.shape)


def fits_beside(launch, ctas, sms):
    """Whether a launch marked `overlap` runs beside the one before it, as
    `ctas` CTAs on `sms` SMs: while they leave an SM free (resident CTAs that
    wait on flags must not keep the CTAs that set them from starting), and
    on at most half the SMs where each takes an SM to itself (an exclusive
    kernel's beside_shared_bytes). The twin of OpPlan::Launch::runsBeside."""
    return launch.overlap and ctas < sms and (not launch.beside_shared_bytes or 2 * ctas <= sms)
