"""pdb: one command in the session's live pdb, shared with the person."""

from __future__ import annotations

from dgym_tui.core.entrypoint import parse_entrypoint
from dgym_tui.core.pdb_commands import verb
from dgym_tui.sandbox.errors import SandboxError
from dgym_tui.tools.base import Tool, ToolError, ToolOutput, cap

CONTEXT_LINES = 5  # lines shown each side of the current one
REFUSED = {
    "q": "quitting would end the debugging session; use `restart` to start the program again",
    "quit": "quitting would end the debugging session; use `restart` to start the program again",
    "exit": "quitting would end the debugging session; use `restart` to start the program again",
    "interact": "`interact` opens a console that waits for typed input; use `p`/`pp` or `!statement`",
}


class PdbTool(Tool):
    name = "pdb"
    description = (
        "Send one command to the live pdb session in which the program runs (`python -m pdb` "
        "style; the person may use the same session). Breakpoints take `file_path:line_number` "
        "relative to the repository root and persist across restarts (conditions included). After "
        "each command you get pdb's output, the current frame and the code around it. After a "
        "post-mortem or the program's end, c/n/s start the program again and stop at the "
        "breakpoints; after the end, `b` and the other breakpoint commands are kept for that "
        "run without running anything, and `p` or `where` have no frame to look at.\n"
        "Examples: `b pkg/module.py:42` sets a breakpoint; `c` continues to it; `p qty` prints "
        "a value; `where` shows the stack; `up` moves to the caller; `cl pkg/module.py:42` "
        "clears it; `restart` starts the program again.\n"
        "Beyond pdb: `watch EXPR` shows EXPR's value after every command from then on (`unwatch "
        "EXPR` stops); `log FILE:LINE MESSAGE` is a logpoint that prints MESSAGE, with each {expr} "
        "replaced by its value, every time the line runs, without stopping (`log "
        "pkg/module.py:70 qty={quantity} sku={item.sku}`, then `c` and read the lines); "
        "`hit BPNUMBER 3` (or `>= 5`, `% 10 == 0`) stops at a breakpoint only on those hits; "
        "`dbreak EXPR` is a data breakpoint: `c` stops right after the line that changes EXPR's "
        "value (a local of this frame, or an attribute or item such as `self.total`, "
        "`prices['tea']`), showing old and new values (`dclear` removes it). `history` lists this "
        "run's stops with their values; `back N` runs the program again to stop N of that list "
        "(a step back) and says if the run did not reach it the same way.")
    parameters = {
        "command": {"type": "string", "description": "One pdb command, e.g. `b src/app.py:42`, `c`, `p x`."},
        "entrypoint": {"type": ["string", "null"],
                       "description": "What to run under pdb, e.g. `pytest tests/test_x.py::test_y` or "
                                      "`python app.py --flag`; null keeps the current one. Changing it "
                                      "restarts the program."},
    }
    required = ("command",)
    guidance = ("check your idea in the debugger rather than guessing: set breakpoints where the wrong value "
                "should appear and inspect the program's state with pdb (`b file.py:line`, `c`, `p expr`, "
                "`pp expr`, `where`, `up`, `n`, `s`);\n"
                "pdb here does more: `watch EXPR` shows a value after every command; `log file.py:line text "
                "{expr}` prints values each time a line runs without stopping (a cheap trace of a loop); "
                "`hit N 3` stops breakpoint N only on its 3rd hit; `dbreak EXPR` stops right after the line "
                "that changes a value (who corrupts `self.total`?) with its old and new values; `history` "
                "lists this run's stops and `back N` runs the program again to stop N (a step back); a test "
                "that hangs is stopped where it loops: `where` and `p` show why;")
    brief = "use pdb to check your idea: `b file.py:LINE` then `c`, then `p EXPR` or `where`"
    order = 40

    def run(self, session, actor: str, command: str, entrypoint: str | None = None) -> ToolOutput:
        command = command.strip()
        if not command:
            raise ToolError("empty command: give one pdb command, e.g. `n` or `p x`")
        warning = ""
        first_word = verb(command)
        if first_word not in ("p", "pp", "!", "log", "watch", "dbreak") and not command.startswith(("print(", "!")):
            parts = [p.strip() for p in command.replace(";;", "\n").replace(";", "\n").split("\n") if p.strip()]
            if len(parts) > 1:
                command, warning = parts[0], "Only one command runs per call: ran the first, `%s`.\n" % parts[0]
                first_word = verb(command)
        if first_word in REFUSED:
            raise ToolError(f"not sent to pdb: {REFUSED[first_word]}")
        prefix = ""
        if entrypoint and entrypoint.strip() != session.entrypoint_label:
            try:
                parse_entrypoint(entrypoint.strip())
            except SandboxError as e:
                # Small models put a function or test name here (`tomorrow_date`, `test.py:test_x`):
                # the command still runs, in the program as it is, and the model reads why.
                prefix = (f"The entrypoint was left as it is (`{session.entrypoint_label}`): {e}. Leave "
                          "`entrypoint` out to keep it.\n")
            else:
                session.set_entrypoint(entrypoint.strip(), actor=actor)
                prefix = f"The program was restarted with the entrypoint `{entrypoint.strip()}`.\n"
        if command in ("b", "break"):
            return ToolOutput(prefix + warning + "Breakpoints:\n" + session.breakpoints.listing() + "\n")
        if command == "history":
            return ToolOutput(prefix + warning + history(session))
        if first_word == "back":
            number = command[len("back"):].strip()
            if not number.isdigit():
                raise ToolError("usage: `back N`, N a stop's number in `history`")
            verdict = session.back_to(int(number) - 1, actor=actor)
            stop = session.state.stop
            text = prefix + warning + verdict + "\n"
            if stop is not None and stop.file:
                text += f"\nCurrent frame:\n{stop.where} in {stop.function}\n"
                context = around(session, stop.file, stop.line)
                if context:
                    text += f"\nContext around the current frame:\n{context}\n"
            return ToolOutput(cap(text), ok=verdict.startswith("Back at"))
        if command in ("cl", "clear"):
            session.clear_breakpoints(actor=actor)
            return ToolOutput(prefix + warning + "All breakpoints have been cleared.\n")
        result = session.send(command, actor=actor)
        text = prefix + warning + "Pdb command output:\n" + (result.output.strip() or "(no output)") + "\n"
        if "not found from sys.path" in result.output and first_word in ("b", "break", "tbreak", "log"):
            text += where_is(session, command)
        stop = result.stop
        if stop is not None and stop.watches:
            text += "\nWatches:\n" + "\n".join(f"  {w.expr} = {w.value if w.error is None else w.error}"
                                               for w in stop.watches) + "\n"
        if stop is not None and stop.file:
            text += f"\nCurrent frame:\n{stop.where} in {stop.function}\n"
            context = around(session, stop.file, stop.line)
            if context:
                text += f"\nContext around the current frame:\n{context}\n"
        elif result.exited:
            text += (f"\nThe program ended (exit code {result.exit_code}). The next c, n or s starts it "
                     "again and runs to the breakpoints.\n")
        text += missed_breakpoints(session, result)
        return ToolOutput(cap(text), ok=result.error is None)


def missed_breakpoints(session, result) -> str:
    """After a run that started again and stopped at no breakpoint: say so, and how to run the
    tests that reach them (a restart after a failure runs only the failing test, which may never
    reach the code a breakpoint is in — a small model then `c`s to the same failure for ever)."""
    stop = result.stop
    marks = session.breakpoints.items()
    if ("Starting the program again" not in result.output or not marks or (stop and stop.reason == "breakpoint")
            or "without reaching the breakpoint" in result.output):  # the session said it, with a way there
        return ""
    where = ", ".join(f"{bp.file}:{bp.line}" for bp in marks[:4])
    return (f"\nNo breakpoint ({where}) stopped this run of `{session.entrypoint_label}`: its code may not run "
            "there. To run other tests, give `entrypoint` (e.g. `pytest tests/test_x.py`, or `pytest` for "
            "all of them).\n")


MAX_NAMED = 12  # files named when a breakpoint's file is not in the repo


def where_is(session, command: str) -> str:
    """For a breakpoint on a file pdb cannot find (`b cart.py:13`): the repo's files of that
    name, as the command would need them (small models leave out the folders)."""
    words = command.split(maxsplit=1)
    spot = words[1].split()[0].split(",")[0] if len(words) > 1 else ""
    name, _, line = spot.partition(":")
    if not name:
        return ""
    base = name.rsplit("/", 1)[-1]
    try:
        files = session.list_files()
    except Exception:  # the sandbox went away: pdb's own words stand
        return ""
    found = [f for f in files if f.rsplit("/", 1)[-1] == base and f != name]
    if not found:
        # Small models copy a path from an example or another project: name the real ones.
        python = [f for f in files if f.endswith(".py")]
        listing = ", ".join(python[:MAX_NAMED]) + (f" and {len(python) - MAX_NAMED} more" if len(python) > MAX_NAMED else "")
        return (f"No file named {base} in the repository; its Python files: {listing}.\n" if python
                else f"No file named {base} in the repository.\n")
    spots = ", ".join(f"`{words[0]} {f}:{line}`" if line else f"`{words[0]} {f}`" for f in found[:5])
    return f"Paths are from the repository root: did you mean {spots}?\n"


def history(session) -> str:
    """This run's stops, one line each with its values: what `back N` goes back to."""
    stops = session.state.run_stops
    if not stops:
        return "No stop in this run yet.\n"
    lines = []
    for number, stop in enumerate(stops, 1):
        place = stop.stack[-1] if stop.stack else None
        where = f"{place.file}:{place.line} in {place.function}" if place else stop.where
        values = ", ".join(f"{k}={v}" for k, v in list(stop.locals.items())[:6])
        lines.append(f"{number:>3}. {stop.reason} at {where}" + (f": {values[:300]}" if values else ""))
    return "This run's stops (`back N` runs the program again to stop N):\n" + "\n".join(lines) + "\n"


def around(session, path: str, line: int | None) -> str:
    """pdb's `list` around a line (B for a breakpoint, -> for the current line), from the text
    the session recorded: no extra pdb command."""
    text = session.state.source(path)
    if text is None or line is None:
        return ""
    lines = text.splitlines()
    marked = {bp.line for bp in session.breakpoints.items() if bp.file == path}
    out = []
    for number in range(max(1, line - CONTEXT_LINES), min(len(lines), line + CONTEXT_LINES) + 1):
        mark = ("B" if number in marked else " ") + ("->" if number == line else "  ")
        out.append(f"{number:>4}{mark}\t{lines[number - 1]}")
    return "\n".join(out)
