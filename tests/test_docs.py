"""The manual stays true: it builds with `mkdocs build --strict` (a broken link or anchor fails),
its generated pages are what the code makes now, every `dgym-tui …` line in its and the README's
fenced blocks is taken by the real parsers, the pictures it shows exist, and getting started's
headless commands run as written on the bundled examples."""

from __future__ import annotations

import html.parser
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from dgym_tui import cli, manual

DOCS = ROOT / "docs"
README = ROOT / "README.md"
SKIPPED_LANGUAGES = {"python", "toml", "json", "yaml", "text"}  # no shell commands in these


def manual_pages() -> list[Path]:
    """The hand-written pages (the generated ones are argparse's own words)."""
    return sorted(p for p in DOCS.rglob("*.md") if "reference" not in p.relative_to(DOCS).parts)


# --- the site ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    import importlib.util

    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None:
        pytest.fail('the manual is built by mkdocs: pip install -e ".[docs]" (.ci/run installs it)')
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                           "-d", str(out)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    warnings = [line for line in (done.stdout + done.stderr).splitlines() if "WARNING" in line or "ERROR" in line]
    assert done.returncode == 0 and not warnings, "\n".join(warnings) or done.stderr[-3000:]
    return out


class _Ids(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.ids |= {value for name, value in attrs if name == "id" and value}


def ids_of(page: Path) -> set[str]:
    parser = _Ids()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.ids


def built_page(site: Path, doc: str) -> Path:
    """Where mkdocs put docs/DOC (directory URLs: x.md -> x/index.html, index.md -> index.html)."""
    stem = doc[:-3]
    return site / ("index.html" if stem == "index" else f"{stem.removesuffix('/index')}/index.html")


def test_the_manual_builds_strict_with_every_page_and_the_api_rendered(site):
    for page in manual_pages() + sorted((DOCS / "reference").glob("*.md")):
        assert built_page(site, page.relative_to(DOCS).as_posix()).is_file(), page
    api = (built_page(site, "reference/api.md")).read_text(encoding="utf-8")
    # mkdocstrings rendered the docstrings, not the directives
    assert ":::" not in api and "A fresh sandbox at the task" in api
    ids = ids_of(built_page(site, "reference/api.md"))
    for name in ("batch.env.TaskEnv.step", "core.session.Session.send", "sessions.apply.plan_apply"):
        assert f"dgym_tui.{name}" in ids, name  # Session's operations are inherited from its parts
    assert (site / "replay" / "demo.html").is_file()


def test_the_readmes_links_into_the_manual_reach_a_page_and_its_anchor(site):
    links = re.findall(r"\]\((docs/[^)\s]+)\)", README.read_text(encoding="utf-8"))
    assert len(links) >= 20
    for link in links:
        path, _, anchor = link.partition("#")
        assert (ROOT / path).exists(), link
        if path.endswith(".md") and anchor:
            assert anchor in ids_of(built_page(site, path.removeprefix("docs/"))), link


# --- the generated pages -----------------------------------------------------------------------


def test_the_generated_pages_are_what_the_code_makes_now():
    stale = manual.differing(DOCS)
    assert stale == [], f"{stale}: run python -m dgym_tui.manual and commit what it writes"


def test_the_check_fails_on_a_page_that_drifted(tmp_path):
    for name in manual.PAGES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(DOCS / name, tmp_path / name)
    page = tmp_path / "reference" / "cli.md"
    page.write_text(page.read_text().replace("--max-steps", "--most-steps"))
    (tmp_path / "reference" / "keys.md").unlink()
    assert manual.differing(tmp_path) == ["reference/cli.md", "reference/keys.md"]
    assert manual.main(["--check", "--docs", str(tmp_path)]) == 1
    assert manual.main(["--docs", str(tmp_path)]) == 0 and manual.differing(tmp_path) == []


def test_the_cli_page_holds_every_subcommands_help():
    documented = {argv[0] for _, _, argv in manual.CLI if argv}
    assert documented == set(cli.SUBCOMMANDS)
    page = (DOCS / "reference" / "cli.md").read_text()
    for flag in ("--only", "--seeker-api-base", "--jobs", "--validate", "--format", "--tests"):
        assert flag in page


# --- commands in fenced blocks -----------------------------------------------------------------


def fenced_lines(text: str) -> list[str]:
    """The lines of the fenced blocks a shell would read (continuations joined)."""
    lines, block, language = [], None, ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped.startswith("```"):
            if block is None:
                block, language = [], stripped[3:].strip().split(" ")[0].lower()
            else:
                if language not in SKIPPED_LANGUAGES:
                    lines += "\n".join(block).replace("\\\n", " ").splitlines()
                block = None
            continue
        if block is not None:
            block.append(stripped)
    return lines


def commands_in(line: str) -> list[list[str]]:
    """Each `dgym-tui …` command of a shell line, as argv after `dgym-tui` (redirections dropped)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    tokens = list(lexer)
    found, segment = [], []
    for token in [*tokens, ";"]:
        if token in (";", "&&", "||", "|", "&"):
            words = segment
            while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
                words = words[1:]  # VAR=value before the command
            if "--" in words and words.index("--") + 1 < len(words) and words[words.index("--") + 1] == "dgym-tui":
                words = words[words.index("--") + 1:]  # a wrapper: claude mcp add dgym -- dgym-tui mcp
            if words and words[0] == "dgym-tui":
                argv = words[1:]
                cut = next((i for i, w in enumerate(argv) if w in (">", ">>", "<", ">&")), len(argv))
                argv = argv[:cut - 1] if cut < len(argv) and cut and argv[cut - 1].isdigit() else argv[:cut]
                found.append(argv)
            segment = []
        else:
            segment.append(token)
    return found


# dgym-tui where a shell would run it: first on the line, after ; && || |, after `--` (a
# wrapper's), behind VAR=value assignments; not inside prose (`the trial's … (dgym-tui replay)`)
COMMAND_AT = re.compile(r"(?:^|[;&|]|\s--\s)\s*(?:[A-Za-z_]\w*=\S*\s+)*dgym-tui(?:\s|$)")


def documented_commands() -> list[tuple[str, list[str]]]:
    found = []
    for path in [README, *manual_pages()]:
        for line in fenced_lines(path.read_text(encoding="utf-8")):
            if COMMAND_AT.search(line):
                found += [(f"{path.relative_to(ROOT)}: {line}", argv) for argv in commands_in(line)]
    return found


def test_the_command_collector_reads_shell_as_a_shell_does():
    assert commands_in("RAY_ADDRESS=H:1 dgym-tui batch t/ --yes  # why") == [["batch", "t/", "--yes"]]
    assert commands_in("pip install -e . && bash setup.sh && dgym-tui") == [[]]
    assert commands_in("dgym-tui export S --format chat > train.jsonl") == [["export", "S", "--format", "chat"]]
    assert commands_in("claude mcp add dgym -- dgym-tui mcp /repo") == [["mcp", "/repo"]]
    assert commands_in('command = "dgym-tui"') == []
    assert COMMAND_AT.search("  session.jsonl   the trial's session file (`dgym-tui replay`)") is None
    assert fenced_lines("```bash\ndgym-tui batch T \\\n    --yes\n```\n```python\ndgym-tui x\n```") == \
        ["dgym-tui batch T  --yes"]


def test_argparse_refuses_what_the_cli_does_not_have():
    assert manual.accepts(["batch", "tasks/", "--model", "M", "--out", "R", "--only", "x*"]) is None
    assert "unrecognized arguments: --html" in manual.accepts(["export", "S.jsonl", "--format", "html", "--html"])
    assert manual.accepts(["batch", "tasks/", "--model", "M"]) is not None  # --out is required
    assert manual.accepts(["serve", "--port", "8080", "demo"]) is None
    assert manual.accepts(["serve", "path/to/repo", "--no-such-option"]) is not None
    assert manual.accepts(["image", "swebench", "x.jsonl", "--jobs", "2", "--summary"]) is None
    assert manual.accepts(["--version"]) is None


def test_every_dgym_tui_command_in_the_manual_and_the_readme_is_taken_by_its_parser():
    commands = documented_commands()
    assert len(commands) >= 60, len(commands)
    refused = [f"{where}\n    -> {problem}" for where, argv in commands if (problem := manual.accepts(argv))]
    # `dgym-tui WORD` is the app on a repository: a misspelt subcommand would read as one
    misspelt = [where for where, argv in commands if argv and not argv[0].startswith("-")
                and argv[0] not in cli.SUBCOMMANDS and not re.search(r"[/.~]|^[A-Z_]+$", argv[0])]
    assert refused == [] and misspelt == [], "\n".join(refused + misspelt)


def test_the_docs_name_the_run_directorys_replays_as_the_cli_makes_them():
    text = (DOCS / "run-dir.md").read_text()
    assert "export --html" not in text and "--format html" in text


# --- getting started, run as written -----------------------------------------------------------


def ci_block(text: str) -> list[str]:
    """The commands of the block after `<!-- ci: run -->`."""
    after = text.split("<!-- ci: run -->", 1)[1]
    block = re.match(r"\s*```bash\n(.*?)```", after, re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


def test_getting_started_runs_headless_on_the_bundled_examples(tmp_path):
    commands = ci_block((DOCS / "getting-started.md").read_text())
    assert len(commands) >= 4 and all(c.startswith("dgym-tui ") for c in commands)
    work = tmp_path / "clone"
    work.mkdir()
    for name in ("examples", "docs"):  # what the page's paths name, as in a clone
        (work / name).symlink_to(ROOT / name)
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "dgym-tui").write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m dgym_tui \"$@\"\n")
    (shim / "dgym-tui").chmod(0o755)
    env = dict(os.environ, PATH=f"{shim}:{os.environ['PATH']}", DGYM_TUI_CONFIG_DIR=str(tmp_path / "config"),
               DGYM_TUI_DATA_DIR=str(tmp_path / "data"))
    for command in commands:
        done = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True,
                              timeout=400, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert "+++ b/shopcart/catalog.py" in (work / "fix.diff").read_text()
    assert "<html" in (work / "first.html").read_text()[:2000]
    summary = (work / "runs" / "first" / "summary.md").read_text()
    assert "| with-pdb |" in summary and "| no-pdb |" in summary
    assert (work / "runs" / "first" / "report.html").is_file()
    assert len((work / "first-sft.jsonl").read_text().splitlines()) == 4  # 2 tasks x 2 arms
    assert not any(p.name.endswith(".orig") for p in (ROOT / "examples").rglob("*"))


# --- pictures ----------------------------------------------------------------------------------


def test_every_picture_the_manual_shows_exists_and_is_made_by_the_screenshot_script():
    sys.path.insert(0, str(ROOT / "tests"))
    from make_screenshots import PICTURES

    made = {rel for files in PICTURES.values() for rel in files}
    shown = set()
    for page in manual_pages():
        for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            shown.add((page.parent / target).resolve().relative_to(DOCS.resolve()).as_posix())
    readme_shown = {t.removeprefix("docs/") for t in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", README.read_text())}
    assert shown | readme_shown <= made, sorted((shown | readme_shown) - made)
    assert made <= shown, sorted(made - shown)  # each picture made is shown somewhere
    for rel in sorted(made):
        text = (DOCS / rel).read_text(encoding="utf-8")
        assert "<svg" in text[:500] and text.rstrip().endswith("</svg>"), rel
    for name in ("agent-approval", "seeker-person", "review-inbox"):
        text = (DOCS / PICTURES[name][0]).read_text()
        assert "Textual" in text or "terminal" in text, name  # a Textual screenshot, not a drawing
    assert "the&#160;agent&#160;asks&#160;you&#160;(as&#160;its&#160;seeker)" in \
        (DOCS / PICTURES["seeker-person"][0]).read_text()


def test_every_documented_batch_approves_with_yes():
    """Without --yes a batch refuses every edit (nobody is there to ask): no page shows one so."""
    batches = [where for where, argv in documented_commands() if argv[:1] == ["batch"]]
    assert len(batches) >= 10
    assert [where for where in batches if " --yes" not in where] == []
