"""Real-shaped repositories, written by the tests themselves: the layouts a person's own project
has (issue 19), each with one failing test and a line in the failing code to stop at.

Each RealRepo says where dgym-tui should open (the failing test, or the import that failed),
where to put a breakpoint in the code under test, and what a value there is in the failing test
(a later, passing test goes through the same line with another value).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class RealRepo:
    name: str
    files: dict[str, str]
    opens_at: str              # "file:line" of the first stop
    breakpoint: str            # "file:line" in the failing code
    expression: str            # printed there
    value: str                 # ... in the failing test
    entrypoint: str | None = None
    notice: str | None = None  # a line the session says at the start (a Notice), if any
    extra: dict = field(default_factory=dict)

    def write(self, root: Path) -> Path:
        for rel, text in self.files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return root


# A pure-Python library with its tests inside the package and a vendored versioneer.py with a
# __main__ block at the top (which the old detection opened instead of the tests).
PACKAGE_TESTS = RealRepo(
    name="package-tests",
    files={
        "setup.py": "from setuptools import setup\nsetup(name='tinycalc', packages=['tinycalc'])\n",
        "versioneer.py": "def get_version():\n    return '0+unknown'\n\n\nif __name__ == \"__main__\":\n"
                         "    print(get_version())\n",
        "tinycalc/__init__.py": "from tinycalc.stats import mean\n",
        "tinycalc/stats.py": "def mean(values):\n    total = sum(values)\n    count = len(values) - 1\n"
                             "    return total / count\n",
        "tinycalc/tests/__init__.py": "",
        "tinycalc/tests/test_stats.py": "from tinycalc import mean\n\n\ndef test_mean_of_three():\n"
                                        "    assert mean([2, 4, 6]) == 4\n\n\ndef test_mean_of_two():\n"
                                        "    assert mean([1, 1, 1, 5]) > 0\n",
    },
    opens_at="tinycalc/tests/test_stats.py:5",
    breakpoint="tinycalc/stats.py:4", expression="(total, count)", value="(12, 2)",
)

# A src/ layout whose conftest imports the package (so it must be importable before any test).
SRC_LAYOUT = RealRepo(
    name="src-layout",
    files={
        "pyproject.toml": "[project]\nname = 'slugkit'\nversion = '1.0'\n\n[tool.setuptools.packages.find]\n"
                          "where = ['src']\n\n[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
        "src/slugkit/__init__.py": "from slugkit.slug import slugify\n",
        "src/slugkit/slug.py": "import re\n\n\ndef slugify(title):\n    words = re.findall(r'[a-z]+', title)\n"
                               "    return '-'.join(words)\n",
        "tests/conftest.py": "import pytest\nimport slugkit\n\n\n@pytest.fixture\ndef slug():\n"
                             "    return slugkit.slugify\n",
        "tests/test_slug.py": "def test_title_case(slug):\n    assert slug('Hello World') == 'hello-world'\n\n\n"
                              "def test_lower(slug):\n    assert slug('a b') == 'a-b'\n",
    },
    opens_at="tests/test_slug.py:2",
    breakpoint="src/slugkit/slug.py:6", expression="words", value="['ello', 'orld']",
    notice="src/ first on the import path",
)

# A unittest suite: the failure raises four frames deep in unittest's own code.
UNITTEST_SUITE = RealRepo(
    name="unittest-suite",
    files={
        "intervals.py": "def merge(spans):\n    spans = sorted(spans)\n    merged = [list(spans[0])]\n"
                        "    for start, end in spans[1:]:\n        last = merged[-1]\n"
                        "        if start < last[1]:\n            last[1] = max(last[1], end)\n"
                        "        else:\n            merged.append([start, end])\n"
                        "    return [tuple(s) for s in merged]\n",
        "tests/__init__.py": "",
        "tests/test_intervals.py": "import unittest\n\nfrom intervals import merge\n\n\n"
                                   "class MergeTest(unittest.TestCase):\n"
                                   "    def test_touching_spans_merge(self):\n"
                                   "        self.assertEqual(merge([(1, 3), (3, 5)]), [(1, 5)])\n\n"
                                   "    def test_apart(self):\n"
                                   "        self.assertEqual(merge([(1, 2), (5, 6)]), [(1, 2), (5, 6)])\n\n\n"
                                   "if __name__ == '__main__':\n    unittest.main()\n",
    },
    opens_at="tests/test_intervals.py:8",
    breakpoint="intervals.py:6", expression="(start, last)", value="(3, [1, 3])",
)

# One test file cannot be collected (it imports a name the module lacks); another fails.
COLLECT_ERROR = RealRepo(
    name="collect-error",
    files={
        "units.py": "def to_cm(inches):\n    factor = 2.45\n    return inches * factor\n",
        "tests/test_convert.py": "from units import to_cm, to_mm\n\n\ndef test_mm():\n    assert to_mm(1) == 25.4\n",
        "tests/test_units.py": "from units import to_cm\n\n\ndef test_inch():\n    assert to_cm(2) == 5.08\n\n\n"
                               "def test_zero():\n    assert to_cm(0) == 0\n",
    },
    opens_at="tests/test_convert.py:1",
    breakpoint="units.py:3", expression="(inches, factor)", value="(2, 2.45)",
    notice="pytest could not collect tests/test_convert.py: ImportError",
)

# The code needs a third-party package, served from a wheel folder the test builds
# (tests/test_real_repos.py: `wheel_folder`); `extra["package"]` names it.
NEEDS_PACKAGE = RealRepo(
    name="needs-package",
    files={
        "pyproject.toml": "[project]\nname = 'pricer'\nversion = '0.1'\ndependencies = ['tinymoney==1.0']\n",
        "pricer.py": "from tinymoney import cents\n\n\ndef with_tax(amount, rate):\n"
                     "    tax = cents(amount * rate)\n    return cents(amount) + tax + 1\n",
        "tests/test_pricer.py": "from pricer import with_tax\n\n\ndef test_tax():\n"
                                "    assert with_tax(10, 0.2) == 1200\n\n\ndef test_free():\n"
                                "    assert with_tax(0, 0) >= 0\n",
    },
    opens_at="tests/test_pricer.py:5",
    breakpoint="pricer.py:6", expression="tax", value="200",
    extra={"package": "tinymoney", "module": "tinymoney.py", "version": "1.0",
           "source": "def cents(amount):\n    return round(amount * 100)\n"},
)

WITHOUT_PACKAGES = [PACKAGE_TESTS, SRC_LAYOUT, UNITTEST_SUITE, COLLECT_ERROR]


def write_wheel(folder: Path, name: str, version: str, module: str, source: str) -> Path:
    """A pure-Python wheel of one module, written by hand (no network, no build backend): what a
    person's private package index or wheel folder holds."""
    import base64
    import hashlib
    import zipfile

    folder.mkdir(parents=True, exist_ok=True)
    info = f"{name}-{version}.dist-info"
    files = {module: source,
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: dgym-tui-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join(record + [f"{info}/RECORD,,"]) + "\n"
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


def dependency_wheels(real: RealRepo, folder: Path) -> Path:
    """The wheel folder of a repo's third-party dependency (`real.extra`)."""
    x = real.extra
    write_wheel(folder, x["package"], x["version"], x["module"], x["source"])
    return folder


def install_into_venv(repo: Path, wheels: Path, package: str) -> Path:
    """The repo's .venv (the project's interpreter, which bwrap and local use) with `package`
    from the wheel folder alone; pytest comes from this interpreter's site-packages."""
    import subprocess
    import sys

    python = repo / ".venv" / "bin" / "python"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(repo / ".venv")],
                   check=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-index",
                    "--find-links", str(wheels), package], check=True)
    return python
