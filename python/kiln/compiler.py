"""kiln.compile: a source and schedule to a callable kernel, through the CLI
and the cache.

With a kiln binary at hand, compile() runs `kiln compile --emit cubin` on a
cache miss and stores the cubin and manifest; without one (a GPU machine),
it takes a cache entry for the same inputs built by any compiler. So a
script calls kiln.compile() the same way on the build host and on the GPU
machine, and the cache directory is what travels between them.
"""
import operator
import re
import subprocess
from pathlib import Path

from . import binary, cache
from .errors import CompileError, KilnError
from .kernel import load


ELEMENT_TYPES = ("f32", "bf16", "f16", "f8e4m3", "f64", "i8", "i32", "i64")


def check_consts(consts):
    """{name: int or element type} from the consts given, checked (kiln's -D
    takes integers, True and False being 1 and 0 for flags like
    USE_QK_L2NORM, and element type names for dtype consts)."""
    out = {}
    for name, value in (consts or {}).items():
        if not isinstance(name, str) or not name.isidentifier():
            raise TypeError(f"const name {name!r} is not an identifier")
        if isinstance(value, str):
            if value not in ELEMENT_TYPES:
                raise TypeError(f"const {name} must be an integer or one of "
                                f"{', '.join(ELEMENT_TYPES)}, got {value!r}")
            out[name] = value
            continue
        try:
            out[name] = operator.index(value)
        except TypeError:
            raise TypeError(f"const {name} must be an integer, got {value!r}") from None
    return out


def const_flags(consts):
    """kiln's -D flags for {name: int}, in sorted order."""
    return [flag for name in sorted(consts) for flag in ("-D", f"{name}={consts[name]}")]


def compile(tile, schedule, consts=None, *, cache_dir=None, kiln_bin=None):  # noqa: A001
    """The kernel (or op) schedule `schedule` makes of source `tile`, built
    for its GPU target with `consts` ({name: int}, like -D) overriding the
    source's consts.

    Cached under `cache_dir` (default $KILN_CACHE_DIR or ~/.cache/kiln) by
    the inputs' hash and the compiler's. Raises CompileError (carrying the
    compiler's file:line:col diagnostics) when kiln rejects the inputs, and
    KilnError when there is neither a kiln binary (kiln_bin, $KILN_BIN,
    PATH, build/bin/kiln of this checkout) nor a cache entry to use.
    """
    tile, schedule = Path(tile), Path(schedule)
    consts = check_consts(consts)
    key = cache.input_key(tile.read_bytes(), schedule.read_bytes(), schedule.name, consts)
    what = (f"compile {tile} with {schedule.name}"
            f"{' and ' + ' '.join(const_flags(consts)) if consts else ''}")

    def build(kiln, out):
        # out/NAME.cubin and out/NAME.json, NAME the schedule's (so a bench
        # table's tag is the schedule's name).
        cubin = out / f"{schedule.stem}.cubin"
        _run(kiln, [str(tile), "-s", str(schedule), "--emit", "cubin", "-o", str(cubin)], consts,
             [cubin, cubin.with_suffix(".json")])

    return load(_cached(key, what, build, cache_dir, kiln_bin))


def _cached(key, what, build, cache_dir, kiln_bin):
    """The manifest of cache entry `key`: with a kiln binary at hand, its
    compiler's entry, made by build(kiln, directory) on a miss; without one
    (a GPU machine), the newest entry any compiler made. `what` says what
    could not be done when neither is there."""
    root = Path(cache_dir) if cache_dir is not None else cache.default_dir()
    kiln = binary.find(kiln_bin)
    if kiln is None:
        found = cache.lookup(root, key)
        if found is None:
            raise KilnError(
                f"cannot {what}: no kiln binary ({binary.searched()}) and no cache entry "
                f"{key[:16]}... under {root}; compile it where kiln is built and copy that "
                "cache directory here (or point $KILN_CACHE_DIR at it)")
        return found
    compiler = binary.compiler_id(kiln)
    found = cache.lookup(root, key, compiler)
    if found is None:
        found = cache.store(root, key, compiler, lambda out: build(kiln, out))
    return found


def _run(kiln, args, consts, wants):
    """Runs `kiln compile ARGS -D...`; CompileError with its diagnostics
    when it fails, KilnError when it did not write the files `wants`."""
    command = [kiln, "compile", *args, *const_flags(consts)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise CompileError(command, done.returncode, done.stderr)
    missing = [w.name for w in wants if not w.is_file()]
    if missing:
        raise KilnError(f"{' '.join(command)} wrote no {' and '.join(missing)}")


def select(selection, consts=None, *, cache_dir=None, kiln_bin=None):
    """The op a selection file (docs/schedule.md, "Selections") makes: every
    schedule it names built for its GPU target, as one kiln.Selected that
    runs the schedule each call's shape picks. Cached as compile() caches,
    by the selection's bytes, its source's and those of every schedule
    beside that source (a change to any of them builds it again), the
    consts and the compiler."""
    selection = Path(selection)
    consts = check_consts(consts)
    text = selection.read_bytes()
    found = re.search(rb"^source:[ \t]*(\S+)", text, re.M)
    if not found:
        raise KilnError(f"{selection}: a selection needs a `source:` line")
    source = selection.parent / found.group(1).decode()
    if not source.is_file():
        raise KilnError(f"{selection}: no source '{source}'")
    schedules = b"".join(p.name.encode() + b"\0" + p.read_bytes() + b"\0"
                         for p in sorted((source.parent / "schedules").glob("*.yaml")))
    key = cache.input_key(source.read_bytes(), text + b"\0" + schedules,
                          "select:" + selection.name, consts)

    def build(kiln, out):
        # out/selection.json, each schedule's cubin and manifest beside it.
        manifest = out / cache.SELECTION
        _run(kiln, ["--select", str(selection), "--emit", "cubin", "-o", str(manifest)], consts,
             [manifest])

    return load(_cached(key, f"build selection {selection}", build, cache_dir, kiln_bin))
