"""The callable a compiled kernel or op becomes.

A Kernel reads its manifest when made, and loads its image on the GPU at its
first call, so compiling (and filling the cache) works on a machine without
a GPU or PyTorch. Calls go through a Plan per shape of the tensor
arguments (launch.py). A call tries the last call's plan first, comparing
shapes in the same pass that checks each tensor, so a repeated call costs
that pass and the launch; another shape looks its plan up.
"""
import os

from . import manifest as manifests
from .errors import KilnError


def load(manifest_path):
    """The kernel whose manifest (NAME.json beside NAME.cubin, as `kiln
    compile --emit cubin -o NAME.cubin` writes them) is at `manifest_path`;
    for a selection manifest (`kiln compile --select`), a kiln.Selected that
    runs the schedule each shape's rules pick."""
    from . import selection
    raw = manifests.read_json(manifest_path)
    if selection.is_selection(raw):
        return selection.Selected(manifest_path, raw)
    return Kernel(manifest_path)


class Kernel:
    """A compiled kernel, or an op of several kernels.

    Call it with the parameters in the order of its signature: torch CUDA
    tensors for views (contiguous, 16-byte aligned, the parameter's dtype),
    numbers for scalars. It launches on torch's current stream and returns
    nothing: outputs are the tensors passed for `out` / `inout` parameters.
    An op allocates its scratch tensors at the first call of each shape
    (filled with 0xff bytes, so a read of what no kernel wrote shows as
    NaN) and keeps them; launch a shape once before capturing it in a CUDA
    graph, as with any PyTorch code that allocates at first use.

    `serial = True` launches every step of an op after the one before it,
    `overlap` or not: the reference a run side by side must equal.
    """

    def __init__(self, manifest_path):
        self.path = manifest_path
        self.info = manifests.read(manifest_path)
        self.manifest = self.info.raw
        self.name = f"{self.info.entry}[{self.info.schedule}]"
        # Its name in a bench table: the schedule's, and the image's where
        # that says more, so two builds of one schedule stay apart.
        schedule = self.info.schedule.replace(".yaml", "")
        image = os.path.splitext(os.path.basename(self.info.image))[0]
        self.tag = schedule if image in schedule else f"{schedule}[{image}]"
        self.serial = False
        params = self.info.signature.params
        self._nargs = len(params)
        self._views = tuple(i for i, p in enumerate(params) if p.is_view)
        self._plans = {}  # by the tensor arguments' shapes
        self._last = None  # the plan of the last call: tried first
        self._image = None

    @property
    def is_op(self):
        """Whether it launches several kernels (its manifest has `launches`)."""
        return self.info.is_op

    @property
    def entries(self):
        """The entry point of each launch, in order."""
        return [k.entry for k in self.info.kernels]

    @property
    def side_stream(self):
        """The high-priority torch stream `overlap` launches run on (None
        before the first call, and for kernels that never overlap)."""
        return self._image.side_stream if self._image else None

    def __repr__(self):
        return f"<kiln.Kernel {self.name} from {self.path}>"

    def __call__(self, *args):
        if len(args) != self._nargs:
            raise TypeError(f"{self.name} takes {self._nargs} arguments, got {len(args)}")
        plan = self._last
        try:
            bound = plan is not None and plan.bind(args)
        except AttributeError:  # not a tensor: _plan's checks say so
            bound = False
        if not bound:
            plan = self._plan(args)
        plan.launch(self.serial)

    def launch_one(self, index, *args):
        """Only the op's launch `index`, on the scratch a full call of this
        shape left (for timing an op's kernels one by one)."""
        if len(args) != self._nargs:
            raise TypeError(f"{self.name} takes {self._nargs} arguments, got {len(args)}")
        self._plan(args).launch_one(index)

    def _plan(self, args):
        """The plan for these arguments' shapes, bound to them: built at the
        first call of each shape (checking every argument) and kept."""
        try:
            plan = self._plans.get(tuple(args[i].shape for i in self._views))
        except AttributeError:  # not a tensor: the new plan's checks say so
            plan = None
        if plan is None:
            plan = self._new_plan(args)
            self._plans[tuple(args[i].shape for i in self._views)] = plan
        plan.bind(args)
        self._last = plan
        return plan

    def _new_plan(self, args):
        try:
            from . import launch
        except ImportError as e:
            raise KilnError(f"calling {self.name} needs PyTorch ({e})") from None
        if self._image is None:
            import torch
            if not torch.cuda.is_available():
                raise KilnError(f"calling {self.name} needs a CUDA GPU; torch sees none")
            first = next((args[i] for i in self._views if isinstance(args[i], torch.Tensor)
                          and args[i].is_cuda), None)
            device = first.get_device() if first is not None else torch.cuda.current_device()
            self._image = launch.Image(self.info, device)
        return launch.Plan(self.name, self.info, self._image, args)
