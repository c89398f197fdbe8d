"""Selections (docs/schedule.md, "Selections"): the conditions' evaluator,
and each bundled selection against the measured times it was written
from: at every shape of that bench run it picks a schedule within 3% of the
fastest of its schedules measured there."""
import json
import subprocess

import pytest

from conftest import REPO, needs_kiln, real_kiln
from kiln import KilnError, load
from kiln.selection import Selected, choose, evaluate

RESULTS = REPO / "bench" / "results"
SELECT = REPO / "ops" / "gdn" / "select"
# Each bundled selection (op/name), and the bench run (and time key: what
# follows the schedule's name, consts included) it was written from.
BUNDLED = [("gdn/prefill_sm_90a", "prefill_tr_h200_2026-11-30.json", "_graph_ms"),
           ("gdn/decode_sm_90a", "decode_h200_2026-11-28_tma.json", "_graph_us"),
           ("gdn/decode_sm_90a_bf16", "fi_h200_2026-11-28_decode.json", "_graph_us"),
           ("gdn/decode_sm_90a_f8", "decode_f8_h200_2026-11-29.json", "_graph_us"),
           ("gdn/mtp_sm_90a_f8", "mtp_f8_h200_2026-11-29b.json", "_us"),
           ("gdn/mtp_sm_90a", "mtp_chunked_h200_2026-11-29.json", "_us"),
           ("gemm/gemm_sm_90a", "gemm_h200_2026-11-28_tiles.json", "_ms"),
           ("gemm/gemm_nt_sm_90a", "gemm_h200_2026-11-28_forms.json", "_ms"),
           ("gemm/gemm_bias_sm_90a", "gemm_h200_2026-11-28_forms.json", "@ACT=2_ms")]


def test_evaluate_follows_cpp_rules():
    dims = {"N": 4, "HV": 32}
    assert evaluate(["N", "HV", "*", "128", ">="], dims, 132) == 1
    assert evaluate(["sms", "N", "2", "*", "/"], dims, 132) == 16
    assert evaluate(["0", "7", "-", "2", "/"], dims, 132) == -3  # toward zero, as C++
    assert evaluate(["N", "1", "=="], dims, 132) == 0
    with pytest.raises(ValueError, match="unknown name 'B'"):
        evaluate(["B", "1", "=="], dims, 132)
    with pytest.raises(ValueError, match="division by zero"):
        evaluate(["N", "0", "/"], dims, 132)
    # C++ evaluates in 64 bits: past them both runtimes refuse, never wrap.
    big = {"M": 1 << 40, "N": 1 << 30}
    with pytest.raises(ValueError, match="1099511627776 \\* 1073741824 does not fit in 64 bits"):
        evaluate(["M", "N", "*", "1", ">="], big, 132)
    with pytest.raises(ValueError, match="the number 9223372036854775808 does not fit"):
        evaluate(["9223372036854775808", "1", ">="], dims, 132)


def test_choose_takes_the_first_rule_that_holds():
    rules = [{"schedule": "a", "when": [{"text": "N == 1", "rpn": ["N", "1", "=="]},
                                        {"text": "HV >= 32", "rpn": ["HV", "32", ">="]}]},
             {"schedule": "b", "when": []}]
    assert choose(rules, {"N": 1, "HV": 32}, 132) == 0
    assert choose(rules, {"N": 1, "HV": 8}, 132) == 1
    assert choose(rules, {"N": 2, "HV": 32}, 132) == 1
    with pytest.raises(KilnError, match=r"rule 1 \(a\), condition 'N == 1': unknown name 'N'"):
        choose(rules, {"HV": 8}, 132)


def build(name, tmp_path):
    op, name = name.split("/")
    out = tmp_path / f"{name}.json"
    select = REPO / "ops" / op / "select" / f"{name}.yaml"
    subprocess.run([str(real_kiln()), "compile", "--select", str(select),
                    "--emit", "ptx", "-o", str(out)], check=True, capture_output=True)
    return out


@needs_kiln
@pytest.mark.parametrize("name,measured,key", BUNDLED)
def test_bundled_selection_picks_the_fastest_measured(name, measured, key, tmp_path):
    rules = json.loads(build(name, tmp_path).read_text())["rules"]
    schedules = {r["schedule"] for r in rules}
    bench = json.loads((RESULTS / measured).read_text())
    assert bench["rows"], "no measured shapes"
    for row in bench["rows"]:
        dims = {k: v for k, v in row.items() if k.isupper() and isinstance(v, int)}
        picked = rules[choose(rules, dims, 132)]["schedule"]  # the H200's 132 SMs
        times = {s: row[s + key] for s in schedules}
        best = min(times.values())
        assert times[picked] <= 1.03 * best, (
            f"{name} at {dims}: picks {picked} ({times[picked]}), "
            f"fastest {min(times, key=times.get)} ({best})")


@needs_kiln
def test_load_gives_a_selected_op(tmp_path):
    sel = load(build("gdn/prefill_sm_90a", tmp_path))
    assert isinstance(sel, Selected)
    assert [k.info.schedule for k in sel.kernels] == [
        "prefill_split_sm_90a_overlap.yaml", "prefill_split_sm_90a_cp.yaml",
        "prefill_split_sm_90a_tr.yaml", "prefill_split_sm_90a_cp128.yaml"]
    assert "prefill_split_sm_90a_cp" in repr(sel)


@needs_kiln
def test_pick_binds_the_dims_from_the_arguments(tmp_path):
    import numpy as np
    sel = load(build("gdn/prefill_sm_90a", tmp_path))

    def args(lens, H, HV):
        T, N = sum(lens), len(lens)
        arr = lambda *shape: np.zeros(shape, np.float32)  # noqa: E731 (shapes are what count)
        return (arr(T, H, 128), arr(T, H, 128), arr(T, HV, 128), arr(T, HV), arr(T, HV),
                arr(HV), arr(HV), arr(N + 1), arr(N), arr(N, HV, 128, 128),
                arr(N, HV, 128, 128), arr(T, HV, 128), 0.1, 1)

    assert sel.pick(*args([8192], 16, 32), sms=132).info.schedule == \
        "prefill_split_sm_90a_overlap.yaml"
    assert sel.pick(*args([4096] * 4, 16, 32), sms=132).info.schedule == \
        "prefill_split_sm_90a_cp128.yaml"
    assert sel.pick(*args([8192], 4, 8), sms=132).info.schedule == "prefill_split_sm_90a_cp.yaml"
    assert sel.pick(*args([8192], 16, 64), sms=132).info.schedule == "prefill_split_sm_90a_cp.yaml"
    assert sel.pick(*args([65536], 2, 8), sms=132).info.schedule == \
        "prefill_split_sm_90a_tr.yaml"
    assert sel.pick(*args([32768, 32768], 2, 8), sms=132).info.schedule == \
        "prefill_split_sm_90a_cp128.yaml"
    with pytest.raises(ValueError, match="argument 'k' dim 0 \\(T\\) is 5"):
        bad = list(args([8192], 16, 32))
        bad[1] = np.zeros((5, 16, 128))
        sel.pick(*bad, sms=132)
    with pytest.raises(TypeError, match="argument 'q' must be a CUDA tensor, got int"):
        sel.pick(*((1,) + args([8192], 16, 32)[1:]), sms=132)


@needs_kiln
def test_select_builds_once_and_is_found_without_the_binary(tmp_path, monkeypatch):
    from kiln import select
    cache_dir = tmp_path / "cache"
    sel = select(SELECT / "decode_sm_90a_bf16.yaml", cache_dir=cache_dir, kiln_bin=real_kiln())
    assert isinstance(sel, Selected) and str(sel.path).endswith("selection.json")
    assert [k.info.schedule for k in sel.kernels] == [
        "decode_sm_90a_bf16.yaml", "decode_sm_90a_bv16_bf16.yaml"]
    entry = sorted(p for p in cache_dir.rglob("*") if p.is_file())
    assert sum(p.suffix == ".cubin" for p in entry) == 2
    # A GPU machine has no kiln binary: the entry serves it.
    monkeypatch.setenv("KILN_BIN", str(tmp_path / "missing"))
    monkeypatch.setattr("kiln.binary.find", lambda kiln_bin=None: None)
    again = select(SELECT / "decode_sm_90a_bf16.yaml", cache_dir=cache_dir)
    assert again.path == sel.path
