"""Finding the kiln binary, and naming the compiler a cache entry came from.

The binary is looked for where a user would put it, in this order: the
`kiln_bin` argument, $KILN_BIN, `kiln` on PATH, then build/bin/kiln of the
source tree this package sits in (an editable install or PYTHONPATH=python
in a checkout). A path named explicitly (argument or $KILN_BIN) must exist:
silently falling back to another compiler would hide a typo.

The compiler id is the sha256 of the binary's bytes: two builds that differ
in any way get separate cache entries. Hashing a binary of a few hundred MB
takes a moment, so it is memoised per process by path, size and mtime.
"""
import hashlib
import os
import shutil
from pathlib import Path

from .errors import KilnError

REPO_BINARY = Path(__file__).resolve().parents[2] / "build" / "bin" / "kiln"
_ids = {}


def find(kiln_bin=None):
    """The kiln binary's path, or None when there is none to find."""
    for given, what in ((kiln_bin, "the kiln_bin argument"),
                        (os.environ.get("KILN_BIN"), "$KILN_BIN")):
        if given:
            if not os.access(given, os.X_OK) or os.path.isdir(given):
                raise KilnError(f"kiln binary '{given}' (from {what}) is not an executable file")
            return str(given)
    on_path = shutil.which("kiln")
    if on_path:
        return on_path
    if os.access(REPO_BINARY, os.X_OK):
        return str(REPO_BINARY)
    return None


def searched():
    """Where find() looked, for an error message."""
    return f"$KILN_BIN unset, no kiln on PATH, no {REPO_BINARY}"


def compiler_id(path):
    """sha256 of the binary at `path` (hex)."""
    st = os.stat(path)
    key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
    if key not in _ids:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        _ids[key] = h.hexdigest()
    return _ids[key]
