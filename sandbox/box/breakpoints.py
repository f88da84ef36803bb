"""Line breakpoints beyond pdb's: restored from the host's list, reported in the marker, logpoints,
hit counts, watch expressions, and running again to a recorded stop."""

import bdb
import dis
import os
import re
import types

from . import compat, state
from .origins import rel
from .reprs import safe_repr, safe_str, short


def status():
    """The breakpoints for the marker (the hidden one of a run-to left out, the ones it paused
    reported as enabled)."""
    out = []
    paused = state.RUN_TO[1] if state.RUN_TO else ()
    for bp in bdb.Breakpoint.bpbynumber:
        if bp is not None and not getattr(bp, "dgym_hidden", False):
            out.append({"number": bp.number, "file": rel(bp.file), "line": bp.line,
                        "cond": bp.cond, "enabled": bool(bp.enabled) or bp in paused,
                        "temporary": bool(bp.temporary), "ignore": bp.ignore, "hits": bp.hits})
            for key in ("log", "hit"):  # only where set: most breakpoints have neither
                if getattr(bp, f"dgym_{key}", None) is not None:
                    out[-1][key] = getattr(bp, f"dgym_{key}")
    return out


# --- running again to a recorded stop ---------------------------------------------------------

def start_run_to(dbg, spec):
    """Run to the COUNT-th arrival at FILE:LINE (a stop recorded in an earlier run of the same
    program), every other breakpoint and logpoint paused meanwhile; reported as they were."""
    try:
        file, line, count = spec["file"], int(spec["line"]), int(spec["count"])
    except (KeyError, TypeError, ValueError) as e:
        state.PENDING_ERRORS.append(f"run to: bad target {spec!r}: {e}")
        return
    paused = [bp for bp in bdb.Breakpoint.bpbynumber if bp is not None and bp.enabled]
    err = dbg.set_break(os.path.abspath(os.path.join(state.ROOT, file)), line)
    if err:
        state.PENDING_ERRORS.append(f"run to {file}:{line}: {err}")
        return
    for bp in paused:
        bp.enabled = False
    bp = bdb.Breakpoint.bpbynumber[-1]
    bp.dgym_hidden, bp.dgym_hit = True, f"hit == {count}"
    state.RUN_TO = (bp, paused)


def end_run_to(dbg):
    """The program stopped (there, or somewhere else first): the breakpoints as they were."""
    if state.RUN_TO is None:
        return
    bp, paused = state.RUN_TO
    state.RUN_TO = None
    try:
        dbg.clear_bpbynumber(bp.number)
    except ValueError:
        pass
    for other in paused:
        other.enabled = True


# --- watch expressions, logpoints and hit counts -----------------------------------------------

_LOG_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]+?)(![rsa])?\}")
LOG_CHARS = 1000         # per logpoint message


def evaluate(expr, frame, local_ns):
    try:
        value = eval(expr, frame.f_globals, local_ns)
    except BaseException as e:  # the person's expression: its error is its value
        return {"expr": expr, "error": f"{type(e).__name__}: {short(str(e), 150)}"}
    return {"expr": expr, "value": safe_repr(value)}


def format_log(template, frame):
    """A logpoint's message: each {expr} replaced by its value in the frame ({{ and }}: braces)."""
    def field(match):
        text = match.group(0)
        if text in ("{{", "}}"):
            return text[0]
        try:
            value = eval(match.group(1), frame.f_globals, frame.f_locals)
        except BaseException as e:
            return f"<{type(e).__name__}: {short(str(e), 100)}>"
        if match.group(2) in ("!r", "!a") or (match.group(2) is None and not isinstance(value, str)):
            return safe_repr(value)
        return safe_str(value)
    return short(_LOG_FIELD.sub(field, template), LOG_CHARS)


def hit_expression(text):
    """`3` means `hit == 3`; `>= 5` and `% 10 == 0` get `hit` in front; else as written."""
    text = text.strip()
    if text.isdigit():
        return f"hit == {text}"
    if text[:1] in "<>=!%":
        return f"hit {text}"
    return text


# --- the host's breakpoints, restored at the start ----------------------------------------------

def _code_lines(path):
    """Every line number that holds code in the file (or None if it does not compile)."""
    try:
        with compat.open_code(path) as f:
            code = compile(f.read(), path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, OSError):
        return None
    lines, todo = set(), [code]
    while todo:
        co = todo.pop()
        lines.update(line for _, line in dis.findlinestarts(co) if line)
        todo.extend(c for c in co.co_consts if isinstance(c, types.CodeType))
    return lines


def syntax_error(expr):
    try:
        compile(expr, "<condition>", "eval")
    except SyntaxError as e:
        return e.msg
    return None


def restore(dbg, specs):
    """Set the host's breakpoints in list order. The i-th entry always gets number i+1 (relative
    to the first free number): a failed one leaves its number unused and an error in the marker."""
    if not isinstance(specs, list):
        state.PENDING_ERRORS.append("breakpoints: expected a JSON list")
        return
    for spec in specs:
        err = None
        try:
            file, line, cond = spec["file"], int(spec["line"]), spec.get("cond") or None
            path = os.path.abspath(os.path.join(state.ROOT, file))
            lines = _code_lines(path) if os.path.isfile(path) else None
            if not os.path.isfile(path):
                err = f"{file}:{line}: no such file"
            elif lines is not None and line not in lines:
                err = f"{file}:{line}: no code on that line"
            elif cond is not None and syntax_error(cond):
                err = f"{file}:{line}: bad condition {cond!r}: {syntax_error(cond)}"
            else:
                err = dbg.set_break(path, line, bool(spec.get("temporary")), cond)
                if err is None:
                    bp = bdb.Breakpoint.bpbynumber[-1]
                    if spec.get("enabled") is not None and not spec["enabled"]:
                        bp.disable()
                    bp.ignore = max(0, int(spec.get("ignore") or 0))
                    if spec.get("log"):
                        bp.dgym_log = str(spec["log"])
                    if spec.get("hit"):
                        hit = hit_expression(str(spec["hit"]))
                        msg = syntax_error(hit)
                        if msg:
                            state.PENDING_ERRORS.append(f"{file}:{line}: bad hit condition {hit!r}: {msg}")
                        else:
                            bp.dgym_hit = hit
        except Exception as e:
            err = f"bad breakpoint {spec!r}: {type(e).__name__}: {e}"
        if err is not None:
            state.PENDING_ERRORS.append(err)
            bdb.Breakpoint.next += 1            # keep numbers aligned with list positions
            bdb.Breakpoint.bpbynumber.append(None)
