"""Checks for the bundled example repository ``examples/shopcart``.

``examples/shopcart`` is a small, deliberately buggy shop back office that
the person and the agent debug together.  Its own pytest suite has 23
tests; 5 of them fail because of the four planted bugs below, and its
``main.py`` demo crashes mid-batch.  ``tests/example_fixes/shopcart.patch``
fixes all four bugs (``git apply`` from the example root).

The example's code carries no hints; this docstring (and :data:`BUGS`) is
the answer key.  Paths are relative to ``examples/shopcart``; lines are
1-based and are verified by :func:`test_bug_locations_are_accurate`, so
they are safe to use as breakpoints (``b shopcart/catalog.py:91``).

1. ``shopcart/catalog.py:91`` -- off-by-one.  ``Catalog.pages()`` loops
   ``for number in range(1, self.page_count(size))`` and so never yields
   the last page.  Fails
   ``tests/test_catalog.py::test_pages_cover_every_product_exactly_once``.
   Symptom: the demo prints "Page 1 of 3", "Page 2 of 3" and then stops;
   Sticker Sheet and Zip Hoodie are never listed.  ``page_count()`` and
   ``page()`` are correct (their test passes).

2. ``shopcart/cart.py:44`` -- shared mutable default argument.
   ``Cart.__init__(self, customer, vouchers: list[str] = [])`` stores the
   default list itself (line 46 ``self.vouchers = vouchers``), and
   ``apply_voucher`` appends to it (line 93), so a code entered in one cart
   shows up in every cart created without explicit vouchers, including
   carts created earlier.  Fails
   ``tests/test_vouchers.py::test_vouchers_stay_with_the_cart_they_were_entered_in``
   and
   ``tests/test_vouchers.py::test_plain_cart_after_a_voucher_checkout_pays_full_price``.
   Symptom: in the demo every customer's checkout preview lists
   "Voucher SAVE10" although only Alice entered it.  (The leak persists
   for the whole pytest session; only ``tests/test_vouchers.py``, which
   runs last, applies valid codes, so the failing set does not depend on
   which subset of files is run, and each failing test fails on its own.)

3. ``shopcart/pricing.py:80`` -- wrong branch order.
   ``line_discount_rate`` tests ``quantity >= BULK_MIN_QTY`` (10) before
   ``customer.business and quantity >= WHOLESALE_MIN_QTY`` (50, line 82),
   so the 12% wholesale branch is unreachable and business customers get
   the 5% bulk rate.  Fails
   ``tests/test_pricing.py::test_business_customers_get_wholesale_rate_on_large_lines``
   (total 393.98 instead of 364.95).  Symptom: Bob's Bikes (business,
   60 notebooks) gets a $21.72 volume discount instead of $48.60.

4. ``shopcart/inventory.py:56`` -- runtime failure on the Nth loop
   iteration.  ``Inventory._set`` (line 69) drops a SKU from the table
   when its stock reaches 0, but ``reserve`` reads ``self._stock[sku]``
   directly, so the next order for a sold-out SKU raises ``KeyError``
   instead of ``OutOfStockError``.  ``process_order``
   (``shopcart/orders.py:61``) only catches ``OutOfStockError``, so the
   exception escapes the loop in ``process_batch``
   (``shopcart/orders.py:84``) and aborts the whole batch.  Fails
   ``tests/test_orders.py::test_batch_backorders_when_stock_runs_out``.
   Symptom: ``python main.py`` prints orders #1001-#1003, then dies with
   ``KeyError: 'MUG-01'`` on the 4th order (Dave); no sales report.
   Asking for more than is on hand while some stock remains still raises
   ``OutOfStockError`` correctly (those tests pass).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

EXAMPLE_DIR = Path(__file__).resolve().parents[1] / "examples" / "shopcart"
FIX_PATCH = Path(__file__).resolve().parent / "example_fixes" / "shopcart.patch"

TOTAL_TESTS = 23


@dataclass(frozen=True)
class Bug:
    file: str
    line: int
    kind: str
    snippet: str
    failing_tests: tuple[str, ...]
    symptom: str


BUGS: tuple[Bug, ...] = (
    Bug(
        file="shopcart/catalog.py",
        line=91,
        kind="off-by-one",
        snippet="for number in range(1, self.page_count(size)):",
        failing_tests=("tests/test_catalog.py::test_pages_cover_every_product_exactly_once",),
        symptom="Catalog.pages() never yields the last page (demo stops at 'Page 2 of 3')",
    ),
    Bug(
        file="shopcart/cart.py",
        line=44,
        kind="shared mutable default argument",
        snippet="vouchers: list[str] = []",
        failing_tests=(
            "tests/test_vouchers.py::test_vouchers_stay_with_the_cart_they_were_entered_in",
            "tests/test_vouchers.py::test_plain_cart_after_a_voucher_checkout_pays_full_price",
        ),
        symptom="a voucher entered in one cart appears in every default-constructed cart",
    ),
    Bug(
        file="shopcart/pricing.py",
        line=80,
        kind="wrong branch order",
        snippet="if quantity >= BULK_MIN_QTY:",
        failing_tests=(
            "tests/test_pricing.py::test_business_customers_get_wholesale_rate_on_large_lines",
        ),
        symptom="business customers get the 5% bulk rate instead of the 12% wholesale rate",
    ),
    Bug(
        file="shopcart/inventory.py",
        line=56,
        kind="runtime failure on the Nth loop iteration (missing key)",
        snippet="on_hand = self._stock[sku]",
        failing_tests=("tests/test_orders.py::test_batch_backorders_when_stock_runs_out",),
        symptom="KeyError: 'MUG-01' aborts the order batch on the 4th order",
    ),
)

# Lines that are part of a bug's story without being the line to fix.
RELATED_LINES: dict[str, tuple[tuple[int, str], ...]] = {
    "shopcart/cart.py": (
        (46, "self.vouchers = vouchers"),
        (93, "self.vouchers.append(normalized)"),
    ),
    "shopcart/pricing.py": ((82, "elif customer.business and quantity >= WHOLESALE_MIN_QTY:"),),
    "shopcart/inventory.py": ((69, "self._stock.pop(sku, None)"),),
    "shopcart/orders.py": (
        (61, "inventory.reserve(sku, quantity)"),
        (84, "result = process_order(order, inventory)"),
    ),
}

EXPECTED_FAILURES = frozenset(test_id for bug in BUGS for test_id in bug.failing_tests)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONPATH"):
        env.pop(name, None)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _copy_example(dest: Path) -> Path:
    target = dest / "shopcart"
    junk = shutil.ignore_patterns("__pycache__", ".pytest_cache", ".benchmarks", "*.pyc")
    shutil.copytree(EXAMPLE_DIR, target, ignore=junk)
    return target


def _run(args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout, check=False
    )


def _run_pytest(repo: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    proc = _run([*command, "-rfE", "--color=no", *extra], repo)
    failing = {
        line.split()[1]
        for line in proc.stdout.splitlines()
        if line.startswith(("FAILED ", "ERROR "))
    }
    return proc, failing


def _run_main(repo: Path) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "main.py"], repo)


@pytest.fixture(scope="module")
def buggy_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _copy_example(tmp_path_factory.mktemp("buggy"))


@pytest.fixture(scope="module")
def fixed_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    repo = _copy_example(tmp_path_factory.mktemp("fixed"))
    init = _run([git, "init", "-q"], repo)
    assert init.returncode == 0, init.stderr
    check = _run([git, "apply", "--check", str(FIX_PATCH)], repo)
    assert check.returncode == 0, check.stderr
    apply = _run([git, "apply", str(FIX_PATCH)], repo)
    assert apply.returncode == 0, apply.stderr
    return repo


def test_bug_locations_are_accurate() -> None:
    for bug in BUGS:
        lines = (EXAMPLE_DIR / bug.file).read_text(encoding="utf-8").splitlines()
        assert bug.snippet in lines[bug.line - 1], (bug.file, bug.line, lines[bug.line - 1])
    for file, entries in RELATED_LINES.items():
        lines = (EXAMPLE_DIR / file).read_text(encoding="utf-8").splitlines()
        for line, snippet in entries:
            assert snippet in lines[line - 1], (file, line, lines[line - 1])


def test_example_layout() -> None:
    for name in ("README.md", ".gitignore", "pytest.ini", "main.py", "data/products.csv"):
        assert (EXAMPLE_DIR / name).is_file(), name
    for module in ("__init__", "catalog", "inventory", "cart", "pricing", "orders", "report"):
        assert (EXAMPLE_DIR / "shopcart" / f"{module}.py").is_file(), module
    ignored = (EXAMPLE_DIR / ".gitignore").read_text(encoding="utf-8").split()
    assert "__pycache__/" in ignored and ".pytest_cache/" in ignored


def test_example_suite_fails_exactly_on_the_planted_bugs(buggy_repo: Path) -> None:
    proc, failing = _run_pytest(buggy_repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert failing == set(EXPECTED_FAILURES), proc.stdout
    passed = TOTAL_TESTS - len(EXPECTED_FAILURES)
    assert f"{len(EXPECTED_FAILURES)} failed, {passed} passed" in proc.stdout, proc.stdout


@pytest.mark.parametrize("test_id", sorted(EXPECTED_FAILURES))
def test_each_failing_example_test_fails_on_its_own(buggy_repo: Path, test_id: str) -> None:
    proc, failing = _run_pytest(buggy_repo, test_id)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert failing == {test_id}, proc.stdout


def test_example_main_crashes_mid_batch(buggy_repo: Path) -> None:
    proc = _run_main(buggy_repo)
    assert proc.returncode != 0
    assert "KeyError: 'MUG-01'" in proc.stderr, proc.stderr
    assert "in reserve" in proc.stderr
    assert "#1003 Carol" in proc.stdout
    assert "#1004" not in proc.stdout
    assert "Sales report" not in proc.stdout
    assert "Page 2 of 3" in proc.stdout and "Page 3 of 3" not in proc.stdout
    assert proc.stdout.count("Voucher SAVE10") == 5


def test_fix_patch_makes_example_suite_pass(fixed_repo: Path) -> None:
    proc, failing = _run_pytest(fixed_repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not failing
    assert f"{TOTAL_TESTS} passed" in proc.stdout, proc.stdout


def test_fix_patch_makes_main_run_cleanly(fixed_repo: Path) -> None:
    proc = _run_main(fixed_repo)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    out = proc.stdout
    assert "Page 3 of 3" in out and "Zip Hoodie" in out
    assert out.count("Voucher SAVE10") == 1
    assert "Volume discount            -$48.60" in out
    assert "#1004 Dave         backordered waiting for MUG-01" in out
    assert "#1005 Erin" in out
    assert "Sales report" in out
    assert "Orders confirmed:   4" in out and "Orders backordered: 1" in out
    assert "Revenue                    $607.48" in out
