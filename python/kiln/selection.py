"""One call, the schedule its shape runs: selection manifests.

`kiln compile --select SEL.yaml --emit cubin -o DIR/NAME.json` (or
kiln.select) builds every schedule a selection file names beside NAME.json
and lists them as rules: the first whose conditions all hold on the call's
dims and the GPU's multiprocessor count (`sms`) runs. `evaluate` and
`choose` are the twins of backends/runtime/Selection.cpp's
evalSelectionCondition and chooseSelectionRule, with the same messages.
"""
import os

from . import binding
from .errors import KilnError

_OPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "<": lambda a, b: int(a < b),
    "<=": lambda a, b: int(a <= b),
    ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b),
}


def _div(a, b):
    """C++'s integer division: toward zero."""
    if b == 0:
        raise ValueError("division by zero")
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _fits(v, what):
    """v, where it fits in 64 bits (binding.fits_int64)."""
    if not binding.fits_int64(v):
        raise ValueError(f"{what} does not fit in 64 bits")
    return v


def evaluate(rpn, dims, sms):
    """The value of a postfix condition (nonzero holds); ValueError on an
    unknown name, a division by zero, a value past 64 bits or a malformed
    list."""
    stack = []
    for t in rpn:
        if t[:1].isdigit():
            stack.append(_fits(int(t), f"the number {t}"))
        elif t[:1].isalpha() or t[:1] == "_":
            if t in dims:
                stack.append(dims[t])
            elif t == "sms":
                stack.append(sms)
            else:
                raise ValueError(f"unknown name '{t}'")
        else:
            if len(stack) < 2:
                raise ValueError(f"operator '{t}' lacks operands")
            b, a = stack.pop(), stack.pop()
            if t == "/":
                r = _div(a, b)
            elif t in _OPS:
                r = _OPS[t](a, b)
            else:
                raise ValueError(f"unknown operator '{t}'")
            stack.append(_fits(r, f"{a} {t} {b}"))
    if len(stack) != 1:
        raise ValueError(f"a condition leaves {len(stack)} values")
    return stack[0]


def choose(rules, dims, sms):
    """The index of the first rule (dicts as in the manifest) whose
    conditions all hold."""
    for i, rule in enumerate(rules):
        holds = True
        for c in rule["when"]:
            try:
                v = evaluate(c["rpn"], dims, sms)
            except ValueError as e:
                raise KilnError(f"rule {i + 1} ({rule['schedule']}), condition '{c['text']}': "
                                f"{e}") from None
            if not v:
                holds = False
                break
        if holds:
            return i
    raise KilnError("no rule of the selection holds (its last rule should have no conditions)")


def is_selection(raw):
    return isinstance(raw, dict) and "rules" in raw


class Selected:
    """A selection manifest as a callable: the same arguments as each of its
    kernels (they share one signature); each shape runs the schedule its
    rules pick on this GPU, decided once per shape of the tensor arguments.
    `pick(*args)` says which without launching."""

    def __init__(self, path, raw):
        from .kernel import Kernel
        self.path = path
        self.selection = raw
        self.rules = raw["rules"]
        here = os.path.dirname(os.path.abspath(path))
        self.kernels = [Kernel(os.path.join(here, r["manifest"])) for r in self.rules]
        first = self.kernels[0]
        # What every rule's kernel shares (the signature, dtype params), for
        # code written against a Kernel: the first rule's.
        self.info, self.manifest = first.info, first.manifest
        self.name = f"{raw['op']}[{os.path.basename(path)}]"
        self.tag = os.path.splitext(os.path.basename(path))[0]
        self._views = tuple(i for i, p in enumerate(self.info.signature.params) if p.is_view)
        self._chosen = {}  # by the tensor arguments' shapes
        self.serial = False

    @property
    def is_op(self):
        """Whether it is one op of several launches: which depends on the
        shape here, so no (time it as a whole)."""
        return False

    def __repr__(self):
        return f"<kiln.Selected {self.name}: {', '.join(r['schedule'] for r in self.rules)}>"

    @staticmethod
    def _sms(device):
        import torch
        if device is None:
            device = torch.cuda.current_device()
        return torch.cuda.get_device_properties(device).multi_processor_count

    def pick(self, *args, sms=None):
        """The Kernel these arguments' shapes run on the device of the first
        CUDA tensor among them (or on a GPU of `sms` multiprocessors)."""
        sig = self.info.signature
        if len(args) != len(sig.params):
            raise TypeError(f"{self.name} takes {len(sig.params)} arguments, got {len(args)}")
        for p, a in zip(sig.params, args):
            if p.is_view and not hasattr(a, "shape"):
                raise TypeError(f"{self.name}: argument '{p.name}' must be a CUDA tensor, "
                                f"got {type(a).__name__}")
        device = next((args[i].get_device() for i in self._views
                       if getattr(args[i], "is_cuda", False)), None)
        key = (sms or device, tuple(tuple(args[i].shape) for i in self._views))
        kernel = self._chosen.get(key)
        if kernel is None:
            # Shapes only: the kernel picked checks dtypes (and the rest) when called.
            specs = [(p.dtype, tuple(a.shape)) if p.is_view else None
                     for p, a in zip(sig.params, args)]
            dims = binding.bind(self.name, sig.params, sig.dims, specs)
            kernel = self.kernels[choose(self.rules, dims, sms or self._sms(device))]
            self._chosen[key] = kernel
        return kernel

    def __call__(self, *args):
        kernel = self.pick(*args)
        kernel.serial = self.serial
        kernel(*args)
