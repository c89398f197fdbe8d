"""Reading the manifest `kiln compile --emit cubin -o NAME.cubin` writes as NAME.json.

The manifest is all a launcher knows about a kernel (backends/runtime/Manifest.h
is its C++ reader): the entry point, the parameters in launch order, the
block size, the grid as expressions over runtime dims, and for an op of
several kernels its scratch tensors and launches. This module turns the JSON
into frozen records once, checking each field so a malformed manifest fails
here, naming the field, and not in the middle of a launch.

A single kernel is read as an op of one launch that passes every parameter
through, so the launcher has one path for both.
"""
import json
import os
from dataclasses import dataclass

from .errors import KilnError

DTYPE_BYTES = {"f32": 4, "bf16": 2, "f16": 2, "f8e4m3": 1, "f64": 8, "i8": 1, "i32": 4, "i64": 8}
# The scalar types a kernel parameter may have (docs/language.md).
SCALAR_DTYPES = ("f32", "f64", "i32", "i64")


@dataclass(frozen=True)
class Param:
    """A parameter: a view (tensor) with a shape of fixed sizes (int) and
    runtime dim names (str), or a scalar."""
    name: str
    is_view: bool
    dtype: str
    access: str = ""  # in / out / inout for kernel views, scratch for an op's scratch
    shape: tuple = ()


@dataclass(frozen=True)
class TensorMapInfo:
    """A TMA descriptor built over view parameter `param`, copying `box`
    (outermost dim first) with `swizzle` bytes (0, 32, 64, 128)."""
    param: int
    box: tuple
    swizzle: int


@dataclass(frozen=True)
class KernelInfo:
    """One kernel entry: what its launch needs."""
    entry: str
    threads: int
    dynamic_shared_bytes: int
    grid: tuple          # 1 to 3 extents: number, dim name, or [op, lhs, rhs]
    persistent: int      # resident CTAs per SM (0: a plain grid)
    dims: tuple          # runtime dims, passed first as i64
    params: tuple        # Param, in launch order
    tensor_maps: tuple   # TensorMapInfo, passed after the divisors
    divisors: tuple      # expressions; each an invariant-divisor argument


@dataclass(frozen=True)
class Launch:
    """One step of an op: kernel parameter j gets op parameter args[j]
    (>= 0) or scratch tensor -1 - args[j]."""
    kernel: str
    args: tuple
    overlap: bool = False
    beside_shared_bytes: int = 0
    early: bool = False  # started early: a programmatic dependent of the launch before


@dataclass(frozen=True)
class AlignedDim:
    """`dim name = align(of, multiple)`: `of` rounded up to a multiple."""
    name: str
    of: str
    multiple: int


@dataclass(frozen=True)
class Manifest:
    path: str
    raw: dict            # the JSON as read, for fields only scripts look at
    image: str           # absolute path of the cubin (or PTX)
    entry: str           # the kernel's or op's name
    target: str
    schedule: str        # the schedule's file name
    consts: dict
    signature: KernelInfo  # the parameters a call takes (an op's own)
    kernels: tuple       # KernelInfo per launch
    launches: tuple      # Launch
    aligned_dims: tuple  # AlignedDim
    scratch: tuple       # Param
    is_op: bool


class _Reader:
    """Field access that names the field in its error, as the C++ reader does."""

    def __init__(self, path):
        self.path = path

    def fail(self, message):
        raise KilnError(f"{self.path}: {message}")

    def get(self, obj, key, kind, what=None, default=None, required=True):
        value = obj.get(key) if isinstance(obj, dict) else None
        if value is None and not required:
            return default
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if not ok:
            self.fail(f"manifest field '{what or key}' is missing or has the wrong type")
        return value

    def param(self, q, where):
        name = self.get(q, "name", str, f"{where}.name")
        kind = self.get(q, "kind", str, f"{where}.kind")
        dtype = self.get(q, "dtype", str, f"{where}.dtype")
        if dtype not in DTYPE_BYTES:
            self.fail(f"parameter '{name}' has unknown dtype '{dtype}'")
        if kind != "view":
            if dtype not in SCALAR_DTYPES:
                self.fail(f"scalar parameter '{name}' has dtype {dtype}; scalars are "
                          f"{', '.join(SCALAR_DTYPES)}")
            return Param(name, False, dtype)
        access = self.get(q, "access", str, f"{where}.access")
        shape = self.get(q, "shape", list, f"{where}.shape")
        for d in shape:
            if not isinstance(d, (int, str)) or isinstance(d, bool):
                self.fail(f"manifest field '{where}.shape' holds {d!r}, not a size or dim name")
        return Param(name, True, dtype, access, tuple(shape))

    def params(self, obj, field):
        return tuple(self.param(q, f"{field}[]") for q in self.get(obj, field, list))

    def kernel(self, v):
        params = self.params(v, "params")
        grid = self.get(v, "grid", list)
        if not 1 <= len(grid) <= 3:
            self.fail("manifest field 'grid' must have 1 to 3 extents")
        maps = []
        for q in self.get(v, "tensor_maps", list, required=False, default=[]):
            param = self.get(q, "param", int, "tensor_maps[].param")
            if not (0 <= param < len(params) and params[param].is_view):
                self.fail("manifest field 'tensor_maps[].param' does not name a view parameter")
            box = self.get(q, "box", list, "tensor_maps[].box")
            if len(box) != len(params[param].shape):
                self.fail("manifest field 'tensor_maps[].box' must have the view's rank")
            swizzle = self.get(q, "swizzle", int, "tensor_maps[].swizzle", default=0,
                               required=False)
            if swizzle not in (0, 32, 64, 128):
                self.fail("manifest field 'tensor_maps[].swizzle' must be 0, 32, 64 or 128")
            maps.append(TensorMapInfo(param, tuple(box), swizzle))
        return KernelInfo(
            entry=self.get(v, "entry", str),
            threads=self.get(v, "threads", int),
            dynamic_shared_bytes=self.get(v, "dynamic_shared_bytes", int, required=False,
                                          default=0),
            grid=tuple(grid),
            persistent=self.get(v, "persistent", int, required=False, default=0),
            dims=tuple(self.get(v, "dims", list)),
            params=params,
            tensor_maps=tuple(maps),
            divisors=tuple(self.get(v, "divisors", list, required=False, default=[])))

    def launches(self, v, n_params, n_scratch):
        out = []
        for q in self.get(v, "launches", list):
            kernel = self.get(q, "kernel", str, "launches[].kernel")
            args = self.get(q, "args", list, "launches[].args")
            if any(not isinstance(a, int) or a >= n_params or -1 - a >= n_scratch for a in args):
                self.fail(f"launch of '{kernel}' names an argument the op does not have")
            out.append(Launch(kernel, tuple(args),
                              self.get(q, "overlap", bool, "launches[].overlap",
                                       default=False, required=False),
                              self.get(q, "beside_shared_bytes", int,
                                       "launches[].beside_shared_bytes", default=0,
                                       required=False),
                              self.get(q, "early", bool, "launches[].early", default=False,
                                       required=False)))
        return tuple(out)

    def aligned_dims(self, v):
        out = []
        for q in self.get(v, "aligned_dims", list, required=False, default=[]):
            d = AlignedDim(self.get(q, "name", str, "aligned_dims[].name"),
                           self.get(q, "of", str, "aligned_dims[].of"),
                           self.get(q, "multiple", int, "aligned_dims[].multiple"))
            if d.multiple <= 0:
                self.fail("manifest field 'aligned_dims[].multiple' must be positive")
            out.append(d)
        return tuple(out)


def _check_launch(r, kernel, launch, params, scratch):
    """A launch passes each kernel parameter something of its kind: a
    tensor for a view (binding checks its dtype and shape), a scalar of the
    same type for a scalar (its bytes are shared with the op's argument)."""
    if len(launch.args) != len(kernel.params):
        r.fail(f"launch of '{launch.kernel}' passes {len(launch.args)} arguments to "
               f"{len(kernel.params)} parameters")
    for p, source in zip(kernel.params, launch.args):
        given = params[source] if source >= 0 else scratch[-1 - source]
        if p.is_view != given.is_view or (not p.is_view and p.dtype != given.dtype):
            r.fail(f"launch of '{launch.kernel}' passes '{given.name}' ({given.dtype}"
                   f"{' tensor' if given.is_view else ''}) to '{p.name}' ({p.dtype}"
                   f"{' tensor' if p.is_view else ''})")


def parse(raw, path):
    """The Manifest of JSON `raw` read from `path` (which locates the image)."""
    r = _Reader(path)
    if not isinstance(raw, dict):
        r.fail("a manifest is a JSON object")
    image = r.get(raw, "image", str)
    signature = r.kernel(raw)
    common = dict(path=path, raw=raw, entry=signature.entry,
                  image=os.path.join(os.path.dirname(os.path.abspath(path)), image),
                  target=r.get(raw, "target", str),
                  schedule=r.get(raw, "schedule", str, required=False, default=""),
                  consts=r.get(raw, "consts", dict, required=False, default={}),
                  signature=signature)
    if "launches" not in raw:
        launch = Launch(signature.entry, tuple(range(len(signature.params))))
        return Manifest(**common, kernels=(signature,), launches=(launch,), aligned_dims=(),
                        scratch=(), is_op=False)
    scratch = r.params(raw, "scratch")
    launches = r.launches(raw, len(signature.params), len(scratch))
    kernels = tuple(r.kernel(k) for k in r.get(raw, "kernels", list))
    if len(kernels) != len(launches):
        r.fail("an op manifest needs one kernel manifest per launch")
    for kernel, launch in zip(kernels, launches):
        _check_launch(r, kernel, launch, signature.params, scratch)
    return Manifest(**common, kernels=kernels, launches=launches,
                    aligned_dims=r.aligned_dims(raw), scratch=scratch, is_op=True)


def read_json(path):
    """The JSON document in manifest file `path`."""
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise KilnError(f"cannot read manifest '{path}': {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise KilnError(f"{path}: line {e.lineno}, column {e.colno}: {e.msg}") from None


def read(path):
    """The Manifest in file `path`."""
    return parse(read_json(path), path)
