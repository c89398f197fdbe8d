"""The compile cache: cubins and manifests by what they were built from.

An entry is CACHE/<input hash>/<compiler id>/ holding NAME.cubin and
NAME.json (a selection's: each of its schedules so, and selection.json). The input hash covers everything `kiln compile` reads: the
source's bytes, the schedule's bytes and file name (the manifest records
it), and the consts given with -D. The compiler id (binary.compiler_id)
sits one level down, so a machine without the binary (the GPU machines
have no LLVM) can still find an entry for its inputs, built by whichever
compiler made it: compile on the build host, copy the cache directory over.

Entries are built in a temporary directory beside their final place and
renamed into it, so a reader never sees half an entry, and two processes
compiling the same thing both end up with one complete entry.
"""
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path


def default_dir():
    """$KILN_CACHE_DIR, else ~/.cache/kiln."""
    return Path(os.environ.get("KILN_CACHE_DIR") or Path.home() / ".cache" / "kiln")


def input_key(source, schedule, schedule_name, consts):
    """sha256 (hex) of a compile's inputs: source and schedule bytes, the
    schedule's file name and the consts ({name: int}, in sorted order)."""
    h = hashlib.sha256()
    parts = (b"kiln-cache-1", source, schedule, schedule_name.encode(),
             json.dumps(sorted(consts.items())).encode())
    for part in parts:  # length-prefixed: no two inputs hash the same bytes
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


SELECTION = "selection.json"  # a selection's entry: this, beside each schedule's manifest


def manifest_in(entry):
    """The manifest in entry directory `entry` (a selection's entry: its
    selection manifest), or None."""
    found = sorted(entry.glob("*.json")) if entry.is_dir() else []
    if entry.is_dir() and (entry / SELECTION).is_file():
        return entry / SELECTION
    return found[0] if found else None


def lookup(root, key, compiler=None):
    """The manifest of entry `key` built by `compiler`, or with no compiler
    given the most recently built one of any compiler; None if none."""
    if compiler:
        return manifest_in(Path(root) / key / compiler)
    entries = [m for d in (Path(root) / key).glob("[!.]*") if (m := manifest_in(d))]
    return max(entries, key=lambda m: m.stat().st_mtime, default=None)


def store(root, key, compiler, build):
    """Makes entry `key` / `compiler` by calling build(directory), which
    writes the files into a fresh directory; returns the entry's manifest.
    If another process stored the entry meanwhile, its copy is kept."""
    parent = Path(root) / key
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=parent))
    try:
        build(tmp)
        try:
            os.rename(tmp, parent / compiler)
        except OSError:
            if manifest_in(parent / compiler) is None:
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return manifest_in(parent / compiler)
