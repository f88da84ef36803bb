"""The offline SWE-bench builder's parts (issue 48), on real git repositories and real files: what
building a repository needs (PEP 518, setup_requires), the spec's pre_install split into edits and
Debian packages, /testbed with its history up to the base (tags made later left out) and the
`git archive` way when a mirror refuses the fetch, the computed lists against the dataset's, and a
whole file's report: resumable, per repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dgym_tui.batch.swebench_testbed import APT_FROM_FILES, fetch, split_pre_install, stand_in_lost, tags_up_to
from dgym_tui.batch.swebench_validation import Report, compare, differ_cause, listed_tests, run_all, summary
from dgym_tui.batch.swebench_wheels import BuildError, build_requirements

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}


def git(repo: Path, *args: str, when: int | None = None) -> str:
    env = dict(GIT_ENV)
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{when} +0000"
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


@pytest.fixture
def history(tmp_path):
    """A repository of three commits a day apart, a tag on the first and one on the third; a bare
    mirror of it, as --repos holds them."""
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    commits = []
    for n in range(3):
        (work / "calc.py").write_text(f"VERSION = {n}\n")
        (work / f"notes{n}.txt").write_text(f"note {n}\n")
        if n == 0:
            (work / "old.txt").write_text("only in the first commit\n")
        elif n == 1:
            (work / "old.txt").unlink()
        git(work, "add", "-A")
        git(work, "commit", "-q", "-m", f"commit {n}", when=1_600_000_000 + n * 86_400)
        commits.append(git(work, "rev-parse", "HEAD"))
    git(work, "tag", "v0", commits[0])
    git(work, "tag", "-a", "v2", "-m", "later", commits[2])
    mirror = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "-q", "--mirror", str(work), str(mirror)], check=True)
    return mirror, commits


def test_testbed_has_the_history_to_the_base_and_no_later_tag(history, tmp_path):
    mirror, commits = history
    assert tags_up_to(str(mirror), commits[1]) == ["refs/tags/v0"]
    testbed = tmp_path / "testbed"
    assert fetch(str(mirror), commits[1], testbed) == "history"
    assert git(testbed, "rev-parse", "HEAD") == commits[1]
    assert git(testbed, "log", "--format=%H").split() == [commits[1], commits[0]]  # `git log` has the past
    assert git(testbed, "tag") == "v0"
    assert git(testbed, "remote") == ""
    # nothing after the base is in the repository at all, not even unreachable
    assert subprocess.run(["git", "-C", str(testbed), "cat-file", "-e", commits[2]], capture_output=True).returncode
    assert (testbed / "calc.py").read_text() == "VERSION = 1\n"


def test_a_mirror_that_refuses_the_fetch_still_gives_the_bases_tree(history, tmp_path):
    """An object of the history is lost (astropy's mirror: upload-pack aborts, "possible repository
    corruption"); the base's own tree is whole, and `git archive` gives it, in one commit."""
    mirror, commits = history
    lost = git(mirror, "rev-parse", f"{commits[0]}:old.txt")
    subprocess.run(["git", "-C", str(mirror), "repack", "-a", "-d", "-q"], check=True)
    for pack in list((mirror / "objects" / "pack").glob("pack-*.pack")):
        moved = tmp_path / pack.name
        pack.rename(moved)
        for other in (mirror / "objects" / "pack").glob(f"{pack.stem}.*"):
            other.unlink()
        with open(moved, "rb") as fh:  # every object loose, then the one only the first commit had is gone
            subprocess.run(["git", "-C", str(mirror), "unpack-objects", "-q"], stdin=fh, check=True)
    (mirror / "objects" / lost[:2] / lost[2:]).unlink()
    testbed = tmp_path / "testbed"
    assert fetch(str(mirror), commits[1], testbed) == "archive"
    assert (testbed / "calc.py").read_text() == "VERSION = 1\n" and not (testbed / "old.txt").exists()
    assert len(git(testbed, "log", "--format=%H").split()) == 1
    assert git(testbed, "status", "--short") == ""
    # the base's id names that commit, as the harness's scripts use it
    assert git(testbed, "show", "-s", "--format=%s", commits[1]).startswith(f"the tree of {commits[1]}")
    (testbed / "calc.py").write_text("changed\n")
    git(testbed, "checkout", commits[1], "--", "calc.py")
    assert (testbed / "calc.py").read_text() == "VERSION = 1\n"
    # the first commit's own tree lacks old.txt's content: the rest of it, and the loss named
    assert fetch(str(mirror), commits[0], tmp_path / "broken") == "archive (the mirror lost old.txt)"
    assert (tmp_path / "broken" / "calc.py").read_text() == "VERSION = 0\n"
    with pytest.raises(BuildError, match=r"^cannot get base commit \w{12} from .*: .*; git archive: [^\n]*$"):
        fetch(str(mirror), "0" * 40, tmp_path / "nothing")

    # the lost file comes back from the project's release wheel nearest the base: v0's has none
    # of it, v2's the very blob (pip run for real, on a folder of wheels)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _wheel(wheels, "calcpkg", "0", {"calc.py": "VERSION = 0\n"})
    _wheel(wheels, "calcpkg", "2", {"old.txt": "only in the first commit\n"})
    broken = tmp_path / "broken"
    said = stand_in_lost(broken, str(mirror), commits[0], ["old.txt"], "calcpkg", sys.executable,
                         ("--no-index", "--find-links", str(wheels)))
    assert said == "old.txt from calcpkg 2's wheel"
    assert (broken / "old.txt").read_text() == "only in the first commit\n"
    assert git(broken, "status", "--short") == "" and len(git(broken, "log", "--format=%H").split()) == 1
    assert git(broken, "show", f"{commits[0]}:old.txt") == "only in the first commit"
    # a release with another version of the file: used, and said to be that release's
    _wheel(wheels, "calcpkg", "0", {"old.txt": "a later table\n"})
    other = tmp_path / "other"
    fetch(str(mirror), commits[0], other)
    assert stand_in_lost(other, str(mirror), commits[0], ["old.txt"], "calcpkg", sys.executable,
                         ("--no-index", "--find-links", str(wheels))) == \
        "old.txt from calcpkg 0's wheel (that release's version of it)"
    # no release holds it: left out, as before
    assert stand_in_lost(tmp_path / "nothing", str(mirror), commits[0], ["old.txt"], "nosuchpkg", sys.executable,
                         ("--no-index", "--find-links", str(wheels))) is None


def _wheel(folder, name, version, files):
    """A minimal pure-Python wheel pip accepts (its metadata and the given files)."""
    import zipfile

    info = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(folder / f"{name}-{version}-py3-none-any.whl", "w") as whl:
        for path, text in files.items():
            whl.writestr(path, text)
        whl.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        whl.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        whl.writestr(f"{info}/RECORD", "")


def test_build_requirements_are_read_not_run(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools>=45", '
                                             '"setuptools_scm[toml]>=6.2.3", "wheel"]\n')
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = demo\n[options]\nsetup_requires =\n"
                                        "    setuptools_scm\n    cython>=0.29; python_version>'3'\n")
    (tmp_path / "setup.py").write_text("import os\nos.system('touch PWNED')\n"
                                       "setup(name='demo', setup_requires=['pytest-runner'])\n")
    assert build_requirements(tmp_path) == ["setuptools>=45", "setuptools_scm[toml]>=6.2.3", "wheel",
                                            "setuptools_scm", "cython>=0.29; python_version>'3'", "pytest-runner"]
    assert not (tmp_path / "PWNED").exists()
    (tmp_path / "pyproject.toml").write_text("not = [toml\n")
    (tmp_path / "setup.py").write_text("setup(setup_requires=REQUIRES)\n")
    assert build_requirements(tmp_path) == ["setuptools_scm", "cython>=0.29; python_version>'3'"]


def test_pre_install_edits_and_debian_packages_are_told_apart():
    steps = ["sed -i 's/pytest/pytest -rA/' tox.ini",
             "apt-get update && apt-get install -y libenchant-2-dev hunspell-en-us",
             "sed -i 's/Jinja2>=2.3/Jinja2<3.0/' setup.py",
             "apt-get -y update && apt-get -y upgrade && DEBIAN_FRONTEND=noninteractive apt-get install -y "
             "--no-install-recommends graphviz"]
    edits, system, packages = split_pre_install(steps + ["echo 'en_US UTF-8' > /etc/locale.gen", "locale-gen en_US.UTF-8"])
    assert edits == [steps[0], steps[2]]
    assert system == ["echo 'en_US UTF-8' > /etc/locale.gen", "locale-gen en_US.UTF-8"]  # Django's: run in the image
    assert packages == ["libenchant-2-dev", "hunspell-en-us", "graphviz"]
    assert "*.deb" in APT_FROM_FILES


def test_the_computed_lists_against_the_datasets():
    dataset = {"FAIL_TO_PASS": json.dumps(["t::a"]), "PASS_TO_PASS": ["t::b", "t::c"]}
    same = {"FAIL_TO_PASS": json.dumps(["t::a"]), "PASS_TO_PASS": json.dumps(["t::b", "t::c", "t::d"])}
    assert compare(dataset, same)["match"] is True  # a test more that passes is not a miss
    # graded: by the dataset's own lists, the gold patch resolved and the base not, as the harness
    # grades them (requests' FAIL_TO_PASS holds tests that passed here at the base: still graded)
    statuses = {"before": {"t::a": "FAILED", "t::b": "PASSED", "t::c": "PASSED"},
                "after": {"t::a": "PASSED", "t::b": "PASSED", "t::c": "XFAIL"}}
    assert compare(dataset, {**same, "statuses": statuses})["graded"] is True
    flaky = {"FAIL_TO_PASS": json.dumps(["t::a"]), "PASS_TO_PASS": json.dumps(["t::b"]),
             "statuses": {"before": {"t::a": "FAILED", "t::z": "PASSED", "t::b": "PASSED"},
                          "after": {"t::a": "PASSED", "t::z": "PASSED", "t::b": "PASSED", "t::c": "PASSED"}}}
    two = {"FAIL_TO_PASS": json.dumps(["t::a", "t::z"]), "PASS_TO_PASS": json.dumps(["t::b", "t::c"])}
    got = compare(two, flaky)
    assert got["match"] is False and got["graded"] is True and got["missing_f2p"]["tests"] == ["t::z (PASSED)"]
    assert compare(two, {**flaky, "statuses": {"before": {}, "after": {"t::a": "PASSED"}}})["graded"] is False
    lost = {"FAIL_TO_PASS": json.dumps([]), "PASS_TO_PASS": json.dumps(["t::b"]),
            "statuses": {"before": {"t::a": "FAILED"}, "after": {"t::a": "FAILED", "t::c": "ERROR"}}}
    got = compare(dataset, lost)
    assert got["match"] is False
    assert got["missing_f2p"] == {"count": 1, "tests": ["t::a (FAILED)"]}
    assert got["lost_p2p"] == {"count": 1, "tests": ["t::c (ERROR)"]}
    assert "extra_f2p" not in got
    assert compare({"FAIL_TO_PASS": "[]"}, same) == {"match": None}  # no lists to hold it to
    assert listed_tests('["x"]') == ["x"] and listed_tests(["y"]) == ["y"] and listed_tests("") == []


def test_a_whole_file_failed_rows_say_why_in_the_report_and_a_second_run_redoes_only_them(tmp_path, monkeypatch):
    """No clone for one repository: its rows fail with the cause, the report and OUT are written,
    and a second run keeps what was done (a stand-in build and validation: the real ones are in
    tests/test_swebench_real.py)."""
    import dgym_tui.batch.swebench_image as image
    import dgym_tui.batch.swebench_validation as validation

    calls = []

    def build(record, repos, **_):
        calls.append(record["instance_id"])
        if record["repo"] == "no/clone":
            raise BuildError(f"{record['instance_id']}: no clone of no/clone under {repos}")
        return {"image": "img", "seconds": 1.0, "size": 10_000_000, "own": 1_000_000, "built": True,
                "testbed": "history", "env": "env-a", "env_size": 9_000_000}

    def validate(record, progress, logs):
        (logs / "before.log").write_text("log")
        return {**record, "FAIL_TO_PASS": json.dumps(["t::a"]), "PASS_TO_PASS": json.dumps(["t::b"]),
                "statuses": {"before": {}, "after": {}}}

    monkeypatch.setattr(image, "build", build)
    monkeypatch.setattr(validation, "validate", validate)
    rows = [{"instance_id": f"o__r-{n}", "repo": "o/r" if n < 3 else "no/clone", "version": "1.0",
             "FAIL_TO_PASS": ["t::a"], "PASS_TO_PASS": json.dumps(["t::b"] if n else ["t::z"])} for n in range(4)]
    out = tmp_path / "valid.jsonl"
    said = []
    got = run_all(rows, str(tmp_path), out, jobs=2, say=said.append)
    assert [r["status"] for r in got] == ["validated", "validated", "validated", "failed"]
    assert got[3]["cause"] == f"o__r-3: no clone of no/clone under {tmp_path}"
    assert [r["match"] for r in got[:3]] == [False, True, True]  # row 0's dataset P2P has t::z, lost
    assert got[0]["lost_p2p"]["tests"] == ["t::z (not run)"]
    assert got[0]["attempts"] == 3 and got[1]["attempts"] == 1  # a row that differs is run again, twice
    assert (tmp_path / "valid.jsonl.logs" / "o__r-0" / "before.2.log").read_text() == "log"
    assert [json.loads(line)["instance_id"] for line in out.read_text().splitlines()] == ["o__r-0", "o__r-1", "o__r-2"] \
        or sorted(json.loads(line)["instance_id"] for line in out.read_text().splitlines()) == ["o__r-0", "o__r-1",
                                                                                               "o__r-2"]
    assert (tmp_path / "valid.jsonl.logs" / "o__r-1" / "before.log").read_text() == "log"
    assert any("ETA" in line for line in said) and said[-1].startswith("[4/4] ")
    table = summary(got)
    assert "| o/r | 1.0 | 3 | 3 | 3 | 2 |" in table and "| no/clone | 1.0 | 1 | 0 | 0 | 0 |" in table
    assert "1× differs from the dataset" in table and "1× no clone of no/clone" in table
    assert "Disk for the 3 images: at most 12 MB with shared layers" in table and "30 MB as whole images" in table
    # a torn last line (the run was killed as it wrote) costs only that row
    report = Path(f"{out}.report.jsonl")
    report.write_text(report.read_text() + '{"instance_id": "o__r-')
    calls.clear()
    again = run_all(rows, str(tmp_path), out, jobs=1, say=said.append)
    assert calls == ["o__r-3"]  # only the failed row is tried again
    assert [r["status"] for r in again] == ["validated", "validated", "validated", "failed"]
    assert len(Report(out).rows) == 4
    # the validating code changed: every row is validated again (its image found, not rebuilt here)
    validated = []
    monkeypatch.setattr(validation, "validate", lambda record, progress, logs: validated.append(
        record["instance_id"]) or validate(record, progress, logs))
    monkeypatch.setattr(validation, "validator_digest", lambda: "another validator")
    run_all(rows, str(tmp_path), out, jobs=1, say=said.append)
    assert validated == ["o__r-0"] * 3 + ["o__r-1", "o__r-2"]  # the row that differs, in each of its runs
    assert {r["validator"] for r in Report(out).rows.values()} == {"another validator"}
    # the builder changed: every row is built and validated again
    calls.clear()
    monkeypatch.setattr(image, "builder_digest", lambda: "another builder")
    run_all(rows, str(tmp_path), out, jobs=1, say=said.append)
    assert calls == ["o__r-0", "o__r-1", "o__r-2", "o__r-3"]
    assert {r["builder"] for r in Report(out).rows.values()} == {"another builder"}


def test_a_row_whose_tests_differ_from_run_to_run_is_validated_again(tmp_path, monkeypatch):
    """sympy 1.1's bin/test under hash randomization: for some seeds the assumptions recurse and a
    FAIL_TO_PASS test errors with the gold patch. A second run gives the dataset's lists; the report
    says which run matched and keeps the first run's logs."""
    import dgym_tui.batch.swebench_image as image
    import dgym_tui.batch.swebench_validation as validation

    monkeypatch.setattr(image, "build", lambda record, repos, **_: {
        "image": "img", "seconds": 1.0, "size": 1, "own": 1, "built": True, "testbed": "history"})
    runs = []

    def validate(record, progress, logs):
        runs.append(record["instance_id"])
        error = len(runs) == 1
        (logs / "after.log").write_text(f"run {len(runs)}: " + ("RecursionError" if error else "ok"))
        return {**record, "FAIL_TO_PASS": json.dumps([] if error else ["test_evalf_bugs"]), "PASS_TO_PASS": "[]",
                "statuses": {"before": {}, "after": {"test_evalf_bugs": "ERROR" if error else "PASSED"}}}

    monkeypatch.setattr(validation, "validate", validate)
    rows = [{"instance_id": "sympy__sympy-13146", "repo": "sympy/sympy", "version": "1.1",
             "FAIL_TO_PASS": ["test_evalf_bugs"], "PASS_TO_PASS": "[]"}]
    said = []
    [row] = run_all(rows, str(tmp_path), tmp_path / "valid.jsonl", jobs=1, say=said.append)
    assert runs == ["sympy__sympy-13146"] * 2
    assert row["match"] is True and row["attempts"] == 2
    logs = tmp_path / "valid.jsonl.logs" / "sympy__sympy-13146"
    assert (logs / "after.1.log").read_text() == "run 1: RecursionError" and (logs / "after.log").read_text() == "run 2: ok"
    assert any("validating again (2 of 3" in line for line in said)
    assert any("· matches the dataset (run 2)" in line for line in said)
    assert "1× matched on a later run (the first differed: tests that differ from run to run)" in summary([row])
    # a difference every run has (tests that need the network) is not run again; a FAIL_TO_PASS
    # test that passes at the base is (sympy's test_mod_inverse fails there for some hash seeds)
    from dgym_tui.batch.swebench_validation import _may_differ_by_run

    offline = {"match": False, "lost_p2p": {"count": 1, "tests": ["t::b (FAILED)"]},
               "needs_network": {"count": 1, "tests": ["t::b"]}}
    assert not _may_differ_by_run(offline)
    assert _may_differ_by_run({"match": False, "missing_f2p": {"count": 1, "tests": ["t::a (PASSED)"]}})
    assert _may_differ_by_run({**offline, "lost_p2p": {"count": 2, "tests": ["t::b (FAILED)", "t::c (ERROR)"]}})
    assert not _may_differ_by_run({"match": True})

def test_the_command_says_a_missing_report_and_bad_jobs_in_one_line(tmp_path):
    def dgym(*args):
        return subprocess.run([sys.executable, "-m", "dgym_tui", "image", "swebench", *args], capture_output=True,
                              text=True, timeout=120)
    (tmp_path / "rows.jsonl").write_text("{}\n")
    done = dgym(str(tmp_path / "rows.jsonl"), "--summary", "--validate", str(tmp_path / "none.jsonl"))
    assert done.returncode == 2 and done.stderr.strip() == f"dgym-tui: {tmp_path}/none.jsonl.report.jsonl: no report there"
    done = dgym(str(tmp_path / "rows.jsonl"), "--repos", str(tmp_path), "--jobs", "0")
    assert done.returncode == 2 and done.stderr.strip() == "dgym-tui image swebench: --jobs must be 1 or more"


def test_the_projects_dependencies_are_resolved_without_building_it(tmp_path):
    """pip's report of a dry run: the dependencies of `/testbed[test]`, pinned, the project itself
    neither listed nor built (a C extension would be compiled twice)."""
    from dgym_tui.batch.swebench_wheels import project_dependencies

    project = tmp_path / "proj"
    project.mkdir()
    (project / "setup.py").write_text(
        "import sys\nfrom setuptools import setup\n"
        "if 'bdist_wheel' in sys.argv:\n    open(%r, 'w').write('built')\n" % str(tmp_path / "BUILT")
        + "setup(name='proj', version='1.0', py_modules=[], install_requires=['six'],\n"
          "      extras_require={'test': ['iniconfig']})\n")
    found = project_dependencies(sys.executable, f"{project}[test]", tmp_path / "cache")
    assert sorted(name.split("==")[0].lower() for name in found) == ["iniconfig", "six"], found
    assert all("==" in name for name in found)
    assert not (tmp_path / "BUILT").exists()
    with pytest.raises(BuildError, match="no-such-package-dgym"):
        (project / "setup.py").write_text("from setuptools import setup\n"
                                          "setup(name='proj', version='1.0', install_requires=['no-such-package-dgym'])\n")
        project_dependencies(sys.executable, str(project), tmp_path / "cache")


def test_the_setup_script_keeps_swebenchs_steps_but_what_was_done_before(tmp_path):
    from dgym_tui.batch.swebench_image import _build_failure, _setup_repo, needs_compiler

    script = ["git clone -o origin https://github.com/o/r /testbed", "chmod -R 777 /testbed", "cd /testbed",
              "git reset --hard abc", "git remote remove origin", "TARGET_TIMESTAMP=$(git show -s --format=%ci abc)",
              "git tag -l | while read tag; do :; done", "git reflog expire --expire=now --all",
              "git gc --prune=now --aggressive", "sed -i 's/a/b/' setup.py", "apt-get update && apt-get install -y x",
              "python -m pip install -e .", "git commit --allow-empty -am SWE-bench"]
    out = _setup_repo(script, ["sed -i 's/a/b/' setup.py"], ["apt-get update && apt-get install -y x"]).splitlines()
    assert out[:3] == ["#!/bin/bash", "set -euxo pipefail", "git -C /testbed update-index -q --refresh || true"]
    assert out[3:] == ["cd /testbed", "TARGET_TIMESTAMP=$(git show -s --format=%ci abc)",
                       "git reflog expire --expire=now --all",
                       "if ls /opt/dgym-debs/*.deb >/dev/null 2>&1; then apt-get install -y --no-install-recommends "
                       "/opt/dgym-debs/*.deb; fi", "python -m pip install -e .", "git commit --allow-empty -am SWE-bench"]
    # a compiler where the repository builds C code
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='x')\n")
    assert not needs_compiler(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools", "Cython>=0.29", "numpy"]\n')
    assert needs_compiler(tmp_path)
    (tmp_path / "pyproject.toml").unlink()
    (tmp_path / "setup.py").write_text("from setuptools import setup, Extension\nsetup(ext_modules=[Extension('x', ['x.c'])])\n")
    assert needs_compiler(tmp_path)
    # astropy 1.3: extensions declared in a package's setup_package.py, setup.py naming none
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(**get_package_info())\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "setup_package.py").write_text("def get_extensions():\n    return []\n")
    assert not needs_compiler(tmp_path)
    (tmp_path / "pkg" / "setup_package.py").write_text("from distutils.core import Extension\n"
                                                       "def get_extensions():\n    return [Extension('a', ['a.c'])]\n")
    assert needs_compiler(tmp_path)
    (tmp_path / "pkg" / "setup_package.py").unlink()
    (tmp_path / "pkg" / "fast.pyx").write_text("def f(): pass\n")
    assert needs_compiler(tmp_path)
    # a build that failed for want of one says so, whatever pip says after
    tail = ["Building editable for astropy (pyproject.toml): started", "error: command 'gcc' failed: No such file or "
            "directory", "ERROR: Failed building editable for astropy", "+ python -m pip install -e .[test]"]
    assert _build_failure(tail, "exit 1").startswith("a C compiler is needed and the image has none (error: command")
    assert _build_failure(tail[2:], "exit 1") == "ERROR: Failed building editable for astropy"


def test_an_environment_yml_becomes_pip_requirements_and_what_pypi_lacks_is_left_out_and_named(tmp_path):
    """xarray's spec builds a conda environment; its packages go through pip where PyPI has them."""
    from dgym_tui.batch.swebench_wheels import build_wheels, environment_to_pip

    yml = ("name: testbed\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.10\n  - pip\n  - six=1.16\n"
           "  - iniconfig>=1\n  - no-such-conda-only-package-dgym\n  - pip:\n      - pluggy==1.5.0\n")
    assert environment_to_pip(yml) == ["six==1.16.*", "iniconfig>=1", "no-such-conda-only-package-dgym", "pluggy==1.5.0"]
    # conda's names where PyPI's differ; PyPI's `iris` is a placeholder that raises at import
    assert environment_to_pip("dependencies:\n  - iris\n  - matplotlib-base=3.5\n  - dask-core\n") == [
        "scitools-iris", "matplotlib==3.5.*", "dask"]
    phase = environment_to_pip(yml)
    said = []
    dropped = build_wheels(sys.executable, [phase], tmp_path / "wheels", tmp_path / "cache", said.append,
                           optional=set(phase[:3]))
    assert dropped == ["no-such-conda-only-package-dgym"] and "no-such-conda-only-package-dgym" not in phase
    assert any("left out" in line for line in said)
    names = sorted(p.name.split("-")[0].lower() for p in (tmp_path / "wheels").glob("*.whl"))
    assert {"six", "iniconfig", "pluggy"} <= set(names), names
    with pytest.raises(BuildError, match="no-such-package-dgym"):  # a pip requirement is never dropped
        build_wheels(sys.executable, [["no-such-package-dgym==1"]], tmp_path / "w2", tmp_path / "cache", said.append,
                     optional=set())
    # the report says it: in the row's line and the summary's causes
    from dgym_tui.batch.swebench_validation import _line

    row = {"instance_id": "pydata__xarray-1", "repo": "pydata/xarray", "version": "0.12", "status": "validated",
           "f2p": 1, "p2p": 2, "match": True, "seconds": 3, "build_seconds": 2, "own": 0, "left_out": dropped}
    assert _line(row).endswith("· left out (not on the package index): no-such-conda-only-package-dgym (3 s)")
    assert "1× conda packages left out: no-such-conda-only-package-dgym" in summary([row])


def test_the_datasets_tests_that_fail_for_want_of_a_network_are_named():
    """SWE-bench ran requests' suite with the network; here the tests that reach a real host fail,
    and the report says so rather than calling the environment wrong."""
    from dgym_tui.batch.swebench_validation import network_bound

    log = ("____________ RequestsTestCase.test_mixed_case_scheme_acceptable ____________\n"
           "E   socket.gaierror: [Errno -3] Temporary failure in name resolution\n"
           "_______________________ TestTimeout.test_connect_timeout _______________________\n"
           "E   OSError: [Errno 101] Network is unreachable\n"
           "________________ RequestsTestCase.test_conflicting_post_params ________________\n"
           "E   AssertionError: 1 != 2\n")
    assert network_bound(log) == {"RequestsTestCase.test_mixed_case_scheme_acceptable", "TestTimeout.test_connect_timeout"}
    dataset = {"FAIL_TO_PASS": '["test_requests.py::TestTimeout::test_connect_timeout"]',
               "PASS_TO_PASS": json.dumps(["test_requests.py::RequestsTestCase::test_mixed_case_scheme_acceptable",
                                           "test_requests.py::RequestsTestCase::test_conflicting_post_params"])}
    computed = {"FAIL_TO_PASS": "[]", "PASS_TO_PASS": "[]", "statuses": {"before": {}, "after": {}}}
    got = compare(dataset, computed, {"after": log})
    assert got["match"] is False and got["needs_network"] == {"count": 2, "tests": [
        "test_requests.py::RequestsTestCase::test_mixed_case_scheme_acceptable",
        "test_requests.py::TestTimeout::test_connect_timeout"]}
    assert got["lost_p2p"]["count"] == 2  # the one that failed otherwise is not excused
    table = summary([{"instance_id": "a", "repo": "psf/requests", "version": "2.4", "status": "validated",
                      "build_seconds": 1, "own": 0, "match": False, **got}])
    assert "1× tests that need the network and differs from the dataset" in table
    only = {**got, "lost_p2p": {"count": 1, "tests": ["test_requests.py::RequestsTestCase::test_mixed_case_scheme_acceptable"
                                                       " (FAILED)"]}}
    assert differ_cause(only) == "tests that need the network"
    flaky = {"match": False, "missing_f2p": {"count": 2, "tests": ["t::a (PASSED)", "t::b (PASSED)"]}}
    assert differ_cause(flaky) == "FAIL_TO_PASS tests that pass here at the base"
    # a testbed that lacks files the clone lost names them beside the difference
    gone = {"match": False, "testbed": "archive (the mirror lost astropy/utils/iers/data/eopc04.1962-now)",
            "lost_p2p": {"count": 1, "tests": ["astropy/time/tests/test_ut1.py::test_ut1 (FAILED)"]}}
    assert differ_cause(gone) == ("differs from the dataset, with files of the base the clone lacks "
                                  "(astropy/utils/iers/data/eopc04.1962-now)")
    stood = {**gone, "testbed": gone["testbed"][:-1] + "; it from astropy 5.3's wheel)"}
    assert differ_cause(stood) == differ_cause(gone)


def test_an_xfail_test_that_passed_in_one_run_is_named():
    """pytest's XPASS is a status no log parser records: an xfail-marked flaky test (pylint-7114's
    epylint one) that passes at the base is "not run" there, and counted FAIL_TO_PASS."""
    test = "tests/checkers/unittest_imports.py::TestImportsChecker::test_relative_beyond_top_level_two"
    dataset = {"FAIL_TO_PASS": '["tests/lint/unittest_lint.py::test_nested"]', "PASS_TO_PASS": "[]"}
    computed = {"FAIL_TO_PASS": json.dumps(["tests/lint/unittest_lint.py::test_nested", test]), "PASS_TO_PASS": "[]",
                "statuses": {"before": {}, "after": {test: "XFAIL"}}}
    logs = {"before": f"PASSED tests/x.py::test_y\nXPASS {test} epylint manipulates cwd\n",
            "after": f"XFAIL {test} - epylint manipulates cwd\n"}
    got = compare(dataset, computed, logs)
    assert got["match"] is False and got["xpassed"] == {"count": 1, "tests": [test]}
    assert differ_cause(got) == ("xfail-marked tests that pass in one of the runs (XPASS, which the log parser "
                                 "does not record)")
    assert "xpassed" not in compare(dataset, computed, {"before": "", "after": ""})
    assert differ_cause(compare(dataset, computed, {})) == "differs from the dataset"


def test_a_row_the_harness_cannot_grade_is_not_counted_graded():
    """sphinx's first-word ids: the lists match the dataset's, but the harness finds no test by
    those names, so the gold patch is not graded resolved there, and the table says 0 graded."""
    row = {"instance_id": "sphinx-doc__sphinx-1", "repo": "sphinx-doc/sphinx", "version": "4.0", "status": "validated",
           "build_seconds": 1, "own": 0, "match": True, "graded": False,
           "first_word_ids": {"count": 1, "tests": ["t::test_escape_args_and_kwargs[x,"]}}
    table = summary([row])
    assert "| sphinx-doc/sphinx | 4.0 | 1 | 1 | 1 | 1 | 0 |" in table
    assert "1× the dataset names tests by their ids' first word" in table
    assert "| sphinx-doc/sphinx | 4.0 | 1 | 1 | 1 | 1 | 1 |" in summary([{**row, "graded": True}])


def test_an_sdist_of_its_time_is_built_with_a_setuptools_of_its_time(tmp_path):
    """astropy 1.3's pins (Python 3.6) have MarkupSafe 1.0, an sdist whose setup.py imports
    setuptools' `Feature` (gone in 46): its wheel is built with setuptools<46."""
    from dgym_tui.batch.swebench_image import find_python
    from dgym_tui.batch.swebench_wheels import build_wheels, wheel_builder

    builder = wheel_builder(find_python("3.6"), "3.6", lambda line: None)
    said = []
    build_wheels(builder, [["MarkupSafe==1.0"]], tmp_path / "wheels", tmp_path / "cache", said.append)
    assert "wheels: an old sdist needs setuptools<46 to build: built with it" in said
    assert [p.name for p in (tmp_path / "wheels").glob("MarkupSafe-*")] == ["MarkupSafe-1.0-cp36-cp36m-linux_x86_64.whl"]


def test_the_projects_dependencies_keep_the_environments_versions(tmp_path):
    """What the environment installed stays at its version, as pip in the image keeps it: no second,
    newer wheel of it in the instance's layer."""
    from dgym_tui.batch.swebench_wheels import project_dependencies

    project = tmp_path / "proj"
    project.mkdir()
    (project / "setup.py").write_text("from setuptools import setup\n"
                                      "setup(name='proj', version='1.0', install_requires=['six>=1.10'])\n")
    assert project_dependencies(sys.executable, str(project), tmp_path / "cache", ["six==1.15.0"]) == ["six==1.15.0"]
    # a held version the project cannot take: resolved without the environment's
    (project / "setup.py").write_text("from setuptools import setup\n"
                                      "setup(name='proj', version='1.0', install_requires=['six>=1.16'])\n")
    [six] = project_dependencies(sys.executable, str(project), tmp_path / "cache", ["six==1.15.0"])
    assert six.startswith("six==1.1") and six != "six==1.15.0"


def test_what_the_environment_ends_up_with(tmp_path):
    from dgym_tui.batch.swebench_image import installed_versions

    for name in ("numpy-2.0.2-cp39-cp39-linux_x86_64.whl", "numpy-1.25.2-cp39-cp39-linux_x86_64.whl",
                 "pandas-2.3.3-cp39-cp39-linux_x86_64.whl", "pandas-1.5.3-cp39-cp39-linux_x86_64.whl",
                 "six-1.17.0-py2.py3-none-any.whl"):
        (tmp_path / name).write_text("")
    # numpy: the requirements file took the newest, pip_packages pins 1.25.2; pandas: two, no pin
    assert installed_versions(tmp_path, [["numpy", "pandas>=1"], ["numpy==1.25.2"]]) == ["numpy==1.25.2", "six==1.17.0"]


def test_builds_side_by_side_make_one_wheel_builder(tmp_path, monkeypatch):
    """--jobs: two builds on one Python at once. The builder was made with no lock: each removed
    the other's half-made venv."""
    import threading

    from dgym_tui.batch import swebench_wheels
    from dgym_tui.batch.swebench_image import find_python

    monkeypatch.setattr(swebench_wheels, "wheel_cache", lambda version, as_of=None: tmp_path / "wheels" / f"py{version}")
    said, made, errors = [], [], []

    def job():
        try:
            made.append(swebench_wheels.wheel_builder(find_python("3.11"), "3.11", said.append))
        except Exception as e:  # raised in the test below
            errors.append(e)

    jobs = [threading.Thread(target=job) for _ in range(2)]
    for j in jobs:
        j.start()
    for j in jobs:
        j.join(600)
    assert not errors and len(made) == 2 and made[0] == made[1], errors
    assert sum("making a wheel builder" in line for line in said) == 1, said
    assert subprocess.run([made[0], "-m", "pip", "--version"], capture_output=True).returncode == 0


@pytest.mark.docker
def test_the_disk_of_images_sharing_layers_counts_them_once(tmp_path):
    """Two instance images on one environment image: the summary's disk, as the engine has it."""
    import io

    from conftest import SANDBOX_IMAGE, require_docker

    from dgym_tui.batch.swebench_validation import layer_disk, summary

    client = require_docker()
    names = {"env": "dgym-tui-test-layers:env", "a": "dgym-tui-test-layers:a", "b": "dgym-tui-test-layers:b"}
    steps = {"env": f"FROM {SANDBOX_IMAGE}\nRUN head -c 3000000 /dev/urandom > /tmp/env.bin\n",
             "a": f"FROM {names['env']}\nRUN head -c 1000000 /dev/urandom > /tmp/a.bin\n",
             "b": f"FROM {names['env']}\nRUN head -c 2000000 /dev/urandom > /tmp/b.bin\n"}
    try:
        for key in ("env", "a", "b"):
            client.images.build(fileobj=io.BytesIO(steps[key].encode()), tag=names[key], labels={"dgym-tui.test": "1"},
                                network_mode="none", rm=True)
        env_size = client.images.get(names["env"]).attrs["Size"]
        a_size, b_size = (client.images.get(names[k]).attrs["Size"] for k in ("a", "b"))
        on_disk, whole, found = layer_disk(client, [names["a"], names["b"], "dgym-tui-test-layers:gone"])
        assert found == 2 and whole == a_size + b_size
        assert on_disk == env_size + (a_size - env_size) + (b_size - env_size)  # the environment once
        rows = [{"repo": "o/r", "version": "1", "status": "validated", "match": True, "build_seconds": 1,
                 "own": 0, "size": client.images.get(names[k]).attrs["Size"], "image": names[k]} for k in ("a", "b")]
        assert f"{on_disk / 1e6:.0f} MB with their shared layers counted once" in summary(rows, client)
        assert "at most" in summary(rows)  # no engine: the report's upper bound
    finally:
        for key in ("a", "b", "env"):
            try:
                client.images.remove(names[key], force=True)
            except Exception:
                pass


def test_the_environment_gets_the_pip_and_setuptools_of_swebenchs_images():
    """pip 25.1 has no `setup.py develop` and setuptools 80 makes it a PEP 660 install whose import
    hook leaves /testbed off sys.path: pylint's suite then finds no checkers (its 'c-extension-no-
    member' unknown). The environment keeps the tools of SWE-bench's images; older Pythons the last
    that run on them."""
    from dgym_tui.batch.swebench_image import _setup_env
    from dgym_tui.batch.swebench_wheels import env_tools

    script = _setup_env("/opt/py/bin/python3.9", [["six"]], env_tools("3.9"))
    assert "python -m pip install -q 'pip==24.2' 'setuptools==75.1.0' 'wheel==0.44.0'" in script
    assert "--upgrade pip setuptools wheel" not in script
    assert env_tools("3.6") == ("pip==21.3.1", "setuptools==59.6.0", "wheel==0.37.1")


def test_a_submodule_comes_from_its_clone_at_the_recorded_commit_and_one_with_none_is_named(tmp_path):
    """astropy 1.3's astropy_helpers is a submodule: SWE-bench's build had it from the network."""
    from dgym_tui.batch.swebench_testbed import fill_submodules

    helpers = tmp_path / "work-helpers"
    helpers.mkdir()
    git(helpers, "init", "-q", "-b", "main")
    (helpers / "ah.py").write_text("OLD = 1\n")
    git(helpers, "add", "-A")
    git(helpers, "commit", "-q", "-m", "helpers 1")
    recorded = git(helpers, "rev-parse", "HEAD")
    (helpers / "ah.py").write_text("NEW = 2\n")
    git(helpers, "commit", "-q", "-am", "helpers 2")
    repos = tmp_path / "repos"
    subprocess.run(["git", "clone", "-q", "--mirror", str(helpers), str(repos / "astropy+astropy-helpers" / "repo")],
                   check=True)
    testbed = tmp_path / "testbed"
    testbed.mkdir()
    git(testbed, "init", "-q", "-b", "main")
    (testbed / "setup.py").write_text("import ah_bootstrap\n")
    (testbed / ".gitmodules").write_text(
        '[submodule "astropy_helpers"]\n\tpath = astropy_helpers\n\turl = https://github.com/astropy/astropy-helpers.git\n'
        '[submodule "cextern/gone"]\n\tpath = cextern/gone\n\turl = https://github.com/nobody/gone.git\n')
    git(testbed, "add", "-A")
    for path in ("astropy_helpers", "cextern/gone"):
        git(testbed, "update-index", "--add", "--cacheinfo", f"160000,{recorded},{path}")
    git(testbed, "commit", "-q", "-m", "base")
    filled, missing = fill_submodules(testbed, repos)
    assert filled == ["astropy_helpers"] and (testbed / "astropy_helpers" / "ah.py").read_text() == "OLD = 1\n"
    assert missing == [f"cextern/gone (https://github.com/nobody/gone.git at {recorded[:12]})"]
    assert git(testbed, "status", "--porcelain") == ""  # the superproject's status never shows them
    # initialised at the recorded commit, as astropy's bootstrap checks before it runs `git submodule
    # update --init` (which, with no network, failed the build)
    status = subprocess.run(["git", "-C", str(testbed), "submodule", "status", "--", "astropy_helpers"],
                            capture_output=True, text=True, check=True).stdout  # its first column, unstripped
    assert status.startswith(f" {recorded} astropy_helpers"), status
    assert git(testbed / "astropy_helpers", "remote", "get-url", "origin") == "https://github.com/astropy/astropy-helpers.git"
    assert git(testbed, "config", "submodule.astropy_helpers.url") == "https://github.com/astropy/astropy-helpers.git"


def test_packages_resolve_as_the_index_had_them_on_the_day_not_as_today(tmp_path):
    """Sphinx 3.x's images failed: its unpinned docutils resolved to today's release, which has no
    docutils.utils.roman. As of a day, pip takes that day's release; a find-links folder's files
    (no upload date: pip would take them whatever their release) are left out, the rest of pip's
    configuration kept."""
    from dgym_tui.batch.swebench_image import find_python
    from dgym_tui.batch.swebench_wheels import build_wheels, dated_sources, wheel_builder

    builder = wheel_builder(find_python("3.11"), "3.11", lambda line: None)  # a current pip, as builds have
    newer = tmp_path / "links"
    newer.mkdir()
    # a folder with today's docutils, as a machine's pip configuration may name one
    done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(newer),
                           "docutils==0.22"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    config = tmp_path / "pip.conf"
    config.write_text(f"[global]\nfind-links = {newer}\ntimeout = 77\n")
    env = {"PIP_CONFIG_FILE": str(config), "PIP_FIND_LINKS": str(newer)}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        sources = dated_sources(builder, "2024-10-01", tmp_path / "dated" / "pip.conf")
    finally:
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    assert sources.as_of == "2024-10-01" and "--uploaded-prior-to" in sources.args
    written = (tmp_path / "dated" / "pip.conf").read_text()
    assert "timeout = 77" in written and "find-links" not in written
    assert "PIP_FIND_LINKS" not in sources.env and sources.env["PIP_CONFIG_FILE"] == str(tmp_path / "dated" / "pip.conf")
    build_wheels(builder, [["docutils"]], tmp_path / "wheels", tmp_path / "cache", lambda line: None,
                 sources=sources)
    assert [w.name.split("-")[1] for w in (tmp_path / "wheels").glob("docutils-*.whl")] == ["0.21.2"]
    # no day: today's release
    assert dated_sources(builder, None, tmp_path / "unused.conf").as_of is None


def test_a_pip_with_no_dated_resolution_resolves_as_today_and_says_so():
    """Python 3.8's last pip (25.0.1) has no --uploaded-prior-to: no day is claimed for it."""
    from dgym_tui.batch.swebench_image import find_python
    from dgym_tui.batch.swebench_wheels import LAST_TOOLS, dated_sources, wheel_builder

    python = find_python("3.8")
    builder = wheel_builder(python, "3.8", lambda line: None)
    assert subprocess.run([builder, "-m", "pip", "--version"], capture_output=True, text=True).stdout.startswith(
        LAST_TOOLS["3.8"][0].replace("==", " "))
    assert dated_sources(builder, "2024-10-01", Path("/nonexistent/pip.conf")).as_of is None


def test_validation_gives_a_test_more_time_than_a_trial_does(monkeypatch, tmp_path):
    """SWE-bench's validation has no limit per test: a slow one (seaborn's test_relplot_complex,
    20 s beside two builds) cut off by the trials' 20 s counted as failing at the base. The whole
    run has a limit of its own, under the harness's 30 minutes: a suite no per-test limit reaches
    (sympy's bin/test, hung for some hash seeds) is run again rather than waited on."""
    from dgym_tui.batch import swebench, swebench_validation
    from dgym_tui.core.test_runs import DEFAULT_TEST_TIMEOUT

    limits, suites = [], []

    class Scorer:
        log = "log"

        def __init__(self, task, repo_dir, test_timeout=None, suite_timeout=swebench.SUITE_TIMEOUT):
            limits.append(test_timeout)
            suites.append(suite_timeout)

        def statuses_with(self, patch):
            return {"t::a": "PASSED" if patch else "FAILED", "t::b": "PASSED"}

        def close(self):
            pass
    monkeypatch.setattr(swebench, "HarnessScorer", Scorer)
    monkeypatch.setattr(swebench, "environment", lambda record, instance_id: ("image", ""))
    got = swebench_validation.validate({"instance_id": "x", "repo": "o/r", "base_commit": "abc", "patch": "p"},
                                       lambda line: None, tmp_path / "logs")
    assert limits == [swebench_validation.VALIDATION_TEST_TIMEOUT] and limits[0] >= 10 * DEFAULT_TEST_TIMEOUT
    assert suites == [swebench_validation.VALIDATION_SUITE_TIMEOUT]
    assert swebench_validation.VALIDATION_SUITE_TIMEOUT < swebench.SUITE_TIMEOUT
    assert json.loads(got["FAIL_TO_PASS"]) == ["t::a"] and json.loads(got["PASS_TO_PASS"]) == ["t::b"]


def test_a_test_the_dataset_names_by_its_ids_first_word_is_the_same_test():
    """sphinx-10451: the dataset was made with a log parser that kept a test id's first word
    (`…[x,`); today's reads it whole (`…[x, y, z-x, y, z]`). The environment is right (the test
    passes), and the report says the harness will not find the dataset's name."""
    whole, cut = "t.py::T::test_e[x, y, z-x, y, z]", "t.py::T::test_e[x,"
    dataset = {"FAIL_TO_PASS": json.dumps(["t.py::f"]), "PASS_TO_PASS": json.dumps([cut, "t.py::g"])}
    computed = {"FAIL_TO_PASS": json.dumps(["t.py::f"]), "PASS_TO_PASS": json.dumps([whole, "t.py::g"]),
                "statuses": {"before": {"t.py::f": "FAILED", whole: "PASSED", "t.py::g": "PASSED"},
                             "after": {"t.py::f": "PASSED", whole: "PASSED", "t.py::g": "PASSED"}}}
    got = compare(dataset, computed)
    assert got["match"] is True and got["first_word_ids"] == {"count": 1, "tests": [cut]}
    assert got["graded"] is False  # by the name the dataset gives, the harness finds no such test
    table = summary([{"instance_id": "a", "repo": "sphinx-doc/sphinx", "version": "5.1", "status": "validated",
                      "build_seconds": 1, "own": 0, **got}])
    assert "1× the dataset names tests by their ids' first word" in table
    # a name the dataset has whole is not cut, and one whose first word it lacks stays as it is
    other = {"FAIL_TO_PASS": json.dumps(["t.py::f"]), "PASS_TO_PASS": json.dumps(["t.py::T::test_e[p, q]", "t.py::g"]),
             "statuses": {"before": {}, "after": {"t.py::T::test_e[p, q]": "PASSED"}}}
    lost = compare(dataset, other)
    assert lost["lost_p2p"]["tests"] == [f"{cut} (not run)"] and "first_word_ids" not in lost

