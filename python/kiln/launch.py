"""Launching a loaded image's kernels on torch tensors.

An Image is the manifest's cubin loaded on one GPU. A Plan is an op at one
shape of its arguments: dims solved, scratch tensors allocated, every
launch's argument block and grid computed. A call at a known shape checks
each tensor's shape, dtype, device, contiguity and alignment in one pass,
writes the data pointers and scalars into the blocks and launches on
torch's current stream: no allocation, no synchronisation, so it is
captured into CUDA graphs as is. Everything that depends only on shapes
happens once, when the Plan is built; its checks raise the C++ runtime's
messages (binding.py).

This module imports torch; kernel.py imports it at the first call only.
"""
import ctypes

import torch

from . import binding, cuda
from .args import ParamBlock, TensorMap, scalar_holder
from .manifest import DTYPE_BYTES

TORCH_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16,
                "f64": torch.float64, "i8": torch.int8, "i32": torch.int32, "i64": torch.int64,
                "f8e4m3": torch.float8_e4m3fn}

# The current stream as an int, without making a torch Stream object (what
# Triton's launcher calls).
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
    lambda device: torch.cuda.current_stream(device).cuda_stream)


def check_tensor(name, p, a, device):
    """Raises unless `a` can be bound to view parameter `p` on `device`, for
    what the shape alone does not say: a CUDA tensor on that device, of the
    parameter's dtype, contiguous and 16-byte aligned."""
    where = f"{name}: argument '{p.name}'"
    if not isinstance(a, torch.Tensor):
        raise TypeError(f"{where} must be a CUDA tensor, got {type(a).__name__}")
    if a.get_device() < 0:
        raise TypeError(f"{where} must be a CUDA tensor, got one on {a.device}")
    if a.get_device() != device:
        raise ValueError(f"{where} is on {a.device}, but the kernel runs on cuda:{device}")
    if a.dtype is not TORCH_DTYPES[p.dtype]:
        raise TypeError(f"{where} must be {p.dtype} ({TORCH_DTYPES[p.dtype]}), got {a.dtype}")
    if not a.is_contiguous():
        raise ValueError(f"{where} must be contiguous")
    if a.data_ptr() % 16:
        raise ValueError(f"{where} must be 16-byte aligned")


def set_scalar(name, p, holder, value):
    try:
        holder.value = value
    except TypeError:
        raise TypeError(f"{name}: argument '{p.name}' must be a number ({p.dtype}), "
                        f"got {type(value).__name__}") from None


class Image:
    """A manifest's image loaded on GPU `device`: a function per launch,
    opted in to its shared memory, and what overlapped launches need (a
    high-priority side stream, events to fork and join)."""

    def __init__(self, manifest, device):
        self.device = device
        self.context = cuda.primary_context(device)
        with open(manifest.image, "rb") as f:
            image = f.read()
        if not manifest.image.endswith(".cubin"):
            image += b"\0"  # PTX: cuModuleLoadData wants it NUL-terminated
        overlap = any(launch.overlap for launch in manifest.launches)
        with cuda.current(self.context):
            module = cuda.load_module(image, manifest.image)
            self.functions = []
            for kernel, launch in zip(manifest.kernels, manifest.launches):
                function = cuda.get_function(module, kernel.entry)
                shared = max(kernel.dynamic_shared_bytes, launch.beside_shared_bytes)
                if shared > 0:
                    cuda.set_max_dynamic_shared(function, shared, kernel.entry)
                self.functions.append(function)
            self.sms = cuda.multiprocessors(device)
            n = len(manifest.launches)
            self.forks = [cuda.event() for _ in range(n)] if overlap else None
            self.joins = [cuda.event() for _ in range(n)] if overlap else None
        self.side_stream = torch.cuda.Stream(device=device, priority=-1) if overlap else None


class Step:
    """One launch of a plan: its function, grid and argument block."""

    def __init__(self, label, kernel, launch, function, sms, args, holders, maps):
        """`args` describes each kernel argument as binding.bind wants it and
        `holders` holds its value; descriptors over the op's arguments go
        into `maps` as (tensor map, op parameter index, name), for the plan
        to re-point at each call."""
        dims = binding.bind(label, kernel.params, kernel.dims, args)
        binding.check_dims_fit(label, dims)
        self.label = label
        self.function = function
        self.threads = kernel.threads
        self.grid = binding.launch_grid(label, kernel, dims, sms)
        ctas = self.grid[0] * self.grid[1] * self.grid[2] if self.grid else 0
        self.fits_beside = binding.fits_beside(launch, ctas, sms)
        self.shared = kernel.dynamic_shared_bytes
        self.beside_shared = max(kernel.dynamic_shared_bytes, launch.beside_shared_bytes)
        values = [ctypes.c_int64(dims.get(n, 0)) for n in kernel.dims] + list(holders)
        values += [ctypes.c_uint64(v) for v in binding.divisor_args(label, kernel.divisors, dims)]
        for info in kernel.tensor_maps:
            dtype, shape = args[info.param]
            binding.check_tma_strides(label, kernel.params[info.param].name, shape,
                                      DTYPE_BYTES[dtype])
            tmap = TensorMap(shape, dtype, info.box, info.swizzle)
            source = launch.args[info.param]
            if source < 0:  # scratch: its pointer never changes
                tmap.point(holders[info.param].value, f"{label}, {kernel.params[info.param].name}")
            else:
                maps.append((tmap, source, f"{label}, {kernel.params[info.param].name}"))
            values.append(tmap.storage)
        self.block = ParamBlock(values)
        self._launch = cuda.lib().cuLaunchKernel
        self._launch_ex = cuda.lib().cuLaunchKernelEx
        # Started early (launch.early), where the plan finds the launch
        # before it ran on the same stream (Plan.early).
        self._early = cuda.early_config(self.grid, self.threads) if launch.early and self.grid \
            else None

    def launch(self, stream, shared, context, early=False):
        if self.grid is None:
            return
        rc = self._launch_once(stream, shared, early)
        if rc:
            self._failed(rc, stream, shared, context, early)

    def _launch_once(self, stream, shared, early):
        if early:
            config = self._early
            config.stream, config.shared = stream, shared
            return self._launch_ex(ctypes.byref(config), self.function, self.block.array, None)
        gx, gy, gz = self.grid
        return self._launch(self.function, gx, gy, gz, self.threads, 1, 1, shared, stream,
                            self.block.array, None)

    def _failed(self, rc, stream, shared, context, early):
        if rc == cuda.INVALID_CONTEXT:  # a thread torch has not used the GPU on yet
            with cuda.current(context):
                rc = self._launch_once(stream, shared, early)
        cuda.check(rc, f"cuLaunchKernel{'Ex' if early else ''}({self.label})")


class Plan:
    """An op (or single kernel) at one shape of its arguments."""

    def __init__(self, name, manifest, image, args):
        sig = manifest.signature
        if len(args) != len(sig.params):
            raise TypeError(f"{name} takes {len(sig.params)} arguments, got {len(args)}")
        self.name = name
        self.image = image
        self.device = image.device
        specs, self.holders, views, scalars = [], [], [], []
        for i, (p, a) in enumerate(zip(sig.params, args)):
            if p.is_view:
                check_tensor(name, p, a, image.device)
                specs.append((p.dtype, tuple(a.shape)))
                self.holders.append(ctypes.c_uint64(a.data_ptr()))
                views.append((i, self.holders[i], TORCH_DTYPES[p.dtype], a.shape, p))
            else:
                specs.append(None)
                self.holders.append(scalar_holder(p.dtype))
                set_scalar(name, p, self.holders[i], a)
                scalars.append((i, self.holders[i], p))
        self.views, self.scalars = tuple(views), tuple(scalars)
        dims = binding.bind(name, sig.params, sig.dims, specs)
        dims = binding.with_aligned_dims(name, dims, manifest.aligned_dims)
        self.scratch = []
        for s in manifest.scratch:
            t = torch.empty(binding.scratch_shape(name, s, dims), dtype=TORCH_DTYPES[s.dtype],
                            device=f"cuda:{image.device}")
            t.view(torch.uint8).fill_(255)  # a read of what no kernel wrote shows as NaN
            self.scratch.append(t)
        scratch_specs = [(s.dtype, tuple(t.shape)) for s, t in zip(manifest.scratch, self.scratch)]
        scratch_holders = [ctypes.c_uint64(t.data_ptr()) for t in self.scratch]
        self.maps, self.steps = [], []
        for k, (kernel, launch) in enumerate(zip(manifest.kernels, manifest.launches)):
            label = name if not manifest.is_op else f"{name}, launch {k} ('{launch.kernel}')"
            pick = [(specs[s], self.holders[s]) if s >= 0 else
                    (scratch_specs[-1 - s], scratch_holders[-1 - s]) for s in launch.args]
            self.steps.append(Step(label, kernel, launch, image.functions[k], image.sms,
                                   [a for a, _ in pick], [h for _, h in pick], self.maps))
        # Launch k runs beside launch k - 1 when the manifest and the grid say so.
        self.beside = [k > 0 and s.fits_beside for k, s in enumerate(self.steps)]
        self.overlaps = any(self.beside)
        # Launch k starts early when the manifest says so and launch k - 1 of
        # this call ran just before it on the same stream (never after the
        # caller's work: an empty grid launches nothing).
        self.early = [k > 0 and s._early is not None and self.steps[k - 1].grid is not None
                      and not self.beside[k - 1] and not self.beside[k]
                      for k, s in enumerate(self.steps)]

    def bind(self, args):
        """Writes a call's pointers and scalars into the argument blocks,
        checking each tensor on the way; False, before any check fails, when
        a tensor's shape is not this plan's (another plan serves the call)."""
        device = self.device
        for i, holder, dtype, shape, p in self.views:
            a = args[i]
            if a.shape != shape:
                return False
            if a.dtype is not dtype or a.get_device() != device or not a.is_contiguous():
                check_tensor(self.name, p, a, device)
            pointer = a.data_ptr()
            if pointer & 15:
                check_tensor(self.name, p, a, device)
            holder.value = pointer
        for i, holder, p in self.scalars:
            try:
                holder.value = args[i]
            except TypeError:
                set_scalar(self.name, p, holder, args[i])
        for tmap, i, what in self.maps:
            tmap.point(self.holders[i].value, what)
        return True

    def launch(self, serial):
        """Launches every step on torch's current stream. A step marked
        `overlap` that fits runs beside the one before it (unless `serial`):
        on a second, high-priority stream that starts where that one starts
        (it waits on flags for what it reads) and that the current stream
        waits for afterwards. The one before is launched first, so where
        kernels run one at a time it finishes first."""
        image, context = self.image, self.image.context
        stream = _raw_stream(self.device)
        if serial or not self.overlaps:
            for step, early in zip(self.steps, self.early):
                step.launch(stream, step.shared, context, early)
            return
        cu = cuda.lib()
        side = image.side_stream.cuda_stream
        n = len(self.steps)
        for k, step in enumerate(self.steps):
            if k + 1 < n and self.beside[k + 1]:
                cuda.check(cu.cuEventRecord(image.forks[k + 1], stream), "cuEventRecord")
            if not self.beside[k]:
                step.launch(stream, step.shared, context, self.early[k])
                continue
            cuda.check(cu.cuStreamWaitEvent(side, image.forks[k], 0), "cuStreamWaitEvent")
            step.launch(side, step.beside_shared, context)
            cuda.check(cu.cuEventRecord(image.joins[k], side), "cuEventRecord")
            cuda.check(cu.cuStreamWaitEvent(stream, image.joins[k], 0), "cuStreamWaitEvent")

    def launch_one(self, index):
        """Only step `index`, on the current stream, on the scratch as it is."""
        step = self.steps[index]
        step.launch(_raw_stream(self.device), step.shared, self.image.context)
