"""Launch a Kiln-compiled kernel (cubin + manifest) on torch tensors.

`kiln compile OP.tile --schedule S.yaml --emit cubin -o NAME.cubin` writes
NAME.cubin and NAME.json. This module loads them with the CUDA driver API
(ctypes, no extra packages), checks every argument against the manifest and
launches on torch's current stream, so a peer kernel and ours run and are
timed in one process, CUDA graphs included.
"""
import ctypes
import json
import os

import torch

_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16,
           "f64": torch.float64, "i8": torch.int8, "i32": torch.int32, "i64": torch.int64}
_cuda = None
# CUtensorMapDataType by torch dtype.
_TMA_DTYPES = {torch.float32: 7, torch.bfloat16: 9, torch.float16: 6, torch.float64: 8,
               torch.int32: 3, torch.int64: 5, torch.int8: 0}


def _driver():
    global _cuda
    if _cuda is None:
        _cuda = ctypes.CDLL("libcuda.so.1")
    return _cuda


def _check(rc, what):
    if rc != 0:
        name = ctypes.c_char_p()
        _driver().cuGetErrorString(rc, ctypes.byref(name))
        raise RuntimeError(f"{what} failed: {name.value.decode() if name.value else rc}")


def _grid_extent(expr, dims):
    if isinstance(expr, (int, float)):
        return int(expr)
    if isinstance(expr, str):
        return dims[expr]
    op, a, b = expr
    a, b = _grid_extent(a, dims), _grid_extent(b, dims)
    if op in ("div", "ceildiv") and b == 0:
        raise ValueError(f"grid expression {expr} divides by zero")
    # Divisions see operands >= 0 (dims, and max(x, 0)): floor is C++'s truncation
    ops = {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
           "div": lambda: a // b, "ceildiv": lambda: -(-a // b),
           "min": lambda: min(a, b), "max": lambda: max(a, b)}
    return ops[op]()


def _divisor_arg(d):
    """An invariant divisor's kernel argument, as the C++ runtime makes it
    (invariantDivisorArg): m | s << 32, x / d == (x * m) >> s for x < 2^31."""
    s = 31 + max(0, (d - 1).bit_length())
    return -(-(1 << s) // d) | s << 32


def _bind(params, name, args):
    """Checks the arguments and solves the runtime dims, like the C++ runtime."""
    if len(args) != len(params):
        raise TypeError(f"{name} takes {len(params)} arguments, got {len(args)}")
    dims = {}
    for p, a in zip(params, args):
        if p["kind"] != "view":
            continue
        where = f'{name}: argument {p["name"]}'
        if not isinstance(a, torch.Tensor) or not a.is_cuda:
            raise TypeError(f"{where} must be a CUDA tensor")
        if a.dtype != _DTYPES[p["dtype"]]:
            raise TypeError(f'{where} must be {p["dtype"]}, got {a.dtype}')
        if not a.is_contiguous():
            raise ValueError(f"{where} must be contiguous")
        if a.data_ptr() % 16:
            raise ValueError(f"{where} must be 16-byte aligned")
        if a.dim() != len(p["shape"]):
            raise ValueError(f'{where} has rank {a.dim()}, expected {len(p["shape"])}')
        for d, (want, got) in enumerate(zip(p["shape"], a.shape)):
            if isinstance(want, str):
                if dims.setdefault(want, got) != got:
                    raise ValueError(f"{where} dim {d} ({want}) is {got}, "
                                     f"but another argument gave {want} = {dims[want]}")
            elif want != got:
                raise ValueError(f"{where} dim {d} is {got}, expected {want}")
    # `N+1` dims agree with N, or fix it (as the C++ runtime does).
    for dim in [n for n in dims if "+" in n]:
        base, plus = dim.split("+")
        if dims.setdefault(base, dims[dim] - int(plus)) + int(plus) != dims[dim]:
            raise ValueError(f"{name}: {dim} = {dims[dim]} but {base} = {dims[base]}")
    # Kernels divide dims in 32 bits (tile-narrow-index-division).
    for dim, value in dims.items():
        if value > 2**31 - 1:
            raise ValueError(f"{name}: dim {dim} = {value} exceeds 2^31 - 1, "
                             "the largest a GPU kernel divides in 32 bits")
    return dims


class _Entry:
    """One kernel of an image: binds arguments and launches on torch's stream."""

    def __init__(self, m, module, label, beside_shared=0):
        cu = _driver()
        self.m = m
        self.function = ctypes.c_void_p()
        _check(cu.cuModuleGetFunction(ctypes.byref(self.function), module,
                                      m["entry"].encode()), "cuModuleGetFunction")
        # Launched beside another, an exclusive kernel asks for the SM's
        # whole shared memory (the launch's beside_shared_bytes).
        self.beside_shared = beside_shared
        shared = max(m.get("dynamic_shared_bytes", 0), beside_shared)
        if shared > 0:  # static + dynamic past 48 KB needs the opt-in: always opt in
            _check(cu.cuFuncSetAttribute(self.function, 8, ctypes.c_int(shared)),
                   "cuFuncSetAttribute")
        self.params = m["params"]
        self.name = f'{m["entry"]}[{label}]'
        self._maps = {}
        self.sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count

    def _tensor_map(self, info, tensor):
        """A TMA descriptor (128 bytes, 64-byte aligned) over `tensor`, cached."""
        # A tensor may have several maps (rings with other boxes or swizzles).
        key = (info["param"], tensor.data_ptr(), tuple(tensor.shape), tuple(info["box"]),
               info.get("swizzle", 0))
        if key in self._maps:
            return self._maps[key]
        rank = tensor.dim()
        raw = ctypes.create_string_buffer(128 + 64)
        addr = (ctypes.addressof(raw) + 63) // 64 * 64
        size = tensor.element_size()
        dims = (ctypes.c_uint64 * rank)(*reversed(tensor.shape))
        strides = (ctypes.c_uint64 * max(rank - 1, 1))(
            *[s * size for s in reversed(tensor.stride()[:-1])])
        box = (ctypes.c_uint32 * rank)(*reversed(info["box"]))
        ones = (ctypes.c_uint32 * rank)(*([1] * rank))
        # interleave none, the manifest's swizzle, L2 promotion 256 B, no OOB fill
        swizzle = {0: 0, 32: 1, 64: 2, 128: 3}[info.get("swizzle", 0)]
        _check(_driver().cuTensorMapEncodeTiled(
            ctypes.c_void_p(addr), ctypes.c_int(_TMA_DTYPES[tensor.dtype]), ctypes.c_uint(rank),
            ctypes.c_void_p(tensor.data_ptr()), dims, strides, box, ones,
            0, swizzle, 3, 0), f"cuTensorMapEncodeTiled({self.name})")
        self._maps[key] = (raw, ctypes.c_void_p(addr))
        return self._maps[key]

    def bind(self, args):
        return _bind(self.params, self.name, args)

    def _grid(self, dims):
        """The grid launched on these dims (a persistent kernel's: its
        resident CTAs), or None for an empty one."""
        m = self.m
        grid = [_grid_extent(e, dims) for e in m["grid"]] + [1] * (3 - len(m["grid"]))
        if min(grid) <= 0:
            return None
        if m.get("persistent", 0):
            grid = [min(grid[0] * grid[1] * grid[2], self.sms * m["persistent"]), 1, 1]
        return grid

    def ctas(self, *args):
        """How many CTAs a call with these arguments launches."""
        grid = self._grid(self.bind(args))
        return grid[0] * grid[1] * grid[2] if grid else 0

    def __call__(self, *args, beside=False):
        dims = self.bind(args)
        m = self.m
        grid = self._grid(dims)
        if grid is None:
            return
        holders = [ctypes.c_int64(dims.get(n, 0)) for n in m["dims"]]
        for p, a in zip(self.params, args):
            if p["kind"] == "view":
                holders.append(ctypes.c_void_p(a.data_ptr()))
            elif p["dtype"] == "f32":
                holders.append(ctypes.c_float(a))
            elif p["dtype"] == "f64":
                holders.append(ctypes.c_double(a))
            elif p["dtype"] == "i32":
                holders.append(ctypes.c_int32(a))
            else:
                holders.append(ctypes.c_int64(a))
        for expr in m.get("divisors", []):  # after the parameters (tile-invariant-divisors)
            d = _grid_extent(expr, dims)
            if not 1 <= d < 1 << 31:
                raise ValueError(f"{self.name}: the kernel divides by {expr} = {d}, "
                                 "which must lie in [1, 2^31)")
            holders.append(ctypes.c_uint64(_divisor_arg(d)))
        addrs = [ctypes.addressof(h) for h in holders]
        for info in m.get("tensor_maps", []):
            addrs.append(self._tensor_map(info, args[info["param"]])[1].value)
        params = (ctypes.c_void_p * len(addrs))(*addrs)
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        _check(_driver().cuLaunchKernel(self.function, grid[0], grid[1], grid[2],
                                        m["threads"], 1, 1,
                                        max(m.get("dynamic_shared_bytes", 0),
                                            self.beside_shared if beside else 0), stream, params,
                                        None), f"cuLaunchKernel({self.name})")


class KilnKernel:
    """A compiled kernel, or an op of several kernels (its manifest has
    `launches`): then each call allocates the op's scratch tensors once per
    shape (filled with 0xff bytes the first time, so unwritten reads show as
    NaN) and launches the kernels in order on torch's current stream."""

    def __init__(self, manifest_path):
        self.path = manifest_path
        with open(manifest_path) as f:
            self.m = json.load(f)
        # Its name in a bench table: the schedule's, and the image's where
        # that says more, so two builds of one schedule (before and after
        # a change) stay apart.
        schedule = self.m["schedule"].replace(".yaml", "")
        image = os.path.splitext(os.path.basename(self.m["image"]))[0]
        self.tag = schedule if image in schedule else f"{schedule}[{image}]"
        image_path = os.path.join(os.path.dirname(os.path.abspath(manifest_path)), self.m["image"])
        with open(image_path, "rb") as f:
            image = f.read()
        if not image_path.endswith(".cubin"):
            image += b"\0"
        torch.cuda.init()
        torch.zeros(1, device="cuda")  # makes the primary context current
        self._image = ctypes.create_string_buffer(image, len(image))
        self.module = ctypes.c_void_p()
        _check(_driver().cuModuleLoadData(ctypes.byref(self.module), self._image),
               "cuModuleLoadData")
        self.name = f'{self.m["entry"]}[{self.m["schedule"]}]'
        # True: every launch after the one before it, `overlap` or not (the
        # reference a run side by side must equal byte for byte).
        self.serial = False
        if "launches" in self.m:
            self.steps = [_Entry(k, self.module, self.m["schedule"],
                                 launch.get("beside_shared_bytes", 0))
                          for k, launch in zip(self.m["kernels"], self.m["launches"])]
            self._scratch = {}
        else:
            self.steps = None
            self.single = _Entry(self.m, self.module, self.m["schedule"])

    def _scratch_for(self, dims):
        key = tuple(sorted(dims.items()))
        if key not in self._scratch:
            tensors = []
            dims = dict(dims)
            for a in self.m.get("aligned_dims", []):  # `dim TP = align(T, 4)`
                dims[a["name"]] = -(-dims[a["of"]] // a["multiple"]) * a["multiple"]
            for s in self.m["scratch"]:
                shape = [dims[d] if isinstance(d, str) else d for d in s["shape"]]
                t = torch.empty(shape, dtype=_DTYPES[s["dtype"]], device="cuda")
                t.view(torch.uint8).fill_(255)
                tensors.append(t)
            self._scratch[key] = tensors
        return self._scratch[key]

    def _step_args(self, launch, args):
        scratch = self._scratch_for(_bind(self.m["params"], self.name, args))
        return [args[i] if i >= 0 else scratch[-1 - i] for i in launch["args"]]

    def __call__(self, *args):
        if self.steps is None:
            return self.single(*args)
        # A launch marked `overlap` runs beside the one before it: on a
        # second, high-priority stream that starts where that one starts
        # (it waits on flags for what it reads) and that the current
        # stream waits for afterwards. The one before is launched first, so
        # where kernels run one at a time it finishes first. Only while its
        # CTAs leave an SM free: resident CTAs that wait on flags must not
        # keep the CTAs that set them from starting (the scheduler serves
        # the high-priority kernel's CTAs first); otherwise it runs after.
        launches = self.m["launches"]
        main = torch.cuda.current_stream()
        beside = [not self.serial and bool(launch.get("overlap")) and
                  self._fits_beside(step, step.ctas(*self._step_args(launch, args)))
                  for launch, step in zip(launches, self.steps)]
        fork = None
        for i, (launch, step) in enumerate(zip(launches, self.steps)):
            if i + 1 < len(launches) and beside[i + 1]:
                fork = torch.cuda.Event()
                fork.record(main)
            if not beside[i]:
                step(*self._step_args(launch, args))
                continue
            side = self._side_stream()
            side.wait_event(fork)
            with torch.cuda.stream(side):
                step(*self._step_args(launch, args), beside=True)
            done = torch.cuda.Event()
            done.record(side)
            main.wait_event(done)

    @staticmethod
    def _fits_beside(step, ctas):
        """Whether a launch of `ctas` CTAs may run beside the one before it:
        while it leaves an SM free, and half the SMs where each CTA takes an
        SM to itself (an exclusive kernel's beside_shared_bytes). The twin
        of OpPlan::Launch::runsBeside (backends/runtime/OpPlan.h)."""
        return ctas < step.sms and (not step.beside_shared or 2 * ctas <= step.sms)

    def _side_stream(self):
        if not hasattr(self, "_side"):
            self._side = torch.cuda.Stream(priority=-1)
        return self._side

    def launch_one(self, index, *args):
        """Only the op's kernel `index`, on the scratch a full call left (for
        timing the kernels of an op one by one)."""
        self.steps[index](*self._step_args(self.m["launches"][index], args))
