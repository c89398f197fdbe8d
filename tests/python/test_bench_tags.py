"""bench/op_bench.check_tags: two builds of one bench tag are refused, naming
both manifests, since their rows would overwrite each other."""
import argparse
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from op_bench import check_tags  # noqa: E402


def kern(tag, path):
    return SimpleNamespace(tag=tag, path=path)


def test_distinct_tags_pass():
    check_tags(argparse.ArgumentParser(), [kern("cp128[base]", "a/base.json"),
                                           kern("cp128[new]", "b/new.json")])


def test_a_repeated_tag_names_both_manifests(capsys):
    with pytest.raises(SystemExit):
        check_tags(argparse.ArgumentParser(), [kern("cp128", "a/cp128.json"),
                                               kern("cp128", "b/cp128.json")])
    err = capsys.readouterr().err
    assert "a/cp128.json and b/cp128.json are both 'cp128'" in err
