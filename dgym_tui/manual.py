"""The manual's reference pages, made from the code so that they cannot drift from it.

    python -m dgym_tui.manual            write docs/reference/*.md and docs/replay/demo.html
    python -m dgym_tui.manual --check    say which pages differ from what the code makes now (exit 1)

Each page is read off the thing it documents: the command line from each subcommand's own
argparse `--help` (through cli.main, as a person types it), the keys from ui/keymap.py and the
screens' bindings, the agent's tools from their classes (name, description, JSON schema, the
policy's default), the session file's events from core/events.py's payload classes (fields,
defaults and the comment beside each), task.toml's keys from batch/tasks.py, config.toml's
[agent] table from AgentSettings and the policy's defaults, and the Python API as mkdocstrings
directives (mkdocs renders them from the docstrings); and the bundled demo session as the HTML
replay the exporter writes, which the manual embeds. tests/test_docs.py runs the check.

`accepts(argv)` says whether the command line would take a `dgym-tui …` line, parsing it with the
real parsers without running anything: the manual's commands are checked with it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import sys
import tokenize
from pathlib import Path

HEADER = ("<!-- Made by `python -m dgym_tui.manual` from the code; do not edit by hand "
          "(tests/test_docs.py fails when it differs). -->\n\n")
HELP_COLUMNS = "100"

# --- the command line --------------------------------------------------------------------------

# (anchor, title, argv whose --help is shown): every subcommand of cli.SUBCOMMANDS, and the app.
CLI = [
    ("app", "dgym-tui [REPO]", []),
    ("run", "dgym-tui run", ["run"]),
    ("replay", "dgym-tui replay", ["replay"]),
    ("demo", "dgym-tui demo", ["demo"]),
    ("resume", "dgym-tui resume", ["resume"]),
    ("serve", "dgym-tui serve", ["serve"]),
    ("mcp", "dgym-tui mcp", ["mcp"]),
    ("batch", "dgym-tui batch", ["batch"]),
    ("review", "dgym-tui review", ["review"]),
    ("doctor", "dgym-tui doctor", ["doctor"]),
    ("image", "dgym-tui image", ["image"]),
    ("image-build", "dgym-tui image build", ["image", "build"]),
    ("image-swebench", "dgym-tui image swebench", ["image", "swebench"]),
    ("sessions", "dgym-tui sessions", ["sessions"]),
    ("export", "dgym-tui export SESSION", ["export"]),
    ("export-run", "dgym-tui export RUN_DIR (training data)", ["export", "--format", "sft"]),
    ("apply", "dgym-tui apply", ["apply"]),
]


@contextlib.contextmanager
def _help_width():
    """argparse wraps at the terminal's width: a fixed one, so the page is the same everywhere."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def help_text(argv: list[str]) -> str:
    """What `dgym-tui ARGV --help` prints."""
    from dgym_tui import cli

    out = io.StringIO()
    with _help_width(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            cli.main([*argv, "--help"])
        except SystemExit as e:
            if e.code not in (0, None):
                raise RuntimeError(f"dgym-tui {' '.join(argv)} --help exited {e.code}") from None
        else:
            raise RuntimeError(f"dgym-tui {' '.join(argv)} --help printed no help")
    return out.getvalue().rstrip() + "\n"


def cli_page() -> str:
    lines = [HEADER, "# Command line\n\n",
             "Every subcommand's `--help`, as the installed `dgym-tui` prints it. The guides explain when to "
             "use which: [getting started](../getting-started.md), [batch runs](../batch.md), "
             "[SWE-bench](../swebench.md), [sessions](../sessions.md).\n\n"]
    lines += [f"- [`{title}`](#{anchor})\n" for anchor, title, _ in CLI]
    for anchor, title, argv in CLI:
        lines.append(f"\n## `{title}` {{#{anchor}}}\n\n```text\n{help_text(argv)}```\n")
    return "".join(lines)


class _Parsed(Exception):
    """Raised in place of running a command once its parser took the arguments."""


@contextlib.contextmanager
def _parse_only():
    original = argparse.ArgumentParser.parse_args

    def parse_args(self, args=None, namespace=None):
        original(self, args, namespace)
        raise _Parsed(self.prog)

    argparse.ArgumentParser.parse_args = parse_args
    try:
        yield
    finally:
        argparse.ArgumentParser.parse_args = original


def accepts(argv: list[str]) -> str | None:
    """None when `dgym-tui ARGV` would be taken by its parser (`--help` and `--version` too),
    else what argparse said. Nothing runs: the subcommand's main stops where it parses. `serve`
    checks its own options, then the command it serves."""
    from dgym_tui import cli

    if argv and argv[0] == "serve":
        from dgym_tui.commands.serve import split_argv

        own, rest = split_argv(argv[1:])
        return _accepts(cli, ["serve", *own]) or (accepts(rest) if rest else None)
    return _accepts(cli, argv)


def _accepts(cli, argv: list[str]) -> str | None:
    err = io.StringIO()
    with _parse_only(), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            cli.main(argv)
        except _Parsed:
            return None
        except SystemExit as e:
            if e.code in (0, None):
                return None
            return err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else f"exit {e.code}"
    return "it ran without parsing its arguments"


# --- keys --------------------------------------------------------------------------------------


SPELLED = {"enter", "space", "escape"}  # keys shown by name, not as a symbol


def key_display(keys: str) -> str:
    """Textual's key names as a person reads them: `ctrl+c`, `[`, `!`, `enter`."""
    from textual.keys import format_key

    shown = []
    for key in (k.strip() for k in keys.split(",") if k.strip()):
        *modifiers, name = key.split("+")
        shown.append("`" + "+".join([*modifiers, name if name in SPELLED else format_key(name)]) + "`")
    return " ".join(shown)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _bindings_table(bindings) -> list[str]:
    """One row per action, its keys joined, as the help screen shows them."""
    from textual.binding import Binding

    keys: dict[str, list[str]] = {}
    texts: dict[str, str] = {}
    for binding in Binding.make_bindings(bindings):
        keys.setdefault(binding.action, []).append(binding.key)
        texts.setdefault(binding.action, binding.tooltip or binding.description)
    rows = ["| keys | what it does |\n", "|---|---|\n"]
    rows += [f"| {key_display(','.join(keys[action]))} | {_cell(texts[action])} |\n" for action in keys]
    return rows


def keys_page() -> str:
    from dgym_tui.ui import keymap
    from dgym_tui.ui.replay_control import ReplayTimeline
    from dgym_tui.ui.screens.review import ReviewScreen, TrialScreen
    from dgym_tui.ui.widgets.agent_panel import AgentPanel
    from dgym_tui.ui.widgets.pdb_console import PdbConsole, PdbInput
    from dgym_tui.ui.widgets.source_view import SourceView

    lines = [HEADER, "# Keys\n\n",
             "The main screen's commands, from the one table (`dgym_tui/ui/keymap.py`) that its key bindings, "
             "the help screen (`?`) and the command palette (`ctrl+p`) all read; then each pane's and "
             "screen's own keys. How they are used: [using the app](../app.md).\n"]
    for title, commands in keymap.SECTIONS:
        lines += [f"\n## {title}\n\n", "| keys | what it does | in the palette |\n", "|---|---|---|\n"]
        for command in commands:
            keys = key_display(command.keys) if command.keys else "(palette only)"
            palette = f"*{_cell(command.palette)}*" if command.palette else ""
            lines.append(f"| {keys} | {_cell(command.tooltip)} | {palette} |\n")
    for title, bindings in [("The source view", SourceView.BINDINGS),
                            ("The pdb console", [*PdbInput.BINDINGS, *PdbConsole.BINDINGS]),
                            ("The agent pane (a call waiting for you)", AgentPanel.BINDINGS),
                            ("A replay (`dgym-tui replay`, `dgym-tui demo`)", ReplayTimeline.BINDINGS),
                            ("The review inbox (`dgym-tui review`)", ReviewScreen.BINDINGS),
                            ("A trial in the review inbox", TrialScreen.BINDINGS)]:
        lines += [f"\n## {title}\n\n", *_bindings_table(bindings)]
    return "".join(lines)


# --- the agent's tools -------------------------------------------------------------------------


def tools_page() -> str:
    from dgym_tui.agent.policy import DEFAULT_RULES, MAIN_ARGUMENT
    from dgym_tui.tools.debug import AnswerTool, DebugTool
    from dgym_tui.tools.registry import BUILTIN

    tools = [cls() for cls in BUILTIN]
    names = [t.name for t in tools]
    default = {name: verdict for verdict, rules in DEFAULT_RULES.items() for name in rules}
    lines = [HEADER, "# The agent's tools\n\n",
             "The built-in tools as the model is given them (debug-gym's names and arguments), then the two "
             "that exist only where a [seeker](../batch.md#two-roles) does. *Policy* is the default rule of "
             "`[agent.policy]` (see [the agent](../agent.md#the-policy)); a rule's pattern, `tool(pattern)`, is "
             "matched against the argument named *pattern on*. Third-party tools come from the entry-point "
             "group `dgym_tui.tools` ([adding a tool](../architecture.md#adding-a-tool)).\n\n",
             "| tool | what it does | policy | pattern on | changes files |\n", "|---|---|---|---|---|\n"]
    extra = [DebugTool(), AnswerTool()]
    for tool in [*tools, *extra]:
        lines.append(f"| [`{tool.name}`](#{tool.name}) | {_cell(tool.summary)} | {default.get(tool.name, 'ask')} | "
                     f"{'`' + MAIN_ARGUMENT[tool.name] + '`' if tool.name in MAIN_ARGUMENT else ''} | "
                     f"{'yes' if tool.changes_files else ''} |\n")
    for tool in [*tools, *extra]:
        fitted = tool.fitted(names) if tool in tools else tool
        schema = fitted.schema()["function"]
        lines += [f"\n## `{tool.name}` {{#{tool.name}}}\n\n", _paragraphs(schema["description"]),
                  "Parameters (JSON schema):\n\n```json\n", json.dumps(schema["parameters"], indent=2), "\n```\n"]
    return "".join(lines)


def _paragraphs(text: str) -> str:
    """A tool's description as Markdown: each line a paragraph; the lines after one ending in a
    colon (a form to fill in) kept as they are, in a block."""
    out, form = [], None
    for line in text.strip().splitlines():
        if form is not None:
            form.append("    " + line)
            continue
        out.append(line.replace("<", "&lt;"))
        if line.endswith(":"):
            form = []
    if form:
        out.append("\n".join(form))
    return "\n\n".join(out) + "\n\n"


# --- the session file's events -----------------------------------------------------------------


def _comments(cls) -> dict[str, str]:
    """field name -> the comment on its line in the class's source."""
    import inspect

    source = inspect.getsource(cls)
    comments: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string.lstrip("#").strip()
    found = {}
    for number, line in enumerate(source.splitlines(), 1):
        stripped = line.strip()
        name, sep, _ = stripped.partition(":")
        if sep and name.isidentifier() and number in comments and line.startswith("    ") \
                and not line.startswith("        "):
            found[name] = comments[number]
    return found


def _default(f: dataclasses.Field) -> str:
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        return ""
    try:
        return "`" + json.dumps(value) + "`"
    except TypeError:
        return "`" + repr(value) + "`"


def _doc(cls) -> str:
    import inspect

    doc = inspect.getdoc(cls) or ""
    return "" if doc in (getattr(cls, "kind", None), cls.__name__) or doc.startswith(cls.__name__ + "(") \
        else " ".join(doc.split())


def _fields_table(cls) -> list[str]:
    comments = _comments(cls)
    rows = ["| field | type | default | what it is |\n", "|---|---|---|---|\n"]
    for f in dataclasses.fields(cls):
        rows.append(f"| `{f.name}` | `{_cell(str(f.type))}` | {_cell(_default(f))} | {_cell(comments.get(f.name, ''))} |\n")
    return rows


def events_page() -> str:
    from dgym_tui.core import events
    from dgym_tui.core.breakpoints import Breakpoint

    lines = [HEADER, "# Events of the session file\n\n",
             f"Every event is `{{\"seq\", \"ts\", \"actor\", \"kind\", \"data\"}}`: `seq` counts from 1 with no gaps, "
             f"`actor` is `human`, `agent` (or `agent:NAME`: the seeker, an outside agent over MCP) or `system`, and "
             f"`data` has one shape per kind, listed here from the payload classes in `dgym_tui/core/events.py`. "
             f"The schema version is {events.SCHEMA} (`events.SCHEMA`). The file around them (its header line, how "
             "it is written) is in [sessions](../sessions.md#the-session-file).\n\n",
             "| kind | class | what it is |\n", "|---|---|---|\n"]
    for kind, cls in events.PAYLOADS.items():
        lines.append(f"| [`{kind}`](#{kind}) | `{cls.__name__}` | {_cell(_doc(cls))} |\n")
    for kind, cls in events.PAYLOADS.items():
        lines += [f"\n## `{kind}` {{#{kind}}}\n\n"]
        if _doc(cls):
            lines.append(_doc(cls) + "\n\n")
        lines += _fields_table(cls)
    lines.append("\n## Shapes inside events\n")
    for cls in (events.Frame, events.ExceptionInfo, events.WatchValue, events.DataBreakpoint, events.DataChange,
                Breakpoint):
        lines.append(f"\n### `{cls.__name__}`\n\n")
        if _doc(cls):
            lines.append(_doc(cls) + "\n\n")
        lines += _fields_table(cls)
    return "".join(lines)


# --- task.toml and config.toml -----------------------------------------------------------------


def task_toml_page() -> str:
    from dgym_tui.batch.tasks import TASK_TOML_KEYS

    lines = [HEADER, "# task.toml\n\n",
             "An optional `task.toml` in a task folder overrides what dgym-tui detects there (see "
             "[task sets](../batch.md#task-sets)). Its keys, from `dgym_tui/batch/tasks.py`; any other key is "
             "refused in one line naming the file.\n\n", "| key | what it is |\n", "|---|---|\n"]
    lines += [f"| `{key}` | {_cell(text)} |\n" for key, text in TASK_TOML_KEYS.items()]
    return "".join(lines)


FLAG_DEST = {"system_prompt_file": "system_prompt"}  # AgentSettings' field -> the app's flag
NO_FLAG = {"context_window": "the model's context window in tokens, for a model litellm does not know (default: "
                             "what its server reports: llama.cpp's /props, Ollama's /api/show num_ctx, else Ollama's default 4096)"}


def config_page() -> str:
    from dgym_tui.agent.policy import DEFAULT_RULES
    from dgym_tui.config import AgentSettings

    lines = [HEADER, "# config.toml\n\n",
             "The keys of `config.toml`'s `[agent]` table with their defaults, from `AgentSettings` in "
             "`dgym_tui/config.py` (the command line's flags win over them; an unknown key is refused in one "
             "line), and the policy's default rules from `dgym_tui/agent/policy.py`. Where the file lives, and "
             "the `[sandbox]` table: [the agent](../agent.md#configtoml), "
             "[sandboxes](../sandboxes.md#your-projects-dependencies).\n\n",
             "## `[agent]`\n\n", "| key | type | default | what it is |\n", "|---|---|---|---|\n"]
    from dgym_tui.commands.app import parser

    flags = {action.dest: action for action in parser()._actions}
    comments = _comments(AgentSettings)
    lines[-2] = "| key | type | default | what it is (the flag that overrides it) |\n"
    for f in dataclasses.fields(AgentSettings):
        if f.name == "policy":
            continue
        flag = flags.get(FLAG_DEST.get(f.name, f.name))
        what = (f"{flag.help} (`{flag.option_strings[-1]}`)" if flag is not None else
                NO_FLAG.get(f.name) or comments.get(f.name, ""))
        lines.append(f"| `{f.name}` | `{_cell(str(f.type))}` | {_cell(_default(f))} | {_cell(what)} |\n")
    lines += ["\n## `[agent.policy]`\n\n",
              "A list left out takes its default. A call no rule names asks; deny beats ask beats allow.\n\n",
              "| list | default |\n", "|---|---|\n"]
    for verdict, rules in DEFAULT_RULES.items():
        lines.append(f"| `{verdict}` | `{json.dumps(rules)}` |\n")
    return "".join(lines)


# --- the Python API ----------------------------------------------------------------------------

API = [  # (section, object, its members shown: None for all that have a docstring)
    ("Your own agent on a task", "dgym_tui.batch.env.TaskEnv", ["reset", "step", "tools", "patch", "score", "ask", "close"]),
    ("", "dgym_tui.batch.env.Step", None),
    ("", "dgym_tui.batch.tasks.load_tasks", None),
    ("", "dgym_tui.batch.spec.Task", None),
    ("", "dgym_tui.batch.spec.Score", None),
    ("The core as a library", "dgym_tui.core.session.Session",
     ["start", "send", "set_breakpoint", "run_tests", "run_tool", "shell", "read_source", "diff", "close"]),
    ("", "dgym_tui.core.events.Event", None),
    ("", "dgym_tui.core.state.fold", None),
    ("Saved sessions", "dgym_tui.sessions.list_sessions", None),
    ("", "dgym_tui.sessions.export.load", None),
    ("", "dgym_tui.sessions.export.export", None),
    ("", "dgym_tui.sessions.apply.plan_apply", None),
    ("", "dgym_tui.sessions.apply.ApplyPlan", None),
    ("", "dgym_tui.sessions.apply.apply", None),
]


def api_page() -> str:
    lines = [HEADER, "# Python API reference\n\n",
             "From the docstrings, by mkdocstrings. The guide with examples: [the Python API](../python-api.md).\n"]
    for title, target, members in API:
        if title:
            lines.append(f"\n## {title}\n")
        lines.append(f"\n::: {target}\n")
        if members is not None:  # inherited too: Session's operations live in its parts (session_pdb.py…)
            lines.append("    options:\n      inherited_members: true\n      members:\n"
                         + "".join(f"        - {m}\n" for m in members))
    return "".join(lines)


def demo_replay() -> str:
    """The bundled demo session as the self-contained HTML replay `dgym-tui export --format html`
    writes, for the manual to embed."""
    from dgym_tui.demo import demo_session
    from dgym_tui.sessions.export import load, write

    out = io.StringIO()
    write(load(str(demo_session())), "html", out)
    return out.getvalue()


# path under docs/ -> what makes it
PAGES = {
    "reference/cli.md": cli_page,
    "reference/keys.md": keys_page,
    "reference/tools.md": tools_page,
    "reference/events.md": events_page,
    "reference/task-toml.md": task_toml_page,
    "reference/config.md": config_page,
    "reference/api.md": api_page,
    "replay/demo.html": demo_replay,
}


def docs_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "docs"


def pages() -> dict[str, str]:
    """path under docs/ -> the page's text, as the code makes it now."""
    return {name: make() for name, make in PAGES.items()}


def differing(docs: Path, made: dict[str, str] | None = None) -> list[str]:
    """The pages under `docs` that are missing or differ from what the code makes now."""
    made = pages() if made is None else made
    return [name for name, text in made.items()
            if not (docs / name).is_file() or (docs / name).read_text(encoding="utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m dgym_tui.manual",
                                description="Write (or --check) the manual's reference pages, made from the code.")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page differs from the code's")
    p.add_argument("--docs", metavar="DIR", default=str(docs_dir()), help="the manual's folder (default: the checkout's docs/)")
    args = p.parse_args(argv)
    docs = Path(args.docs)
    made = pages()
    stale = differing(docs, made)
    if args.check:
        for name in stale:
            print(f"docs/{name} differs from the code: python -m dgym_tui.manual writes it", file=sys.stderr)
        return 1 if stale else 0
    for name in stale:
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(made[name], encoding="utf-8")
        print(f"wrote {docs / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
