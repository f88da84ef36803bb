"""`dgym-tui image build`: build the sandbox image from sandbox/Dockerfile through the Docker SDK.
`dgym-tui image swebench`: build SWE-bench instances' environment images offline (batch/swebench_image)."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Callable
from pathlib import Path

from dgym_tui.sandbox import SandboxError
from dgym_tui.sandbox.docker_sandbox import DEFAULT_IMAGE, connect

DEFAULT_BASE = "python:3.12-slim"
# A build step (apt-get on a slow mirror) may print nothing for a long while: the engine's
# answer may take this long between two lines before the build counts as stuck.
BUILD_TIMEOUT = 3600


def dockerfile_path() -> Path:
    """sandbox/Dockerfile in a checkout, dgym_tui/sandbox/Dockerfile once installed."""
    import dgym_tui.sandbox

    return Path(dgym_tui.sandbox.__file__).resolve().parent / "Dockerfile"


def _context() -> io.BytesIO:
    # Only the Dockerfile: the image needs nothing else, and a small context builds fast.
    buf = io.BytesIO()
    data = dockerfile_path().read_bytes()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return buf


def build_image(base: str = DEFAULT_BASE, tag: str = DEFAULT_IMAGE, network: str | None = None,
                progress: Callable[[str], None] = print) -> str:
    """Build the image, streaming each line of progress; returns the image id."""
    client = connect(timeout=10, call_timeout=60)
    progress(f"building {tag} from {dockerfile_path()} on base {base}")
    import docker
    import requests

    try:
        image_id = _build(client, base, tag, network, progress)
    except (docker.errors.DockerException, requests.exceptions.RequestException, OSError) as e:
        from dgym_tui.sandbox.docker_sandbox import short_error

        raise SandboxError(f"image build failed: the Docker engine stopped answering ({short_error(e)})") from None
    progress(f"built {tag}")
    return image_id or tag


def _build(client, base: str, tag: str, network: str | None, progress: Callable[[str], None]) -> str | None:
    image_id = None
    for chunk in client.api.build(fileobj=_context(), custom_context=True, tag=tag, rm=True,
                                  forcerm=True, buildargs={"BASE": base}, decode=True,
                                  network_mode=network, labels={"dgym-tui.app": "image"},
                                  timeout=BUILD_TIMEOUT):
        if "stream" in chunk:
            for line in chunk["stream"].splitlines():
                if line.strip():
                    progress(line)
        elif "status" in chunk:
            progress(f"{chunk['status']} {chunk.get('progress', '')}".rstrip())
        elif "aux" in chunk and "ID" in chunk["aux"]:
            image_id = chunk["aux"]["ID"]
        elif "error" in chunk:
            msg = chunk["error"].strip().splitlines()[-1]
            if "pull access denied" in msg or "not found" in msg or "no such host" in msg:
                msg += " (no registry? build a base offline: sandbox/build-offline-base.sh, then --base dgym-tui-base:offline)"
            raise SandboxError(f"image build failed: {msg}")
    return image_id


def parser():
    import argparse

    p = argparse.ArgumentParser(prog="dgym-tui image", description="Build the sandbox image, or SWE-bench instances' environment images.")
    sub = p.add_subparsers(dest="action", required=True)
    b = sub.add_parser("build", help="build the sandbox image from sandbox/Dockerfile",
                       description="Build the sandbox image through the Docker engine, streaming progress.")
    b.add_argument("--base", default=DEFAULT_BASE,
                   help=f"base image with python3 (default: {DEFAULT_BASE}; offline: dgym-tui-base:offline "
                        "from sandbox/build-offline-base.sh)")
    b.add_argument("--tag", default=DEFAULT_IMAGE, help=f"tag of the result (default: {DEFAULT_IMAGE})")
    b.add_argument("--network", help="network for the build's RUN steps (default: the engine's)")
    s = sub.add_parser(
        "swebench", help="build SWE-bench instances' environment images here, with no conda and no registry",
        description="Build each instance's environment image as swebench names it, from this machine: the "
                    "spec's Python (pyenv's), its packages and pins as wheels built by that Python's pip, the "
                    "repository at its base commit (from --repos) in /testbed with the spec's install steps. "
                    "The build itself runs with no network. An instance that cannot be built says why in one "
                    "line; the others go on.")
    s.add_argument("instances", metavar="INSTANCES", help="a JSON-lines file of SWE-bench instances (the dataset's "
                   "fields: repo, instance_id, version, base_commit, environment_setup_commit, test_patch, …)")
    s.add_argument("--coverage", action="store_true", help="build nothing: say per repository how many of the "
                   "instances get pdb (their spec's Python is 3.6 or newer, with a test command), and why not")
    s.add_argument("--repos", metavar="DIR",
                   help="folder of local clones: DIR/owner+name (a mirror), DIR/owner/name or DIR/name")
    s.add_argument("--base", default=DEFAULT_IMAGE, help=f"the image built upon (default: {DEFAULT_IMAGE})")
    s.add_argument("--only", action="append", metavar="ID", default=[], help="build only this instance (repeatable)")
    s.add_argument("--rebuild", action="store_true", help="build even when an image of the same inputs is there")
    s.add_argument("--validate", metavar="OUT", help="then compute each instance's FAIL_TO_PASS and PASS_TO_PASS as "
                   "SWE-bench's validation does (the eval script at the base and with the gold patch, read by the "
                   "repository's log parser) and write the instances with them to OUT (JSON lines); beside it, "
                   "OUT.report.jsonl (a row per instance: built or why not, seconds, sizes, whether the lists match "
                   "the dataset's, the tests that differ) and OUT.logs/ID/ (the build's and both runs' logs). "
                   "A row that differs is validated again, up to 3 runs. "
                   "Run again, it does not redo what the report holds")
    s.add_argument("--jobs", type=int, default=1, metavar="N", help="build and validate N instances at a time "
                   "(default 1); with more, each build's lines go to its log only")
    s.add_argument("--summary", action="store_true", help="build nothing: print the per-repository table of "
                   "OUT.report.jsonl (with --validate OUT)")
    return p


def main(argv: list[str]) -> int:
    """`dgym-tui image build` and `dgym-tui image swebench`."""
    args = parser().parse_args(argv)
    if args.action == "swebench":
        return build_swebench(args)
    build_image(base=args.base, tag=args.tag, network=args.network)
    return 0


def build_swebench(args) -> int:
    import sys

    from dgym_tui.batch.swebench_image import read_records
    from dgym_tui.batch.swebench_validation import Report, run_all, summary

    if args.summary:
        if not args.validate:
            print("dgym-tui image swebench: --summary reads the report of --validate OUT", file=sys.stderr)
            return 2
        report = Report(Path(args.validate))
        if not report.rows:
            print(f"dgym-tui: {report.path}: no report there", file=sys.stderr)
            return 2
        print(summary(list(report.rows.values()), _engine()), end="")
        return 0
    try:
        records = read_records(args.instances)
    except (OSError, ValueError) as e:
        print(f"dgym-tui: {args.instances}: cannot read instances: {e}", file=sys.stderr)
        return 2
    if args.coverage:
        return print_coverage(records)
    if not args.repos:
        print("dgym-tui image swebench: --repos DIR is needed to build (a folder of local clones)", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("dgym-tui image swebench: --jobs must be 1 or more", file=sys.stderr)
        return 2
    if args.only:
        records = [r for r in records if r.get("instance_id") in args.only]
        if not records:
            print(f"dgym-tui: {args.instances}: no instance {', '.join(args.only)}", file=sys.stderr)
            return 2
    _stop_cleanly()
    rows = run_all(records, args.repos, Path(args.validate) if args.validate else None, jobs=args.jobs,
                   base=args.base, rebuild=args.rebuild, say=lambda line: print(line, flush=True))
    from dgym_tui.batch.swebench_validation import STOPPING

    if STOPPING.is_set():  # stopped by a signal: what finished is in the report; nothing more to say
        return 130
    if args.validate:
        print(f"\n{summary(rows, _engine())}", end="", flush=True)
        print(f"report: {args.validate}.report.jsonl; logs: {args.validate}.logs/", flush=True)
    return 1 if any(r["status"] == "failed" for r in rows) else 0


def print_coverage(records: list[dict]) -> int:
    """A markdown table: per repository, its instances, how many get pdb, and the others' reasons."""
    from dgym_tui.batch.swebench_specs import coverage

    rows = coverage(records)
    total, with_pdb = 0, 0
    print("| repository | instances | pdb | without pdb |")
    print("|---|---|---|---|")
    for repo, counts in rows.items():
        others = ", ".join(f"{n} {why}" for why, n in counts.items() if why not in ("instances", "pdb"))
        print(f"| {repo} | {counts['instances']} | {counts.get('pdb', 0)} | {others or '-'} |")
        total += counts["instances"]
        with_pdb += counts.get("pdb", 0)
    print(f"| all | {total} | {with_pdb} | {total - with_pdb} |")
    return 0


def _engine():
    """The Docker engine, to measure the images' disk on; None where none answers (the summary
    then gives its upper bound from the report alone)."""
    try:
        from dgym_tui.sandbox.docker_sandbox import connect

        return connect(timeout=3)
    except Exception:
        return None


def _stop_cleanly() -> None:
    """Ctrl-C, SIGTERM or SIGHUP: the validation containers removed at once and the process ended
    (the builds under way are dropped: the report holds every instance finished, and a run of the
    same command goes on from there). Waiting for the builds would take minutes."""
    import signal
    import sys

    from dgym_tui.lifecycle import install_signal_handlers
    from dgym_tui.sandbox.docker_sandbox import _remove_live_containers

    def stopped():
        from dgym_tui.batch.swebench_validation import STOPPING

        STOPPING.set()
        print("dgym-tui image swebench: stopped; the report holds what finished: the same command goes on",
              file=sys.stderr, flush=True)
        _remove_live_containers()

    install_signal_handlers(cleanup=stopped)
    signal.signal(signal.SIGINT, signal.getsignal(signal.SIGTERM))
