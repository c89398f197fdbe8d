"""kiln.compile and its cache, with a fake kiln binary (conftest.FAKE_KILN)."""
import os
import shutil

import pytest
from conftest import REPO, needs_kiln, real_kiln

import kiln
from kiln import binary, cache


def compiles(calls):
    return [c for c in calls() if c[0] == "compile"]


def test_key_covers_every_input():
    base = cache.input_key(b"src", b"sched", "s.yaml", {"K": 64, "V": 32})
    assert base == cache.input_key(b"src", b"sched", "s.yaml", {"V": 32, "K": 64})
    for other in [cache.input_key(b"src2", b"sched", "s.yaml", {"K": 64, "V": 32}),
                  cache.input_key(b"src", b"sched2", "s.yaml", {"K": 64, "V": 32}),
                  cache.input_key(b"src", b"sched", "t.yaml", {"K": 64, "V": 32}),
                  cache.input_key(b"src", b"sched", "s.yaml", {"K": 64, "V": 64}),
                  cache.input_key(b"src", b"sched", "s.yaml", {"K": 64}),
                  cache.input_key(b"srcsched", b"", "s.yaml", {"K": 64, "V": 32})]:
        assert other != base


def test_compile_runs_kiln_once_per_input(tmp_path, fake_kiln, op_files):
    kiln_bin, calls = fake_kiln
    tile, schedule = op_files
    k = kiln.compile(tile, schedule, {"V": 32, "K": 64}, cache_dir=tmp_path / "c",
                     kiln_bin=kiln_bin)
    [argv] = compiles(calls)
    assert argv[:5] == ["compile", str(tile), "-s", str(schedule), "--emit"]
    assert argv[-4:] == ["-D", "K=64", "-D", "V=32"]  # sorted: one command line per input
    key = cache.input_key(tile.read_bytes(), schedule.read_bytes(), schedule.name,
                          {"K": 64, "V": 32})
    entry = tmp_path / "c" / key / binary.compiler_id(kiln_bin)
    assert sorted(os.listdir(entry)) == ["toy_sm_90a.cubin", "toy_sm_90a.json"]
    assert k.path == entry / "toy_sm_90a.json" and k.tag == "toy_sm_90a"
    assert k.manifest["consts"] == {"K": 64, "V": 32}
    # The same inputs hit the cache; any change compiles again.
    kiln.compile(tile, schedule, {"K": 64, "V": 32}, cache_dir=tmp_path / "c", kiln_bin=kiln_bin)
    assert len(compiles(calls)) == 1
    kiln.compile(tile, schedule, {"K": 64}, cache_dir=tmp_path / "c", kiln_bin=kiln_bin)
    schedule.write_text(schedule.read_text() + "warps: 4\n")
    kiln.compile(tile, schedule, {"K": 64}, cache_dir=tmp_path / "c", kiln_bin=kiln_bin)
    assert len(compiles(calls)) == 3
    assert not list((tmp_path / "c").glob("*/.build-*"))  # no leftovers


def test_another_compiler_builds_its_own_entry(tmp_path, fake_kiln, op_files):
    kiln_bin, calls = fake_kiln
    kiln.compile(*op_files, cache_dir=tmp_path, kiln_bin=kiln_bin)
    with open(kiln_bin, "a") as f:
        f.write("# rebuilt\n")
    kiln.compile(*op_files, cache_dir=tmp_path, kiln_bin=kiln_bin)
    assert len(compiles(calls)) == 2
    [key] = [d for d in tmp_path.iterdir() if len(d.name) == 64]
    assert len(list(key.iterdir())) == 2


def test_binary_from_env_and_cache_dir_from_env(tmp_path, fake_kiln, op_files, monkeypatch):
    kiln_bin, calls = fake_kiln
    monkeypatch.setenv("KILN_BIN", str(kiln_bin))
    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path / "env-cache"))
    k = kiln.compile(*op_files)
    assert len(compiles(calls)) == 1 and str(k.path).startswith(str(tmp_path / "env-cache"))
    monkeypatch.setenv("KILN_BIN", str(tmp_path / "typo"))
    with pytest.raises(kiln.KilnError, match="typo' \\(from \\$KILN_BIN\\) is not an executable"):
        kiln.compile(*op_files)


def test_without_a_binary_a_cache_entry_is_used(tmp_path, fake_kiln, op_files, no_kiln):
    kiln_bin, _ = fake_kiln
    old = kiln.compile(*op_files, cache_dir=tmp_path / "c", kiln_bin=kiln_bin)
    # A second compiler's entry, built later: the one taken without a binary.
    other = old.path.parent.parent / ("f" * 64)
    shutil.copytree(old.path.parent, other)
    os.utime(old.path, (1, 1))
    k = kiln.compile(*op_files, cache_dir=tmp_path / "c")
    assert k.path == other / old.path.name


def test_without_a_binary_or_entry_the_error_says_what_is_missing(tmp_path, op_files, no_kiln):
    with pytest.raises(kiln.KilnError) as e:
        kiln.compile(*op_files, {"K": 64}, cache_dir=tmp_path / "c")
    message = str(e.value)
    assert "cannot compile" in message and "toy_sm_90a.yaml and -D K=64" in message
    assert "no kiln binary ($KILN_BIN unset, no kiln on PATH" in message
    assert "no cache entry" in message and str(tmp_path / "c") in message


def test_compile_errors_carry_kilns_diagnostics(tmp_path, fake_kiln, op_files):
    kiln_bin, _ = fake_kiln
    tile, schedule = op_files
    tile.write_text("error here\n")
    with pytest.raises(kiln.CompileError) as e:
        kiln.compile(tile, schedule, cache_dir=tmp_path / "c", kiln_bin=kiln_bin)
    assert e.value.returncode == 1
    assert e.value.stderr == f"{tile}:1:5: error: unknown token '@'\n"
    assert f"{tile}:1:5: error" in str(e.value) and e.value.command[1] == "compile"
    assert not [p for p in (tmp_path / "c").rglob("*") if p.is_file()]  # nothing cached


def test_consts_are_integers(tmp_path, fake_kiln, op_files):
    kiln_bin, calls = fake_kiln
    kiln.compile(*op_files, {"USE_QK_L2NORM": False}, cache_dir=tmp_path, kiln_bin=kiln_bin)
    assert compiles(calls)[0][-2:] == ["-D", "USE_QK_L2NORM=0"]
    with pytest.raises(TypeError, match="const K must be an integer, got 1.5"):
        kiln.compile(*op_files, {"K": 1.5}, cache_dir=tmp_path, kiln_bin=kiln_bin)
    with pytest.raises(TypeError, match="not an identifier"):
        kiln.compile(*op_files, {"K=1": 2}, cache_dir=tmp_path, kiln_bin=kiln_bin)


DECODE = REPO / "ops" / "gdn" / "decode.tile"
DECODE_TMA = REPO / "ops" / "gdn" / "schedules" / "decode_sm_90a_tma.yaml"


@needs_kiln
def test_real_kiln_builds_a_loadable_kernel(tmp_path):
    try:
        k = kiln.compile(DECODE, DECODE_TMA, {"K": 64, "V": 32}, cache_dir=tmp_path,
                         kiln_bin=real_kiln())
    except kiln.CompileError as e:
        if "ptxas not found" in e.stderr:
            pytest.skip("kiln finds no ptxas here")
        raise
    assert k.entries == ["gdn_decode"] and k.tag == "decode_sm_90a_tma"
    assert k.manifest["consts"]["K"] == 64 and k.info.signature.tensor_maps
    assert k.path.with_suffix(".cubin").stat().st_size > 0


@needs_kiln
def test_real_compile_errors_name_the_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(DECODE_TMA.read_text().replace("target: sm_90a", "target: sm_77"))
    with pytest.raises(kiln.CompileError) as e:
        kiln.compile(DECODE, bad, cache_dir=tmp_path, kiln_bin=real_kiln())
    assert f"{bad}:" in e.value.stderr and "error: unknown target 'sm_77'" in e.value.stderr
