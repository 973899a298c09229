"""`cmake --install <build> --component python` lays out a package that imports on its own."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import weft

BUILD_DIR = pathlib.Path(weft.__file__).resolve().parents[2]  # <build>/python/weft/__init__.py


def install_dir_setting():
    cache = BUILD_DIR / "CMakeCache.txt"
    for line in cache.read_text().splitlines() if cache.exists() else []:
        if line.startswith("WEFT_PYTHON_INSTALL_DIR:"):
            return line.split("=", 1)[1]
    return None


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_the_installed_package_imports_and_runs(tmp_path):
    site = install_dir_setting()
    if site is None or os.path.isabs(site):
        pytest.skip("not run from a build tree whose WEFT_PYTHON_INSTALL_DIR is below the prefix")
    subprocess.run(["cmake", "--install", str(BUILD_DIR), "--component", "python", "--prefix", str(tmp_path)],
                   check=True, capture_output=True, text=True)
    installed = tmp_path / site
    assert (installed / "weft" / "__init__.py").exists()
    assert (installed / "weft" / "torch" / "__init__.py").exists()  # the subpackage is installed too
    program = ("import numpy as np, weft\n"
               "assert weft.__file__.startswith(%r)\n"
               "print(weft.einsum('ij,jk->ik', np.ones((2, 3)), np.ones((3, 2)))[0, 0])\n") % str(installed)
    environment = dict(os.environ, PYTHONPATH=str(installed))
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=environment,
                            cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "3.0"
