"""Shared fixtures: the package from this checkout, a fake kiln binary that
speaks the CLI's contract (so the cache and run_cpu's plumbing are tested
without LLVM), and the real binary where one is built."""
import json
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))  # the checkout's package, installed or not

import samples  # noqa: E402

FAKE_KILN = r'''#!{python}
"""A stand-in for kiln: compile writes NAME.cubin and a manifest; run copies
its inputs to --save, adds an output `o` and its reference, checks `o`
against --expect and prints a JSON report. A source
containing `error`, `fail` or `bad` makes it fail the way kiln does."""
import json, shutil, sys
from pathlib import Path
import numpy as np

argv = sys.argv[1:]
with open({log!r}, "a") as f:
    f.write(json.dumps(argv) + "\n")
opt = lambda name: argv[argv.index(name) + 1] if name in argv else None
source = Path(argv[1]).read_text() if len(argv) > 1 and Path(argv[1]).is_file() else ""
if argv[0] == "compile":
    if "error" in source:
        sys.exit(sys.stderr.write(argv[1] + ":1:5: error: unknown token '@'\n") and 1)
    out = Path(opt("-o"))
    out.write_bytes(b"cubin of " + source.encode())
    manifest = json.loads({manifest!r})
    manifest.update(image=out.name, schedule=Path(opt("-s")).name,
                    consts={{d.split("=")[0]: int(d.split("=")[1])
                             for d, flag in zip(argv[1:], argv) if flag == "-D"}})
    out.with_suffix(".json").write_text(json.dumps(manifest))
elif argv[0] == "run":
    if "bad" in source:
        sys.exit(sys.stderr.write("kiln: error: q.npy: dim 1 is 3, expected 4\n") and 2)
    save = Path(opt("--save"))
    save.mkdir()
    for f in Path(opt("--inputs")).glob("*.npy"):
        shutil.copy(f, save / f.name)
    o = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.save(save / "o.npy", o)
    np.save(save / "o.ref.npy", o.astype(np.float64))
    ok = "fail" not in source
    checks = [{{"name": "o", "rel_error": 1e-7 if ok else 0.5, "tolerance": 1e-5, "ok": ok,
               "nan": False}}]
    if opt("--expect"):
        same = np.array_equal(np.load(Path(opt("--expect")) / "o.npy"), o)
        checks.append({{"name": "o vs --expect", "rel_error": 0.0 if same else 1.0,
                       "tolerance": 1e-5, "ok": same, "nan": False}})
    ok = all(c["ok"] for c in checks)
    print(json.dumps({{"tile": argv[1], "schedule": opt("-s"), "target": "cpu", "ok": ok,
                      "checks": checks}}))
    sys.exit(0 if ok else 1)
'''


@pytest.fixture
def fake_kiln(tmp_path):
    """(path of a fake kiln binary, function returning the argv lists it ran with)."""
    log = tmp_path / "fake_kiln.log"
    path = tmp_path / "bin" / "kiln"
    path.parent.mkdir()
    path.write_text(FAKE_KILN.format(python=sys.executable, log=str(log),
                                     manifest=json.dumps(samples.single())))
    path.chmod(0o755)

    def calls():
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return path, calls


@pytest.fixture
def no_kiln(monkeypatch, tmp_path):
    """No kiln binary anywhere find() looks."""
    monkeypatch.delenv("KILN_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr("kiln.binary.REPO_BINARY", tmp_path / "nowhere" / "kiln")


@pytest.fixture
def op_files(tmp_path):
    """A source and schedule to compile (their contents only matter to the cache)."""
    tile, schedule = tmp_path / "toy.tile", tmp_path / "toy_sm_90a.yaml"
    tile.write_text("kernel toy(x: in f32[T]) grid (t: T) {}\n")
    schedule.write_text("target: sm_90a\nop: toy\n")
    return tile, schedule


def real_kiln():
    """The kiln binary built in this checkout ($KILN_BIN, else build/bin/kiln), or None."""
    path = os.environ.get("KILN_BIN") or str(REPO / "build" / "bin" / "kiln")
    return path if os.access(path, os.X_OK) else None


# Tests that drive the kiln binary built in this checkout (ctest sets $KILN_BIN).
needs_kiln = pytest.mark.skipif(real_kiln() is None, reason="needs build/bin/kiln or $KILN_BIN")
