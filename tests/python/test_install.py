"""`pip install ./python` gives an importable package (built from a copy, so
the checkout gets no build/ or egg-info)."""
import shutil
import subprocess
import sys

import pytest
from conftest import REPO


def test_pip_install(tmp_path):
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode:
        pytest.skip("no pip for this python")
    source = tmp_path / "src"
    shutil.copytree(REPO / "python", source, ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                                            "__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                           "--no-build-isolation", "--target", str(tmp_path / "site"),
                           str(source)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    show = "import kiln; print(kiln.__file__, kiln.__all__)"
    check = subprocess.run([sys.executable, "-c", show], capture_output=True, text=True,
                           cwd=tmp_path, env={"PYTHONPATH": str(tmp_path / "site")})
    assert check.returncode == 0, check.stderr
    assert check.stdout.startswith(str(tmp_path / "site" / "kiln" / "__init__.py"))
    assert "run_cpu" in check.stdout
