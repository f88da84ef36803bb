"""The pty the host drives: pdb reads commands from it without readline, its output starts on a
line of its own, and the program's stdin is kept off it."""

import io
import os
import sys

from . import state


class NoReadline:
    """Block `import readline` while pdb (and rlcompleter, which 3.13's pdb imports) load.

    With readline loaded, input() may emit terminal escapes (bracketed paste) and line-edit;
    we drive pdb over a pty with plain line reads instead. A program that imports readline
    itself still gets it: the block is lifted right after.
    """

    def __enter__(self):
        self.blocked = "readline" not in sys.modules
        if self.blocked:
            sys.modules["readline"] = None  # makes `import readline` raise ImportError

    def __exit__(self, *exc):
        if self.blocked and sys.modules.get("readline", 0) is None:
            del sys.modules["readline"]


def _watch_line_ends(stream):
    """Make stream.write note whether the program's last output ended its line; return the
    original write, which pdb's own output uses (see PdbOutput)."""
    write = stream.write

    def write_and_note(text):
        count = write(text)
        if text:
            state.LINE_OPEN = not text.endswith("\n")
        return count

    try:
        stream.write = write_and_note
    except (AttributeError, TypeError):  # not a plain text stream: nothing is noted
        pass
    return write


class PdbOutput:
    """pdb's stdout. What pdb prints starts on a line of its own, even after pytest's progress
    dots (`test_x.py .`) or a program's print(..., end=""); after it the line is closed: pdb's
    messages end with a newline, and its prompt with the person's command."""

    def __init__(self, stream, write):
        self._stream, self._write = stream, write

    def write(self, text):
        if state.LINE_OPEN and text:
            flush_program_output()  # stderr's unfinished line is still in its buffer
            self._write("\n")
        state.LINE_OPEN = False
        return self._write(text)

    def __getattr__(self, name):  # flush, encoding, fileno...
        return getattr(self._stream, name)


def flush_program_output():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


def setup_terminal():
    """Line editing and echo off on the pty, signals kept: commands and the handshake arrive
    unechoed and unlimited in length (canonical mode cuts lines at 4095 bytes), and Ctrl-C
    still becomes SIGINT."""
    try:
        import termios

        fd = sys.__stdin__.fileno()
        attrs = termios.tcgetattr(fd)
        attrs[3] &= ~(termios.ICANON | termios.ECHO)
        attrs[6][termios.VMIN], attrs[6][termios.VTIME] = 1, 0
        termios.tcsetattr(fd, termios.TCSANOW, attrs)
    except (ImportError, OSError, ValueError):
        pass  # not a terminal (pipes in tests): nothing to change
    out = sys.__stdout__
    state.PDB_STDOUT = PdbOutput(out, _watch_line_ends(out))
    if sys.stderr is not out:
        _watch_line_ends(sys.stderr)


def take_stdin():
    """The terminal carries pdb commands: pdb keeps its own handle on it, and the program's
    stdin, fd 0 included (os.read(0), children it starts), is empty: reading it gets EOF at
    once instead of swallowing the commands. Only /dev/tty still reaches the terminal."""
    state.TTY_IN = io.TextIOWrapper(io.FileIO(os.dup(0), "r"), encoding=sys.__stdin__.encoding,
                                    errors=sys.__stdin__.errors, line_buffering=True)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = sys.__stdin__ = open(os.devnull)
