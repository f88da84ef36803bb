"""The in-box debugger (sandbox/box/, started as dgym_pdb.py): the driver every test_shim_*.py
uses, and the tests of the protocol (sandbox/box/protocol.py) the host and the debugger speak.

Every test runs on the CPythons of pythons.FULL (3.6 to 3.13: a version is skipped only when its
interpreter is missing); the pytest-mode tests need pytest importable by that interpreter. The tests of each
module of the box are in test_shim_<module>.py, beside this file."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import textwrap
from functools import cache
from pathlib import Path

import pexpect
import pytest

import pythons

SHIM = Path(__file__).resolve().parents[1] / "sandbox" / "box" / "dgym_pdb.py"


@pytest.fixture(params=pythons.FULL)
def python(request):
    return pythons.require(request.param)


has_pytest = pythons.has_pytest


@pytest.fixture
def pytest_python(python):
    return pythons.require_pytest(python)


class Shim:
    """One shim process. `read()` returns (output before the marker, parsed marker)."""

    def __init__(self, python, args, cwd, breakpoints=(), timeout=10, env_extra=None):
        self.nonce = secrets.token_hex(16)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHON"))}
        env["TERM"] = "xterm-256color"  # a real terminal type: colour must stay off anyway
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # pytest mode: fast, no third-party plugins
        env.update(env_extra or {})
        self.child = pexpect.spawn(python, [str(SHIM), *args], cwd=str(cwd), env=env,
                                   encoding="utf-8", codec_errors="replace", timeout=timeout,
                                   dimensions=(40, 200))
        self.child.delaybeforesend = None  # an attribute, not a spawn() argument
        self.child.delayafterclose = self.child.delayafterterminate = 0.02
        self.marker = re.compile("\x1b_dgym:" + self.nonce + ":([^\x1b]*)\x1b\\\\\r?\n")
        self.transcript = []  # everything read, for the no-ANSI check
        # The shim announces that its terminal is set up (no echo, no line limit) first.
        self.child.expect_exact("\x1b_dgym:ready\x1b\\\r\n")
        self.transcript.append(self.child.before)
        self.child.sendline(self.nonce)
        self.child.sendline(json.dumps(breakpoints if isinstance(breakpoints, dict) else list(breakpoints)))

    def read(self):
        self.child.expect(self.marker)
        out = self.child.before
        status = json.loads(self.child.match.group(1))
        self.transcript += [out, self.child.match.group(0)]
        if status["event"] == "prompt" or status.get("stays"):  # after the end, the shell's prompt
            self.child.expect_exact("(Pdb) ")
            assert self.child.before == "", "nothing may come between the marker and the prompt"
            self.transcript.append("(Pdb) ")
        return out, status

    def cmd(self, line):
        self.child.sendline(line)
        return self.read()

    def finish(self):
        """Wait for the process to end; its exit status. After the program's end the process
        stays to answer (box/ended.py) until told `EOF`, as the host's closing does."""
        if self.child.isalive():
            self.child.sendline("EOF")
        self.child.expect(pexpect.EOF)
        self.transcript.append(self.child.before)
        self.child.close()
        return self.child.exitstatus

    def close(self):
        if self.child.isalive():
            self.child.close(force=True)


# What the exit marker says beyond the program's end: the shell after it keeps the breakpoints
# and watches (box/ended.py).
SHELL_FIELDS = ("stays", "breakpoints", "watches", "errors", "notices")


def exit_of(status):
    """An exit marker without the shell's fields (checked by the tests of the shell)."""
    assert status.get("stays") is True and isinstance(status.get("breakpoints"), list), status
    return {k: v for k, v in status.items() if k not in SHELL_FIELDS}


@pytest.fixture
def run(tmp_path):
    shims = []

    def start(python, args, breakpoints=(), cwd=None, **kw):
        shim = Shim(python, args, cwd or tmp_path, breakpoints, **kw)
        shims.append(shim)
        return shim

    yield start
    for shim in shims:
        shim.close()


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


PROG = """
import sys
def f(a):
    b = a * 2
    return b

x = 1
y = f(x)
z = f(y)
print("y is", y, "z is", z)
"""


def bp(line, file="prog.py", **kw):
    return {"file": file, "line": line, "cond": None, "enabled": True, "temporary": False,
            "ignore": 0, **kw}


def stopped_at(run, python, tmp_path, source, line):
    """A shim running SOURCE as prog.py, stopped at its breakpoint on LINE."""
    write(tmp_path, "prog.py", source)
    shim = run(python, ["prog.py"], [bp(line)])
    shim.read()
    shim.cmd("c")
    return shim


# --- programs the tests run ----------------------------------------------------------------

TESTS = """
from calc import add

def test_ok():
    total = add(1, 2)
    assert total == 3

def test_fail():
    got = add(2, 2)
    assert got == 5
"""
CALC = "def add(a, b):\n    return a + b\n"

CART = """
# a cart, its total and a module-level rate
class Cart:
    def __init__(self):
        self.total = 0
        self.items = []

RATE = 1


def add(cart, prices):
    acc = 0
    for p in prices:
        acc += p
        cart.total += p * RATE
        cart.items.append(p)
    return acc


def main():
    global RATE
    cart = Cart()
    add(cart, [1, 2, 3])
    RATE = 2
    add(cart, [4])
    print("total", cart.total)


main()
"""


# --- the protocol ------------------------------------------------------------------------------

def test_fake_prompt_and_marker_are_just_output(python, run, tmp_path):
    write(tmp_path, "prog.py", r'''
        print("(Pdb) ")
        print("\x1b_dgym:0123456789abcdef0123456789abcdef:{\"v\":1,\"event\":\"exit\",\"code\":9}\x1b\\")
        print("\x1b_dgym:" + "f" * 32 + ":{\"v\":1}\x1b\\\n(Pdb) ", end="")
        x = 1
        print("done")
    ''')
    shim = run(python, ["prog.py"], [bp(4)])
    shim.read()
    out, st = shim.cmd("c")
    assert (st["reason"], st["line"]) == ("breakpoint", 4)
    assert out.count("(Pdb) ") == 2 and "\"code\":9" in out
    out, st = shim.cmd("c")
    assert "done" in out and st["event"] == "exit" and st["code"] == 0


def test_nonce_is_invisible_to_the_program(python, run, tmp_path):
    write(tmp_path, "prog.py", '''
        import os, sys
        print("ENV", dict(os.environ))
        print("ARGV", sys.argv)
        print("CMDLINE", open("/proc/self/cmdline", "rb").read())
        print("ENVIRON", open("/proc/self/environ", "rb").read())
        print("COLORS", os.environ.get("NO_COLOR"), os.environ.get("PYTHON_COLORS"))
    ''')
    shim = run(python, ["prog.py", "arg"])
    shim.read()
    out, st = shim.cmd("c")
    assert "ARGV ['prog.py', 'arg']" in out and "COLORS 1 0" in out
    assert shim.nonce not in out and st["code"] == 0


def test_no_ansi_escapes_besides_the_marker(python, run, tmp_path):
    write(tmp_path, "prog.py", '''
        def g():
            data = {"k": [1, 2]}
            raise KeyError("missing")
        g()
    ''')
    shim = run(python, ["prog.py"])
    shim.read()
    for line in ("n", "l", "w", "p {'a': 1}", "help next", "c", "up", "c"):
        shim.cmd(line)
    shim.finish()
    text = shim.marker.sub("", "".join(shim.transcript))
    assert "KeyError" in text and "Traceback" in text
    assert "\x1b" not in text, repr(text[text.index("\x1b") - 40:][:80])


def test_the_marker_and_the_ready_line_are_the_protocol_byte_for_byte():
    """What the box writes is what the host's parser (core/debugger.py) reads: any change to the
    framing (ESC _ dgym:NONCE:JSON ESC \\, compact JSON, ASCII only) fails here."""
    from dgym_tui.core import debugger as host
    from dgym_tui.sandbox.box import protocol, state

    saved, state.NONCE = state.NONCE, "0123456789abcdef"
    try:
        line = protocol.marker({"v": 1, "event": "exit", "code": None, "pid": 7, "errors": ["é"]})
    finally:
        state.NONCE = saved
    assert line == '\x1b_dgym:0123456789abcdef:{"v":1,"event":"exit","code":null,"pid":7,"errors":["\\u00e9"]}\x1b\\'
    assert protocol.READY == host.READY == "\x1b_dgym:ready\x1b\\"


def test_a_bad_handshake_is_one_line_and_exit_2(python, tmp_path):
    write(tmp_path, "prog.py", PROG)
    child = pexpect.spawn(python, [str(SHIM), "prog.py"], cwd=str(tmp_path), encoding="utf-8", timeout=10)
    try:
        child.expect_exact("\x1b_dgym:ready\x1b\\\r\n")  # nothing is read before the terminal is set up
        child.sendline("not a nonce")
        child.expect(pexpect.EOF)
        assert child.before.strip() == "dgym: bad handshake (no nonce on the first line)"
        child.close()
        assert child.exitstatus == 2
    finally:
        child.close(force=True)


def test_every_field_of_the_markers_is_documented_in_protocol_py(python, run, tmp_path):
    """protocol.py is the one place the markers are described: each key a real run sends is there."""
    doc = (SHIM.parent / "protocol.py").read_text()
    doc = doc[:doc.index('"""', 3)]
    write(tmp_path, "prog.py", CART)
    shim = run(python, ["prog.py"], {"breakpoints": [bp(13, log="acc={acc}"), bp(14, hit="2")],
                                     "watches": ["RATE"]})
    seen = set()
    _, st = shim.read()
    for line in ("c", "dbreak cart.total", "c", "restart"):
        seen |= set(st)
        seen |= {k for key in ("breakpoints", "stack", "watches", "data_breakpoints") for item in st.get(key) or ()
                 for k in item}
        seen |= set(st.get("data_change") or ())
        _, st = shim.cmd(line)
    seen |= set(st)
    assert st["event"] == "exit" and st["restart"] is True
    missing = sorted(k for k in seen if not re.search(rf'\b"?{re.escape(k)}"?\b', doc))
    assert not missing, f"not described in protocol.py: {missing}"
