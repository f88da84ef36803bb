"""The wheel ships one top-level package, dgym_tui, with everything the app needs at run time."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile

import pytest

from conftest import ROOT


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(out), str(ROOT)], check=True, capture_output=True)
    (path,) = out.glob("dgym_tui-*.whl")
    return path


def test_only_top_level_package_is_dgym_tui(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"dgym_tui"}
    top_level = next(n for n in names if n.endswith("top_level.txt"))
    assert zipfile.ZipFile(wheel).read(top_level).decode().split() == ["dgym_tui"]


def test_wheel_carries_runtime_files(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("dgym_tui/sandbox/Dockerfile", "dgym_tui/sandbox/build-offline-base.sh",
                   "dgym_tui/sandbox/box/dgym_pdb.py", "dgym_tui/sandbox/box/plugins/dgym_test_timeout.py",
                   "dgym_tui/sandbox/instance_image.py", "dgym_tui/tools/__init__.py",
                   "dgym_tui/examples/shopcart/main.py", "dgym_tui/examples/shopcart/tests/test_cart.py",
                   "dgym_tui/examples/shopcart/.gitignore"):
        assert needed in names, needed
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_installed_wheel_runs_and_finds_its_example(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, system_site_packages=True)
    py = env_dir / "bin" / "python"
    subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(wheel)],
                   check=True, capture_output=True)
    out = subprocess.run([env_dir / "bin" / "dgym-tui", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("dgym-tui ")
    where = subprocess.run([py, "-c", "from dgym_tui.examples import example_path; print(example_path())"],
                           capture_output=True, text=True, cwd=tmp_path).stdout.strip()
    assert where.startswith(str(env_dir)) and where.endswith("shopcart")
