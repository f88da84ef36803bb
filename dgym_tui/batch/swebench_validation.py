"""SWE-bench rows built and validated as a whole (`dgym-tui image swebench FILE --validate OUT`):
each instance's FAIL_TO_PASS and PASS_TO_PASS computed as SWE-bench's validation does, compared
with the dataset's own lists, and reported.

- An instance validates to the dataset when its FAIL_TO_PASS is the dataset's and every test of
  the dataset's PASS_TO_PASS still passes (more may: a suite that grew is not a wrong environment).
- The report (OUT.report.jsonl) has a row per instance: built or the one-line cause, seconds,
  sizes, the counts, whether they match, and the tests that differ. It is rewritten after every
  instance, so a run that is stopped loses nothing, and a new run does not redo what it holds.
- Each instance's logs (the build, the eval script at the base and with the gold patch) are kept
  in OUT.logs/<instance id>/.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from dgym_tui.batch.swebench_wheels import BuildError

SHOWN = 20  # tests that differ, listed per kind in a report row (all are counted)


def listed_tests(value) -> list[str]:
    """A dataset's test field as a list: a list, or a JSON string of one (as the dataset has it)."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except ValueError:
            return []
    return [str(t) for t in value or []]


# A test's own limit while the lists are computed: SWE-bench's validation has none but the whole
# run's, and a slow test (seaborn's test_relplot_complex, about 20 s with two builds beside it)
# that the trials' 20 s cut off was counted failing at the base: a FAIL_TO_PASS the dataset lacks.
VALIDATION_TEST_TIMEOUT = 300.0
# Runs of a row that differs from the dataset, in all: some suites differ from run to run (sympy
# 1.1's bin/test under hash randomization, whose assumptions recurse without end for some seeds),
# and one run that gives the dataset's lists shows the environment can. The report says which run.
VALIDATION_ATTEMPTS = 3
# A run's limit in validation (the harness's is 30 min): a suite no per-test limit reaches (sympy's
# bin/test) can hang for some hash seeds, and is run again rather than waited on.
VALIDATION_SUITE_TIMEOUT = 900.0


def validate(record: dict, progress: Callable[[str], None] = print, logs: Path | None = None) -> dict:
    """FAIL_TO_PASS and PASS_TO_PASS as SWE-bench's validation computes them, in a fresh container
    of the instance's image: the harness's eval script (which applies the test patch) at the base,
    then, the tree reset, with the gold patch; each log read by the repository's log parser.
    Returns the record with both lists (JSON strings, as the dataset has them) and "statuses":
    {"before", "after"}; the two logs go to `logs`. BuildError: the image is missing or a run
    failed."""
    from dgym_tui.batch.spec import Task
    from dgym_tui.batch.swebench import HarnessScorer, environment
    from dgym_tui.sandbox.errors import SandboxError

    env, note = environment(record, record.get("instance_id", "?"))
    if env is None:
        raise BuildError(note)
    task = Task(id=record["instance_id"], repo=record["repo"], base_commit=record["base_commit"], problem=None,
                entrypoint=None, fail_to_pass=[], pass_to_pass=[], test_patch=record.get("test_patch"),
                test_files=[], environment=env)
    runs = {}
    scorer = HarnessScorer(task, "/dev/null", test_timeout=VALIDATION_TEST_TIMEOUT,
                           suite_timeout=VALIDATION_SUITE_TIMEOUT)
    try:
        for name, patch in (("before", ""), ("after", record.get("patch") or "")):
            progress(f"{task.id}: the eval script, {'with the gold patch' if patch else 'at the base'}…")
            try:
                runs[name] = scorer.statuses_with(patch)
            except SandboxError as e:
                raise BuildError(f"{task.id}: {'the gold patch' if patch else 'the base'}: {e}") from None
            finally:
                if logs is not None and scorer.log:
                    logs.mkdir(parents=True, exist_ok=True)
                    (logs / f"{name}.log").write_text(scorer.log)
    finally:
        scorer.close()
    good = ("PASSED", "XFAIL")
    before, after = runs["before"], runs["after"]
    f2p = sorted(t for t, s in after.items() if s in good and before.get(t) not in good)
    p2p = sorted(t for t, s in after.items() if s in good and before.get(t) in good)
    return {**record, "FAIL_TO_PASS": json.dumps(f2p), "PASS_TO_PASS": json.dumps(p2p),
            "statuses": {"before": before, "after": after}}


# What a test says when it reached for a host a container with no network cannot have (or, for
# httpbin.org, a served one whose certificate is not the real host's).
NETWORK_ERROR = re.compile(r"Temporary failure in name resolution|Name or service not known|Network is unreachable|"
                           r"No route to host|nodename nor servname|getaddrinfo failed|\[Errno -[235]\]|"
                           r"Failed to establish a new connection|ConnectTimeout|Max retries exceeded with url: .*https?://|"
                           # a served host's certificate, where only the real host's chains to the bundle
                           r"certificate verify failed|CERTIFICATE_VERIFY_FAILED")


def network_bound(log: str) -> set[str]:
    """The tests whose failure, in a pytest log's FAILURES section, is a network error: their names
    as the section headers give them (`Class.test_name`, `test_name[param]`)."""
    found, name = set(), None
    for line in log.splitlines():
        header = re.match(r"^_{3,} (\S.*?) _{3,}$", line)
        if header:
            name = header.group(1)
        elif name and NETWORK_ERROR.search(line):
            found.add(name)
    return found


def _is_named(test: str, names: set[str]) -> bool:
    """A test id (`file::Class::test`) is one of the section names (`Class.test`)."""
    dotted = test.split("::", 1)[-1].replace("::", ".")
    return any(dotted == n or dotted.endswith("." + n) or test.endswith(n) for n in names)


def _dataset_name(test: str, wanted: set[str]) -> str:
    """A test id as the dataset writes it: the parser it was made with kept an id's first word
    only (sphinx's `test_escape_args_and_kwargs[x,` for `…[x, y, z-x, y, z]`), where today's
    parser reads the id whole."""
    first = test.split(" ", 1)[0]
    return first if first != test and test not in wanted and first in wanted else test



def compare(dataset: dict, computed: dict, logs: dict[str, str] | None = None) -> dict:
    """How the computed lists stand to the dataset's: {"match": True/False (None when the dataset
    has no lists), "missing_f2p", "extra_f2p", "lost_p2p"} (each the count and the first tests,
    a test with its status after the gold patch)."""
    want_f2p, want_p2p = set(listed_tests(dataset.get("FAIL_TO_PASS"))), set(listed_tests(dataset.get("PASS_TO_PASS")))
    wanted = want_f2p | want_p2p
    got_f2p = {_dataset_name(t, wanted) for t in listed_tests(computed.get("FAIL_TO_PASS"))}
    got_p2p = {_dataset_name(t, wanted) for t in listed_tests(computed.get("PASS_TO_PASS"))}
    raw_after = (computed.get("statuses") or {}).get("after") or {}
    raw_before = (computed.get("statuses") or {}).get("before") or {}
    after = {_dataset_name(t, wanted): v for t, v in raw_after.items()}
    before = {_dataset_name(t, wanted): v for t, v in raw_before.items()}
    first_word = sorted(set(after) - set(raw_after))  # the names only the dataset's cut gives

    def shown(tests, statuses=None):
        ordered = sorted(tests)
        return {"count": len(ordered), "tests": [f"{t} ({statuses.get(t, 'not run')})" if statuses is not None else t
                                                 for t in ordered[:SHOWN]]}
    if not want_f2p:
        return {"match": None}
    differ = {"missing_f2p": shown(want_f2p - got_f2p, after), "extra_f2p": shown(got_f2p - want_f2p, before),
              "lost_p2p": shown(want_p2p - got_p2p, after)}
    match = not (differ["missing_f2p"]["count"] or differ["extra_f2p"]["count"] or differ["lost_p2p"]["count"])
    # What scoring needs of the environment, by the dataset's own lists as the harness grades them:
    # the gold patch resolved (every listed test passing) and the base not (a FAIL_TO_PASS failing).
    passed = ("PASSED", "XFAIL")
    # (by the names the harness's parser gives today: a test the dataset names by its id's first
    # word alone is not found there, and the gold patch is not graded resolved)
    graded = (all(raw_after.get(t) in passed for t in wanted)
              and not all(raw_before.get(t) in passed for t in want_f2p))
    out = {"match": match, "graded": graded, **{k: v for k, v in differ.items() if v["count"]}}
    if first_word:
        out["first_word_ids"] = {"count": len(first_word), "tests": first_word[:SHOWN]}
    # the dataset's tests that fail here for want of a network (SWE-bench ran them with one)
    offline = network_bound((logs or {}).get("after", ""))
    needs = sorted(t for t in (want_f2p - got_f2p) | (want_p2p - got_p2p) if _is_named(t, offline))
    if needs:
        out["needs_network"] = {"count": len(needs), "tests": needs[:SHOWN]}
    # an xfail-marked test that passed in one run: pytest says XPASS, which no parser records, so
    # the test is "not run" there (pylint-7114's epylint test, xfail for its flakiness)
    xpassed = {t for name in ("before", "after") for t in re.findall(r"^XPASS (\S+)", (logs or {}).get(name, ""), re.M)}
    flaky = sorted(t for t in (want_f2p ^ got_f2p) | (want_p2p - got_p2p) if t in xpassed)
    if flaky:
        out["xpassed"] = {"count": len(flaky), "tests": flaky[:SHOWN]}
    return out


# --- a whole file of rows --------------------------------------------------------------------------


class Report:
    """OUT.report.jsonl: a row per instance, rewritten whole (atomically) after each one."""

    def __init__(self, out: Path):
        self.path = Path(f"{out}.report.jsonl")
        self.logs = Path(f"{out}.logs")
        self.out = out
        self.rows: dict[str, dict] = {}
        self.records: dict[str, dict] = {}  # validated records, as OUT lists them
        self._lock = threading.Lock()
        if self.path.is_file():
            for line in self.path.read_text().splitlines():
                try:
                    row = json.loads(line)
                except ValueError:
                    continue  # a torn last line: that instance is done again
                self.rows[row["instance_id"]] = row
        if out.is_file():
            for line in out.read_text().splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                self.records[record["instance_id"]] = record

    def done(self, instance_id: str, builder: str, validating: bool, validator: str | None = None) -> bool:
        """Built (and validated, when asked) by this same builder and, for a validated row, the
        same validating code: not redone. A row of another validator is validated again (its
        image, of the same builder, is found and kept)."""
        row = self.rows.get(instance_id)
        if not row or row.get("builder") != builder:
            return False
        if row["status"] == "validated":
            return validator is None or row.get("validator") == validator
        return row["status"] == "built" and not validating

    def put(self, row: dict, record: dict | None = None) -> None:
        with self._lock:
            self.rows[row["instance_id"]] = row
            if record is not None:
                self.records[row["instance_id"]] = record
            _write_lines(self.path, self.rows.values())
            if record is not None or self.records:
                _write_lines(self.out, self.records.values())


def _write_lines(path: Path, rows) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as fh:
        fh.writelines(json.dumps(row) + "\n" for row in rows)
    os.replace(tmp, path)


@functools.cache
def validator_digest() -> str:
    """The code that validates (this module, and the harness's runs and log reading in
    swebench.py): a row validated by other code is validated again."""
    here = Path(__file__).parent
    digest = hashlib.sha256()
    for name in ("swebench_validation.py", "swebench.py"):
        digest.update((here / name).read_bytes())
    return digest.hexdigest()[:16]


# Set when the run is being stopped (Ctrl-C, SIGTERM, SIGHUP: commands/image.py): what ends after
# that ended because its containers were removed, and is not written as the instance's result.
STOPPING = threading.Event()


def run_all(records: list[dict], repos: str, out: Path | None, *, jobs: int = 1, base: str | None = None,
            rebuild: bool = False, say: Callable[[str], None] = print) -> list[dict]:
    """Build (and, with `out`, validate) every record, `jobs` at a time, each with its logs; the
    report's rows for these records, in their order. What `out`'s report says was done by this
    builder is not done again (unless `rebuild`)."""
    from dgym_tui.batch.swebench_image import build, builder_digest

    builder, validator = builder_digest(), validator_digest()
    report = Report(out) if out is not None else None
    todo = [r for r in records if rebuild or report is None
            or not report.done(r["instance_id"], builder, validating=True, validator=validator)]
    skipped = len(records) - len(todo)
    if skipped:
        say(f"{skipped} of {len(records)} instances already built and validated by this builder (kept)")
    clock = {"done": 0, "seconds": 0.0}
    lock = threading.Lock()
    finished: dict[str, dict] = dict(report.rows) if report else {}

    def one(record: dict) -> dict:
        instance_id = record.get("instance_id", "?")
        logs = report.logs / instance_id if report else None
        if logs is not None:
            logs.mkdir(parents=True, exist_ok=True)
        log_file = open(logs / "build.log", "w") if logs is not None else None
        quiet = jobs > 1  # lines of several builds at once would interleave: they go to the logs only

        def progress(line: str) -> None:
            if log_file:
                log_file.write(line + "\n")
                log_file.flush()
            if not quiet:
                say(f"  {line}")
        row = {"instance_id": instance_id, "repo": record.get("repo"), "version": str(record.get("version")),
               "builder": builder, "validator": validator, "dataset_f2p": len(listed_tests(record.get("FAIL_TO_PASS"))),
               "dataset_p2p": len(listed_tests(record.get("PASS_TO_PASS")))}
        started = time.monotonic()
        checked = None
        try:
            built = build(record, repos, base=base, rebuild=rebuild, progress=progress)
            row.update(status="built", build_seconds=built["seconds"], size=built["size"], own=built["own"],
                       env=built.get("env"), env_size=built.get("env_size", 0), testbed=built["testbed"],
                       image=built["image"])
            for key in ("left_out", "serves"):  # conda packages PyPI has no release of; hosts served inside
                if built.get(key):
                    row[key] = built[key]
            verb = f"built in {built['seconds']:g} s" if built["built"] else "already built"
            say(f"{instance_id}: {built['image']} {verb} ({built['size'] / 1e6:.0f} MB, "
                f"{built['own'] / 1e6:.0f} MB its own)")
            if report is not None:
                v_started = time.monotonic()
                for attempt in range(1, VALIDATION_ATTEMPTS + 1):
                    checked = validate(record, progress=progress, logs=logs)
                    compared = compare(record, checked, _logs(logs))
                    if not _may_differ_by_run(compared) or attempt == VALIDATION_ATTEMPTS:
                        break
                    _keep_attempt(logs, attempt)
                    progress(f"{instance_id}: differs from the dataset; validating again "
                             f"({attempt + 1} of {VALIDATION_ATTEMPTS}: tests that differ from run to run)")
                row.update(status="validated", validate_seconds=round(time.monotonic() - v_started, 1),
                           f2p=len(listed_tests(checked["FAIL_TO_PASS"])), p2p=len(listed_tests(checked["PASS_TO_PASS"])),
                           attempts=attempt, **compared)
                checked.pop("statuses")
        except Exception as e:  # noqa: BLE001 — one instance's failure is its row's cause, never the run's end
            cause = str(e) if isinstance(e, (BuildError, RuntimeError)) else f"{type(e).__name__}: {e}"
            row.update(status="failed", cause=cause.splitlines()[0][:500] if cause else type(e).__name__)
        finally:
            if log_file:
                log_file.close()
        row["seconds"] = round(time.monotonic() - started, 1)
        if STOPPING.is_set():  # its containers were removed under it: not a result, redone next run
            return row
        if report is not None:
            report.put(row, checked)
        with lock:
            finished[instance_id] = row
            clock["done"] += 1
            clock["seconds"] += row["seconds"]
            left = len(todo) - clock["done"]
            eta = clock["seconds"] / clock["done"] * left / max(1, jobs)
            say(f"[{clock['done'] + skipped}/{len(records)}] {_line(row)}"
                + (f" · ETA {_duration(eta)}" if left else ""))
        return row

    if jobs > 1:
        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="dgym-build") as pool:
            list(pool.map(one, todo))
    else:
        for record in todo:
            one(record)
    return [finished[r["instance_id"]] for r in records if r["instance_id"] in finished]


def _may_differ_by_run(compared: dict) -> bool:
    """A row that differs for another reason than tests that need the network, which fail on every
    run. (A FAIL_TO_PASS test that passes at the base may fail there for another seed: sympy 1.1's
    test_mod_inverse recurses without end for some.)"""
    return compared.get("match") is False and not set(_differ_kinds(compared)) <= {NEEDS_NETWORK}


def _keep_attempt(folder: Path | None, attempt: int) -> None:
    """An attempt's logs kept beside the next one's (before.1.log, after.1.log)."""
    for name in ("before", "after"):
        if folder is not None and (folder / f"{name}.log").is_file():
            (folder / f"{name}.log").replace(folder / f"{name}.{attempt}.log")


def _logs(folder: Path | None) -> dict[str, str]:
    if folder is None:
        return {}
    return {name: (folder / f"{name}.log").read_text(errors="replace") for name in ("before", "after")
            if (folder / f"{name}.log").is_file()}


def _line(row: dict) -> str:
    """A report row in one line."""
    head = f"{row['instance_id']}: "
    if row["status"] == "failed":  # the cause names the instance
        return f"FAILED {row.get('cause', '')}"
    if row["status"] == "built":
        return head + f"built ({row['seconds']:g} s)"
    said = f"FAIL_TO_PASS {row['f2p']} tests, PASS_TO_PASS {row['p2p']}"
    if row.get("match") is True:
        said += " · matches the dataset" + (f" (run {row['attempts']})" if row.get("attempts", 1) > 1 else "")
    elif row.get("match") is False:
        parts = [f"{row[k]['count']} {k.replace('_', ' ')}" for k in ("missing_f2p", "extra_f2p", "lost_p2p") if k in row]
        if row.get("needs_network"):
            parts.append(f"{row['needs_network']['count']} of them need the network")
        said += f" · differs from the dataset ({', '.join(parts)}"
        said += f"; in each of {row['attempts']} runs)" if row.get("attempts", 1) > 1 else ")"
        if row.get("graded"):
            said += " · graded as the dataset (gold resolved, base not)"
    if row.get("left_out"):  # an environment.yml's conda packages that PyPI has no release of
        said += f" · left out (not on the package index): {', '.join(row['left_out'])}"
    return head + said + f" ({row['seconds']:g} s)"


def _duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes // 60}h{minutes % 60:02d}m" if minutes >= 60 else f"{minutes}m{int(seconds % 60):02d}s"


def layer_disk(client, images: list[str]) -> tuple[int, int, int]:
    """(bytes on disk with shared layers counted once, bytes as whole images, images found) for
    these images, from the engine's own histories: a layer is the step that made it together with
    every step below it, so two images share exactly the steps they were built from in common
    (the Python, the environment), whatever the storage driver."""
    layers: dict[tuple, int] = {}
    whole = found = 0
    for name in images:
        try:
            history = client.api.history(name)
        except Exception:  # pruned, or never built: left out of both figures
            continue
        found += 1
        chain: tuple = ()
        for step in reversed(history):  # oldest first
            chain = (chain, step.get("Created"), step.get("CreatedBy"), step.get("Size", 0))
            layers[chain] = int(step.get("Size") or 0)
            whole += int(step.get("Size") or 0)
    return sum(layers.values()), whole, found


def summary(rows: list[dict], client=None) -> str:
    """A markdown table per repository and version: rows, built, validated, matching the dataset,
    graded as the dataset (its lists give the gold patch resolved and the base not), the median
    build time, the instances' own disk, and the causes of the others. With an engine
    (`client`), the images' disk as measured there, shared layers once."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for row in rows:
        groups[(row.get("repo") or "?", str(row.get("version")))].append(row)
    lines = ["| repository | version | rows | built | validated | match the dataset | graded as the dataset | "
             "median build s | own disk | causes |", "|---|---|---|---|---|---|---|---|---|---|"]
    totals = defaultdict(float)
    for (repo, version), group in sorted(groups.items()):
        built = [r for r in group if r["status"] in ("built", "validated")]
        validated = [r for r in group if r["status"] == "validated"]
        match = [r for r in validated if r.get("match") is True]
        graded = [r for r in validated if r.get("graded")]
        causes = defaultdict(int)
        for r in group:
            if r["status"] == "failed":
                causes[_cause_kind(r.get("cause", ""))] += 1
            elif r.get("match") is False:
                causes[differ_cause(r)] += 1
            if r.get("match") is True and r.get("attempts", 1) > 1:
                causes["matched on a later run (the first differed: tests that differ from run to run)"] += 1
            if r.get("first_word_ids") and not r.get("graded"):
                causes["the dataset names tests by their ids' first word, which the harness's parser no longer "
                       "gives: not graded"] += 1
            if r.get("left_out"):
                causes[f"conda packages left out: {', '.join(r['left_out'])}"] += 1
        times = [r["build_seconds"] for r in built if r.get("build_seconds")]
        own = sum(r.get("own", 0) for r in built)
        median = f"{statistics.median(times):.0f}" if times else "-"
        lines.append(f"| {repo} | {version} | {len(group)} | {len(built)} | {len(validated)} | {len(match)} | "
                     f"{len(graded)} | {median} | {own / 1e6:.0f} MB | "
                     f"{'; '.join(f'{n}× {why}' for why, n in causes.items()) or '-'} |")
        for key, n in (("rows", len(group)), ("built", len(built)), ("validated", len(validated)),
                       ("match", len(match)), ("graded", len(graded)), ("own", own)):
            totals[key] += n
    lines.append(f"| all | | {totals['rows']:.0f} | {totals['built']:.0f} | {totals['validated']:.0f} | "
                 f"{totals['match']:.0f} | {totals['graded']:.0f} | | {totals['own'] / 1e6:.0f} MB | |")
    built = [r for r in rows if r["status"] in ("built", "validated")]
    if built:
        envs = {r.get("env"): r.get("env_size", 0) for r in built if r.get("env")}
        shared = sum(r.get("own", 0) for r in built) + sum(envs.values())
        whole = sum(r.get("size", 0) for r in built)
        measured = layer_disk(client, [r["image"] for r in built if r.get("image")]) if client is not None else None
        if measured and measured[2]:
            on_disk, as_whole, found = measured
            lines.append(f"\nDisk for the {found} images on this engine: {_bytes(on_disk)} with their shared layers "
                         f"counted once, {_bytes(as_whole)} as whole images ({as_whole / max(on_disk, 1):.1f}x).")
        else:
            lines.append(f"\nDisk for the {len(built)} images: at most {_bytes(shared)} with shared layers (the "
                         f"instances' own layers and {len(envs)} environment images, each counted whole though they "
                         f"share their Python and base), {_bytes(whole)} as whole images.")
    return "\n".join(lines) + "\n"


def differ_cause(row: dict) -> str:
    """Why a validated row differs from the dataset, by kind: the dataset's tests that fail here for
    want of a network, its FAIL_TO_PASS tests that pass here at the base too (they failed where
    the dataset was made: a flaky host, SWE-bench's own note on requests), xfail-marked tests that
    passed in a run (XPASS), anything else."""
    return " and ".join(_differ_kinds(row)) or "differs from the dataset"


NEEDS_NETWORK = "tests that need the network"
PASS_AT_BASE = "FAIL_TO_PASS tests that pass here at the base"


def _differ_kinds(row: dict) -> list[str]:
    network = set(row.get("needs_network", {}).get("tests", []))
    xpassed = set(row.get("xpassed", {}).get("tests", []))
    passing = {t.rsplit(" (", 1)[0] for t in row.get("missing_f2p", {}).get("tests", []) if t.endswith("(PASSED)")}
    shown = [t.rsplit(" (", 1)[0] for k in ("missing_f2p", "lost_p2p", "extra_f2p") for t in row.get(k, {}).get("tests", [])]
    kinds = []
    if network:
        kinds.append(NEEDS_NETWORK)
    if passing - network:
        kinds.append(PASS_AT_BASE)
    if xpassed:
        kinds.append("xfail-marked tests that pass in one of the runs (XPASS, which the log parser does not record)")
    if any(t not in network and t not in passing and t not in xpassed for t in shown):
        lost = re.match(r"archive \(the mirror lost ([^;)]*)", row.get("testbed") or "")
        # files of the base the clone has no object of, left out of /testbed: the likelier cause
        kinds.append(f"differs from the dataset, with files of the base the clone lacks ({lost.group(1)})" if lost
                     else "differs from the dataset")
    return kinds


def _bytes(n: float) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def _cause_kind(cause: str) -> str:
    """A failure's cause without its instance's own details, to count alike causes together."""
    text = cause.split(": ", 1)[1] if ": " in cause else cause
    return text[:90]
