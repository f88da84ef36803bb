"""`dgym-tui review RUN_DIR`: the review inbox for a batch's proposed fixes (the app), or with
--list / --export-patches / --export-preds / --apply / --branches, the same without a UI for
the trials approved so far."""

from __future__ import annotations

import argparse
import json
import sys

DESCRIPTION = ("Review a batch's proposed fixes: approve, reject, edit or send back each trial's patch, "
               "with its diff, its scored tests and its replay one key away. Decisions go to "
               "RUN_DIR/reviews.jsonl; the export options act on the trials approved so far.")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dgym-tui review", description=DESCRIPTION)
    p.add_argument("run_dir", metavar="RUN_DIR", help="a batch's run directory (dgym-tui batch ... --out RUN_DIR)")
    p.add_argument("--list", action="store_true", help="print the trials and their verdicts, one line each")
    p.add_argument("--json", action="store_true", help="with --list: one JSON object a line")
    p.add_argument("--export-patches", metavar="DIR", nargs="?", const="",
                   help="write each approved task's patch to DIR/<task>.patch (default RUN_DIR/approved)")
    p.add_argument("--export-preds", metavar="FILE",
                   help="write SWE-bench's predictions (instance_id, model_name_or_path, model_patch) to FILE")
    p.add_argument("--model-name", help="with --export-preds: model_name_or_path (default: the batch's model)")
    p.add_argument("--apply", action="store_true",
                   help="apply the approved patches to their tasks' repos: all of them or none")
    p.add_argument("--branches", action="store_true",
                   help="one git branch per approved task in its repo (never pushed; work trees untouched)")
    p.add_argument("--branch-prefix", default="dgym/", help="the branches' prefix (default dgym/)")
    p.add_argument("--export-prs", metavar="DIR", help="one Markdown body per approved issue fix, DIR/issue-<N>.md "
                   "(Fixes #N, the reproduction before and after, the summary, the reviewer's note), for "
                   "`gh pr create --body-file`")
    p.add_argument("--model", help="the model a send-back (R) runs, a litellm model string (default: the batch's)")
    p.add_argument("--api-base", help="with --model: its OpenAI-compatible server")
    p.add_argument("--theme", help="colour theme")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    from dgym_tui.review.inbox import RunDir, RunDirError

    try:
        run = RunDir.open(args.run_dir)
    except RunDirError as e:
        print(f"dgym-tui review: {e}", file=sys.stderr)
        return 2
    headless = (args.list or args.export_patches is not None or args.export_preds or args.apply or args.branches
                or args.export_prs)
    if not headless:
        from dgym_tui.ui.screens.review import ReviewApp

        app = ReviewApp(run, theme=args.theme, model=args.model, api_base=args.api_base)
        app.run()
        return app.return_code or 0  # an error of ours that ended it is not a success
    from dgym_tui.core.safe_text import one_line
    from dgym_tui.review.exports import (ExportError, apply_approved, export_patches, export_preds, export_prs,
                                         make_branches)

    try:
        if args.list:
            print_list(run, args.json)
        if args.export_patches is not None:
            written = export_patches(run, args.export_patches or None)
            where = args.export_patches or str(run.path / "approved")
            print(f"{len(written)} approved patch(es) written to {where}")
        if args.export_preds:
            count = export_preds(run, args.export_preds, args.model_name)
            print(f"{count} prediction(s) written to {args.export_preds}")
        if args.apply:
            done = apply_approved(run)
            for line in done:
                print(one_line(line))
            if not done:
                print("nothing to apply: no approved trial with a change")
        if args.branches:
            for line in make_branches(run, args.branch_prefix):
                print(one_line(line))
        if args.export_prs:
            written = export_prs(run, args.export_prs)
            print(f"{len(written)} pull-request bod{'y' if len(written) == 1 else 'ies'} written to {args.export_prs} "
                  "(gh pr create --body-file FILE)")
    except (ExportError, OSError) as e:
        print(f"dgym-tui review: {one_line(str(e))}", file=sys.stderr)
        return 1
    return 0


def print_list(run, as_json: bool) -> None:
    from dgym_tui.core.safe_text import one_line

    for t in run.sorted_trials():
        added, removed = run.diff_size(t)
        if as_json:
            print(json.dumps({"trial": t.id, "task": t.task, "arm": t.arm, "attempt": t.attempt, "status": t.status,
                              "revision": t.revision, "added": added, "removed": removed, "steps": t.steps,
                              "cost": t.cost, "verdict": t.verdict.verdict if t.verdict else None,
                              "approved": t.approved, "note": t.verdict.note if t.verdict else None,
                              "patch_sha256": t.patch_sha256}, ensure_ascii=False))
        else:
            cost = "?" if t.cost is None else f"${t.cost:.4f}"
            print(one_line(f"{t.id}  {t.status:<10} +{added}/-{removed}  steps {t.steps if t.steps is not None else '?'}"
                           f"  {cost}  {t.verdict_text or 'undecided'}"
                           + (f"  ({t.verdict.note})" if t.verdict and t.verdict.note else "")))
