"""kiln.run_cpu: run a schedule on the CPU backend, from numpy arrays.

The CPU backend JIT-compiles the same tile IR every GPU schedule lowers, so
it is the reference a schedule's results are checked against, on any
machine. run_cpu drives it through the CLI (`kiln run --inputs --save
--json`): the given arrays go in as .npy files, every parameter comes back
as an array (with the inout tensors as they were before the run and the
reference's outputs), and the checks come back as records. A failed check is
a result, not an exception: the caller decides what tolerance means to it.
"""
import json
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import binary, npy
from .compiler import check_consts, const_flags
from .errors import KilnError


@dataclass(frozen=True)
class Check:
    """One output compared with the op's golden or float64 reference (or,
    named "NAME vs --expect", with an array given in `expect`)."""
    name: str
    rel_error: float  # ||x - ref|| / ||ref||; -1 where that is not finite
    tolerance: float
    ok: bool
    nan: bool         # a NaN or Inf anywhere in the output


@dataclass(frozen=True)
class CpuRun:
    """What a run left, as `kiln run --save` writes it: `outputs` has every
    parameter (inputs as used, outputs and inout tensors after the run,
    scalars as 0-d float64 / int64), `before` each inout tensor as it was
    before the run, `references` each output's reference values; then the
    checks, whether all passed, and the JSON report as kiln printed it."""
    outputs: dict
    before: dict
    references: dict
    checks: list
    ok: bool
    report: dict


def run_cpu(tile, schedule, inputs=None, dims=None, consts=None, seed=None, ranges=None, *,
            expect=None, kiln_bin=None):
    """Runs op source `tile` with the tiling of `schedule` on the CPU.

    inputs: {param: array}; parameters left out get random values (floats
        normal, integers from `ranges` or the source's `range`). A tensor's
        array must have its parameter's dtype (bf16 as ml_dtypes.bfloat16
        or uint16 bit patterns); a scalar's is any 0-d float or integer
        array, or a number. An inout tensor's `NAME.in` entry wins over NAME.
    dims: {name: int} runtime dims (--dims); consts: {name: int} (-D);
    seed: the random seed; ranges: {param: (lo, hi)}: integers from [lo, hi).
    expect: {output: array}: also check these outputs against these arrays.

    Returns a CpuRun. Raises KilnError with kiln's message (naming the file,
    parameter or dim) when the inputs are bad or the run fails.
    """
    kiln = binary.find(kiln_bin)
    if kiln is None:
        raise KilnError(f"run_cpu needs the kiln binary ({binary.searched()})")
    with tempfile.TemporaryDirectory(prefix="kiln-run-") as tmp:
        given, saved = Path(tmp) / "inputs", Path(tmp) / "outputs"
        given.mkdir()
        npy.write(given, inputs or {})
        command = [kiln, "run", str(tile), "-s", str(schedule), "--inputs", str(given),
                   "--save", str(saved), "--json", *const_flags(check_consts(consts))]
        if expect:
            (Path(tmp) / "expect").mkdir()
            npy.write(Path(tmp) / "expect", expect)
            command += ["--expect", str(Path(tmp) / "expect")]
        if dims:
            command += ["--dims", ",".join(f"{k}={int(v)}" for k, v in dims.items())]
        for name, (lo, hi) in (ranges or {}).items():
            command += ["--range", f"{name}={lo}:{hi}"]
        if seed is not None:
            command += ["--seed", str(int(seed))]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode not in (0, 1):  # 1: a check failed, the outputs are saved
            raise KilnError(f"{' '.join(command)} failed (exit {done.returncode}):\n"
                            f"{done.stderr.rstrip()}")
        try:
            report = json.loads(done.stdout)
        except json.JSONDecodeError:
            raise KilnError(f"{' '.join(command)} printed no JSON report:\n{done.stdout}"
                            f"{done.stderr}") from None
        files = npy.read(saved)
    checks = [Check(c["name"], c["rel_error"], c["tolerance"], c["ok"], c["nan"])
              for c in report["checks"]]
    kinds = {"": {}, ".in": {}, ".ref": {}}
    for stem, array in files.items():
        name, dot, kind = stem.partition(".")
        kinds[dot + kind][name] = array
    return CpuRun(kinds[""], kinds[".in"], kinds[".ref"], checks, report["ok"], report)
