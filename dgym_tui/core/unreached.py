"""A run that ended without reaching any breakpoint: say so, and suggest what would reach them.

At a SWE-bench base commit the instance's own tests pass and may never run the code the issue is
about; an open issue has no reproduction yet. A breakpoint there is kept, but the entrypoint never
arrives at it: the person and the agent are told which entrypoint ran, and offered one that
would: a test that calls the breakpoint's function, or the problem's reproduction as a script.
"""

from __future__ import annotations

import posixpath
import re

_DEF = re.compile(r"^(?P<indent>\s*)(?:async\s+)?def\s+(?P<name>\w+)|^(?P<cindent>\s*)class\s+(?P<cname>\w+)")
MAX_NAMED = 3


def unreached(breakpoints) -> list:
    """The enabled breakpoints (not logpoints) this run never arrived at: all of them, or none
    when the run reached at least one."""
    stopping = [bp for bp in breakpoints if bp.enabled and bp.log is None]
    if not stopping or any(bp.hits for bp in stopping):
        return []
    return stopping


def enclosing(text: str, line: int) -> list[tuple[str, str]]:
    """The defs and classes around a line, innermost last: [("class"|"def", name)]."""
    lines = text.splitlines()[:line]
    if not lines:
        return []
    current = len(lines[-1]) - len(lines[-1].lstrip()) if lines[-1].strip() else 10 ** 6
    found = []
    for source in reversed(lines[:-1] if _DEF.match(lines[-1]) is None else lines):
        m = _DEF.match(source)
        if not m:
            continue
        indent = len(m.group("indent") if m.group("name") else m.group("cindent"))
        if indent < current:
            found.append(("def", m.group("name")) if m.group("name") else ("class", m.group("cname")))
            current = indent
            if indent == 0:
                break
    return list(reversed(found))


def is_test_file(path: str) -> bool:
    name = posixpath.basename(path)
    return path.endswith(".py") and (name.startswith("test") or name.endswith("_test.py")
                                     or "/tests/" in f"/{path}" or "/testing/" in f"/{path}")


def node_id(path: str, text: str, line: int) -> str:
    """pytest's id of the test a line of a test file belongs to (the file's, if none)."""
    parts = [name for kind, name in enclosing(text, line)]
    tests = [p for p in parts if p.startswith("test") or p.startswith("Test")]
    return "::".join([path, *parts[:parts.index(tests[-1]) + 1]]) if tests else path


def suggestion(session, bps) -> str:
    """An entrypoint that would reach the first breakpoint: a test that names its function."""
    bp = bps[0]
    try:
        text = session.read_source(bp.file)
    except Exception:  # the file went away: no suggestion beyond a script
        return ""
    names = [name for kind, name in enclosing(text, bp.line) if kind == "def"]
    target = names[-1] if names else posixpath.splitext(posixpath.basename(bp.file))[0]
    try:
        matches = session.search(rf"\b{re.escape(target)}\b", ".", max_results=200)
    except Exception:
        return ""
    files = []  # test files that name it, when no test function does (an import line)
    for path, line, _ in matches:
        if path == bp.file or not is_test_file(path):
            continue
        try:
            test = node_id(path, session.read_source(path), line)
        except Exception:
            continue
        if "::" in test:
            return f"`pytest {test}` (it calls {target})"
        files.append(path)
    if not files:
        return ""
    entry = session.entrypoint
    return (f"`pytest {files[0]}` (it names {target})" if entry is not None and entry.kind == "pytest"
            else f"a run of {files[0]} (it names {target})")


def note(session, result) -> str:
    """One paragraph, or "" when the run reached a breakpoint (or had none)."""
    bps = unreached(session.breakpoints.items())
    if not bps or "dgym: cannot run" in result.output:  # the program never started
        return ""
    places = ", ".join(f"{bp.file}:{bp.line}" for bp in bps[:MAX_NAMED]) + (
        f" and {len(bps) - MAX_NAMED} more" if len(bps) > MAX_NAMED else "")
    code = "" if result.exit_code is None else f" (exit code {result.exit_code})"
    better = suggestion(session, bps)
    offer = f"{better}, or " if better else ""
    return (f"This run of `{session.entrypoint_label}` ended{code} without reaching the breakpoint"
            f"{'s' if len(bps) > 1 else ''} at {places}: it never runs that line. To get there, run "
            f"{offer}a script that reproduces the problem (e.g. write /tmp/repro.py and make "
            "`python /tmp/repro.py` the entrypoint). The breakpoints are kept.")
