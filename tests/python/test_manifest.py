"""Reading manifests: the records a launcher gets, and errors that name the field."""
import json

import pytest
import samples

import kiln
from kiln import manifest


def write(tmp_path, m, name="toy.json"):
    path = tmp_path / name
    path.write_text(json.dumps(m))
    return path


def test_single_kernel_is_an_op_of_one_launch(tmp_path):
    m = manifest.read(write(tmp_path, samples.single()))
    assert not m.is_op
    assert m.image == str(tmp_path / "toy.cubin")
    assert [p.name for p in m.signature.params] == ["x", "y", "cu_seqlens", "scale", "n"]
    assert m.signature.params[0] == manifest.Param("x", True, "bf16", "in", ("B", "T", "H", 32))
    assert m.signature.params[3] == manifest.Param("scale", False, "f32")
    assert m.kernels == (m.signature,)
    assert m.launches == (manifest.Launch("toy", (0, 1, 2, 3, 4)),)
    assert m.signature.tensor_maps == (manifest.TensorMapInfo(1, (1, 64, 8), 0),)
    assert m.signature.dynamic_shared_bytes == 1024


def test_op(tmp_path):
    m = manifest.read(write(tmp_path, samples.op()))
    assert m.is_op
    assert [k.entry for k in m.kernels] == ["first", "second"]
    assert m.launches[1] == manifest.Launch("second", (-1, 1, 2), True, 232448)
    assert m.aligned_dims == (manifest.AlignedDim("TP", "T", 4),)
    assert m.scratch[0].shape == ("TP", 8)
    assert not m.launches[0].early


def test_early_launch(tmp_path):
    """A launch that starts early (a schedule's `early_start`) says so; any
    other value than a boolean is an error naming the field."""
    m = samples.op()
    m["launches"][1] = {"kernel": "second", "args": [-1, 1, 2], "early": True}
    assert manifest.read(write(tmp_path, m)).launches[1] == \
        manifest.Launch("second", (-1, 1, 2), early=True)
    m["launches"][1]["early"] = "yes"
    assert "manifest field 'launches[].early' is missing or has the wrong type" in \
        field_error(tmp_path, m)


def test_load_names_and_tags(tmp_path):
    k = kiln.load(write(tmp_path, samples.single()))
    assert k.name == "toy[toy_sm_90a.yaml]"
    assert k.tag == "toy_sm_90a"  # the image's name is in the schedule's
    assert k.entries == ["toy"] and not k.is_op
    assert k.manifest["consts"] == {"K": 32}
    # Two builds of one schedule stay apart by their image's name.
    other = kiln.load(write(tmp_path, samples.single(image="before.cubin"), "before.json"))
    assert other.tag == "toy_sm_90a[before]"
    op = kiln.load(write(tmp_path, samples.op(), "op.json"))
    assert op.is_op and op.entries == ["first", "second"] and op.side_stream is None


def field_error(tmp_path, m):
    with pytest.raises(kiln.KilnError) as e:
        manifest.read(write(tmp_path, m))
    return str(e.value)


@pytest.mark.parametrize("change, message", [
    ({"threads": "128"}, "manifest field 'threads' is missing or has the wrong type"),
    ({"grid": []}, "manifest field 'grid' must have 1 to 3 extents"),
    ({"params": [samples.view("x", "u16", ["T"])]}, "parameter 'x' has unknown dtype 'u16'"),
    ({"params": [samples.scalar("s", "bf16")]}, "scalar parameter 's' has dtype bf16"),
    ({"params": [{"name": "x", "kind": "view", "dtype": "f32", "shape": ["T"]}]},
     "manifest field 'params[].access' is missing"),
    ({"tensor_maps": [{"param": 3, "box": []}]},
     "'tensor_maps[].param' does not name a view parameter"),
    ({"tensor_maps": [{"param": 1, "box": [1, 64]}]},
     "'tensor_maps[].box' must have the view's rank"),
    ({"tensor_maps": [{"param": 1, "box": [1, 64, 8], "swizzle": 16}]},
     "'tensor_maps[].swizzle' must be 0, 32, 64 or 128"),
])
def test_kernel_field_errors(tmp_path, change, message):
    assert message in field_error(tmp_path, samples.single(**change))


def test_op_field_errors(tmp_path):
    bad = samples.op()
    bad["launches"][0]["args"] = [0, -2]
    assert "launch of 'first' names an argument the op does not have" in field_error(tmp_path, bad)
    bad = samples.op()
    bad["kernels"].pop()
    assert "one kernel manifest per launch" in field_error(tmp_path, bad)
    bad = samples.op()
    bad["launches"][1]["args"] = [-1, 1, 0]  # the tensor x where scalar s goes
    assert "passes 'x' (f32 tensor) to 's' (f32)" in field_error(tmp_path, bad)
    bad = samples.op(aligned_dims=[{"name": "TP", "of": "T", "multiple": 0}])
    assert "'aligned_dims[].multiple' must be positive" in field_error(tmp_path, bad)


def test_unreadable_manifests(tmp_path):
    with pytest.raises(kiln.KilnError, match="cannot read manifest"):
        manifest.read(tmp_path / "missing.json")
    (tmp_path / "syntax.json").write_text('{"entry": "x",\n "target" "sm_90a"}')
    with pytest.raises(kiln.KilnError, match=r"syntax.json: line 2, column 11"):
        manifest.read(tmp_path / "syntax.json")
