"""The command line of saved sessions: `dgym-tui sessions`, `dgym-tui export`, `dgym-tui apply`
(cli.py hands them their arguments). Exit codes: 0 done (apply: also when there is nothing to
do), 1 refused (the repo changed, it is gone; export --patch: no change to write), 2 bad usage
or a file that is not a session.
Errors are one line on standard error; what comes from the model or the sandbox is shown
through safe_text when it goes to a terminal.
"""

from __future__ import annotations

import argparse
import sys

from dgym_tui.core.safe_text import one_line, visible
from dgym_tui.core.session_file import SessionFileError



class _Failed(Exception):
    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


def sessions_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="dgym-tui sessions",
        description="List the saved sessions, newest first: date, repo, mode, model, steps (model queries), "
                    "outcome (submitted, limit, stopped, error, tests pass/fail; interrupted when the file ends "
                    "mid-session) and the file. Sessions live in the user data folder "
                    "(DGYM_TUI_DATA_DIR overrides it).")
    p.add_argument("repo", nargs="?", help="only this repository's sessions (default: every repository's)")
    return p


def export_parser() -> argparse.ArgumentParser:
    from dgym_tui.sessions.export import FORMATS

    p = argparse.ArgumentParser(
        prog="dgym-tui export",
        description="Export a saved session: its final change as a patch for `git apply`, or the session as a "
                    "Markdown write-up, a self-contained HTML page that replays it in any browser, a debug-gym "
                    "trajectory.json, a mini-swe-agent .traj.json, an ATIF trajectory (Harbor's Agent Trajectory "
                    "Interchange Format), or a chat conversation for fine-tuning (JSON lines, one per session; the "
                    "person's own pdb commands become tool calls). SESSION may also be a debug-gym log. Exit "
                    "status: 0 written, 1 no patch can be written (the repo changed or is gone, or the session "
                    "changed nothing), 2 bad usage or not a session file.")
    p.add_argument("session", nargs="+", metavar="SESSION",
                   help="a session file, or a debug-gym log (several only with --format chat: one line each); "
                        "a batch's RUN_DIR instead exports its trials as training data (dgym-tui export RUN_DIR -h)")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--patch", metavar="FILE",
                      help="write the final change as a git diff (new and deleted files included) to FILE "
                           "(- for standard output); the files it touches must be as the session found them")
    what.add_argument("--format", choices=FORMATS, help="export the session in this format")
    p.add_argument("-o", "--output", metavar="FILE", help="with --format: write to FILE (default: standard output)")
    p.add_argument("--against-start", action="store_true",
                   help="with --patch: when files it touches changed since, write it anyway against the session's "
                        "start taken from the repo's git HEAD, to merge with `git apply --3way FILE`")
    return p


def export_run_parser() -> argparse.ArgumentParser:
    from dgym_tui.review.training import FORMATS, ONLY, ROLES

    p = argparse.ArgumentParser(
        prog="dgym-tui export RUN_DIR",
        description="Export a batch's trials as training data, one JSON line per trial (its current revision), "
                    "each with its labels: task, arm and its tools, attempt, status as scored with the tests "
                    "before and after, the review's verdict, note and reviewer, the revision's origin (agent, "
                    "edit, take-over, send-back), model, steps, tokens, cost, seconds. Formats: sft (TRL's "
                    "conversational SFT rows: messages, tools), sharegpt (LLaMA-Factory's ShareGPT with tool "
                    "calls), atif (one ATIF trajectory per line), dpo (TRL's preference rows: a resolved and "
                    "approved trial against an unresolved or rejected one of the same task and prompt). Paths "
                    "are made relative; key-like variables of your environment never appear. Exit status: 0 "
                    "written, 2 bad usage or not a run directory.")
    p.add_argument("run_dir", metavar="RUN_DIR", help="a batch's run directory (dgym-tui batch --out RUN_DIR)")
    p.add_argument("--format", choices=FORMATS, required=True, help="the trainer's format")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default: standard output)")
    p.add_argument("--only", choices=ONLY, default="all",
                   help="which trials: all (failed and unscored included, labelled; the default), resolved, "
                        "approved (by the review, on the current patch), unresolved (scored, not resolved)")
    p.add_argument("--arm", action="append", default=[], metavar="NAME", help="only this arm's trials (repeatable)")
    p.add_argument("--all-revisions", action="store_true",
                   help="every scored revision of a trial (labels.latest says which is current), not only the newest")
    p.add_argument("--role", choices=ROLES,
                   help="arms with two roles: seeker gives one record per question the seeker answered (its "
                        "pdb session, labelled by the fix it fed: resolved or not, and by its answer's grounding); "
                        "fixer the agent's, the findings in its context (default: the agent's)")
    return p


def _is_run_dir(path: str) -> bool:
    import os

    return os.path.isdir(path) and (os.path.isfile(os.path.join(path, "batch.json"))
                                    or os.path.isfile(os.path.join(path, "results.jsonl")))


def _export_run(argv: list[str]) -> int:
    from dgym_tui.review.training import TrainingExportError, write

    args = export_run_parser().parse_args(argv)
    notes: list[str] = []  # why nothing came out, where the format can say
    try:
        if not args.output:
            count = write(args.run_dir, args.format, sys.stdout, only=args.only, arms=args.arm,
                          all_revisions=args.all_revisions, role=args.role, notes=notes)
            sys.stdout.flush()
        else:
            with open(args.output, "w", encoding="utf-8") as fh:
                count = write(args.run_dir, args.format, fh, only=args.only, arms=args.arm,
                              all_revisions=args.all_revisions, role=args.role, notes=notes)
    except TrainingExportError as e:
        raise _Failed(str(e), 2) from None
    except OSError as e:
        raise _Failed(f"cannot write {args.output}: {e.strerror or e}", 2) from None
    where = args.output or "standard output"
    print(one_line(f"dgym-tui export: {count} record(s) in the {args.format} format to {where}"), file=sys.stderr)
    for note in notes:
        print(one_line(f"dgym-tui export: {note}"), file=sys.stderr)
    return 0


def apply_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="dgym-tui apply",
        description="Apply a saved session's final change to its repository, all or nothing: shows the diff, "
                    "refuses if a file it touches changed since the session started (naming them), and says so "
                    "when the change is there already. Without --yes it only shows what it would do. Exit status: "
                    "0 applied, shown, or nothing to do (already applied), 1 refused (nothing changed), 2 bad usage "
                    "or not a session file.")
    p.add_argument("session", metavar="SESSION", help="a session file")
    p.add_argument("--yes", action="store_true", help="apply it (without: only show what would happen)")
    return p


def _load(path: str, prog: str):
    from dgym_tui.sessions.export import load

    try:
        recording = load(path)
    except SessionFileError as e:
        raise _Failed(str(e), 2) from None
    for warning in recording.warnings:
        print(f"{prog}: warning: {one_line(warning)}", file=sys.stderr)
    return recording


def _run(prog: str, fn, argv: list[str]) -> int:
    try:
        return fn(argv)
    except _Failed as e:
        print(f"{prog}: {one_line(str(e))}", file=sys.stderr)
        return e.code


def main_sessions(argv: list[str]) -> int:
    return _run("dgym-tui sessions", _sessions, argv)


def main_export(argv: list[str]) -> int:
    return _run("dgym-tui export", _export, argv)


def main_apply(argv: list[str]) -> int:
    return _run("dgym-tui apply", _apply, argv)


def _sessions(argv: list[str]) -> int:
    from dgym_tui.core.session_file import sessions_dir
    from dgym_tui.sessions.listing import list_sessions, table

    args = sessions_parser().parse_args(argv)
    found = list_sessions(args.repo)
    if not found:
        print(f"no saved sessions in {one_line(str(sessions_dir(args.repo)))}")
        return 0
    print(table(found))
    return 0


def _export(argv: list[str]) -> int:
    from dgym_tui.sessions.export import write
    from dgym_tui.sessions.patch import PatchError, final_patch

    prog = "dgym-tui export"
    from dgym_tui.review.training import FORMATS as RUN_FORMATS

    if any(_is_run_dir(a) for a in argv if not a.startswith("-")) or any(
            a in RUN_FORMATS and a not in ("atif",) for a in argv) or any(a.startswith("--format=") and
                                                                         a[9:] in RUN_FORMATS[:2] + ("dpo",) for a in argv):
        return _export_run(argv)
    parser = export_parser()
    args = parser.parse_args(argv)
    if len(args.session) > 1 and args.format != "chat":
        parser.error("several sessions only with --format chat")
    if args.patch and args.output:
        parser.error("-o goes with --format; --patch names its own file")
    if args.against_start and not args.patch:
        parser.error("--against-start goes with --patch")
    if args.patch:
        recording = _load(args.session[0], prog)
        try:
            patch = final_patch(recording, against_start=args.against_start)
        except PatchError as e:
            raise _Failed(f"no patch written: {e}", 1) from None
        if not patch.diff:
            raise _Failed("no patch written: the session changed no file", 1)
        _write_patch(args.patch, patch.diff)
        where = "standard output" if args.patch == "-" else args.patch
        note = ""
        if patch.applied:
            note = " (your repo already holds this change)"
        elif patch.base_from_git:
            note = f" against the session's start (changed since: {', '.join(patch.changed)}): git apply --3way it"
        print(one_line(f"{prog}: wrote the change to {len(patch.touched)} file(s) "
                       f"({', '.join(patch.touched)}) to {where}{note}"), file=sys.stderr)
        return 0
    recordings = [_load(path, prog) for path in args.session]  # all readable before writing any
    if not args.output:
        for recording in recordings:
            write(recording, args.format, sys.stdout)
        sys.stdout.flush()
        return 0
    try:
        with open(args.output, "w", encoding="utf-8") as fh:
            for recording in recordings:
                write(recording, args.format, fh)
    except OSError as e:
        raise _Failed(f"cannot write {args.output}: {e.strerror or e}", 2) from None
    return 0


def _write_patch(target: str, text: str) -> None:
    if target == "-":
        # a patch carries the repo's text as the model wrote it: raw into a pipe, shown safely on a terminal
        sys.stdout.write(visible(text) if sys.stdout.isatty() else text)
        sys.stdout.flush()
        return
    try:
        with open(target, "w", encoding="utf-8", errors="surrogateescape", newline="") as fh:
            fh.write(text)
    except OSError as e:
        raise _Failed(f"cannot write {target}: {e.strerror or e}", 2) from None


def _apply(argv: list[str]) -> int:
    from dgym_tui.sessions.apply import ApplyError, apply, plan_apply

    args = apply_parser().parse_args(argv)
    recording = _load(args.session, "dgym-tui apply")
    plan = plan_apply(recording)
    if plan.problem:
        raise _Failed(plan.problem, 1)
    if plan.already_applied or not plan.diff:
        print(one_line(plan.summary()))
        return 0
    sys.stdout.write(visible(plan.diff))
    if not args.yes:
        print(one_line(plan.summary()) + "; run again with --yes to apply it")
        return 0
    try:
        print(one_line(apply(plan)))
    except ApplyError as e:
        raise _Failed(str(e), 1) from None
    return 0
