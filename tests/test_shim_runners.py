"""Other test runners under the debugger (sandbox/box/runners.py): a unittest runner script shaped
like Django's tests/runtests.py, `python -m unittest`, and subtests: the first `c` from the start
stops at the first failing test, in the test's frame, and `c` goes on to the next one."""

from __future__ import annotations

from test_shim import python, run, write  # noqa: F401  (fixtures)

SUITE = {
    "shapes/__init__.py": "",
    "shapes/geometry.py": '''
        def angle_sum(sides):
            return (sides - 2) * 180.0 if sides > 3 else 0.0
        ''',
    "tests/__init__.py": "",
    "tests/test_geometry.py": '''
        import unittest
        from shapes.geometry import angle_sum

        class AngleTests(unittest.TestCase):
            def test_square(self):
                self.assertEqual(angle_sum(4), 360)

            def test_triangle(self):
                sides = 3
                got = angle_sum(sides)
                self.assertEqual(got, 180)

            def test_sides(self):
                for n in (4, 3, 5):
                    with self.subTest(n=n):
                        self.assertGreater(angle_sum(n), 0)

            def test_broken(self):
                raise KeyError("no such shape")
        ''',
    # Django's runner in miniature: its own argument parsing, discovery, a TextTestRunner and an
    # exit status from the result
    "tests/runtests.py": '''
        #!/usr/bin/env python
        import argparse, os, sys, unittest
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("labels", nargs="*")
            parser.add_argument("--verbosity", type=int, default=1)
            options = parser.parse_args()
            loader = unittest.TestLoader()
            suite = unittest.TestSuite(loader.loadTestsFromName(label) for label in options.labels)
            result = unittest.TextTestRunner(verbosity=options.verbosity).run(suite)
            sys.exit(bool(result.failures or result.errors))

        if __name__ == "__main__":
            main()
        ''',
}


def test_a_runner_scripts_first_c_stops_in_the_failing_test(python, run, tmp_path):
    for name, text in SUITE.items():
        write(tmp_path, name, text)
    shim = run(python, ["tests/runtests.py", "--verbosity", "2", "tests.test_geometry.AngleTests.test_triangle",
                        "tests.test_geometry.AngleTests.test_square"], timeout=20)
    _, st = shim.read()
    assert st["reason"] == "start" and st["file"] == "tests/runtests.py"
    out, st = shim.cmd("c")
    assert (st["reason"], st["file"], st["function"]) == ("post_mortem", "tests/test_geometry.py", "test_triangle")
    assert st["locals"]["got"] == "0.0" and st["exception"]["type"] == "AssertionError"
    assert st["test"] == "tests.test_geometry.AngleTests.test_triangle"
    assert st["failed_tests"] == ["tests.test_geometry.AngleTests.test_triangle"]
    assert "FAILED tests.test_geometry.AngleTests.test_triangle" in out and "AssertionError: 0.0 != 180" in out
    _, st = shim.cmd("up")  # the runner's frames are there to look at, above the test
    assert st["function"] != "test_triangle"
    out, st = shim.cmd("c")  # the other test passes: the run ends, as the runner says
    assert st["event"] == "exit" and st["code"] == 1
    assert st["failed_tests"] == ["tests.test_geometry.AngleTests.test_triangle"]
    assert "FAILED (failures=1)" in out
    assert shim.finish() == 1


def test_python_m_unittest_stops_at_each_failure_and_subtest(python, run, tmp_path):
    for name, text in SUITE.items():
        write(tmp_path, name, text)
    shim = run(python, ["-m", "unittest", "tests.test_geometry"], timeout=20)
    assert shim.read()[1]["reason"] == "start"
    stops = []
    while True:
        _, st = shim.cmd("c")
        if st["event"] == "exit":
            break
        stops.append((st["function"], st["exception"]["type"], st["test"]))
    # unittest runs the tests by name: broken, sides, square, triangle
    assert [s[:2] for s in stops] == [("test_broken", "KeyError"), ("test_sides", "AssertionError"),
                                      ("test_triangle", "AssertionError")], stops
    assert stops[1][2] == "tests.test_geometry.AngleTests.test_sides (n=3)"
    assert st["code"] == 1


def test_q_in_a_runners_post_mortem_ends_the_run(python, run, tmp_path):
    for name, text in SUITE.items():
        write(tmp_path, name, text)
    shim = run(python, ["-m", "unittest", "tests.test_geometry"], timeout=20)
    shim.read()
    assert shim.cmd("c")[1]["function"] == "test_broken"
    _, st = shim.cmd("q")
    assert st["event"] == "exit" and st["code"] is None
    assert shim.finish() == 0


def test_any_test_result_told_of_an_error_stops_there(python, run, tmp_path):
    write(tmp_path, "prog.py", '''
        import unittest
        result = unittest.TestResult()
        try:
            raise ValueError("recorded, not a test of this run")
        except ValueError:
            import sys
            result.addError(unittest.FunctionTestCase(lambda: None), sys.exc_info())
        print("errors", len(result.errors))
        ''')
    shim = run(python, ["prog.py"])
    shim.read()
    out, st = shim.cmd("c")
    # a result the program keeps for itself is still a failure in a test: the debugger stops there
    assert st["event"] == "prompt" and st["reason"] == "post_mortem" and st["exception"]["type"] == "ValueError"
    out, st = shim.cmd("c")
    assert st["event"] == "exit" and st["code"] == 0 and "errors 1" in out
