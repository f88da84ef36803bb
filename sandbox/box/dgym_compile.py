"""dgym_compile: the repo copy's modules compiled ahead, so a run or a step imports them from
bytecode (stdlib only).

    python3 dgym_compile.py ROOT      prints "compiled N of M"

The program runs with PYTHONDONTWRITEBYTECODE=1: left to itself it compiles every module of
the repo again at each run and restart. This writes each module's .pyc (in __pycache__, which
the sandbox's git excludes) as a *checked-hash* pyc: the import system hashes the source and
uses the pyc only when it was compiled from exactly that text. A timestamp pyc (what Python
writes by default) is trusted on the file's mtime in whole seconds and its size, so an edit
of the same size in the same second would run the old code; a hash never does. A module whose
pyc is current is left alone, so running this again after an edit compiles only what changed.
It runs at the lowest CPU priority, beside the program.
"""

import importlib.util
import os
import py_compile
import sys

SKIP = {"__pycache__", "node_modules", "site-packages"}
LIMIT = 5000  # modules; a huge tree is compiled in part rather than for minutes
SIZE_LIMIT = 2 * 1024 * 1024  # bytes: a generated giant is left to the run (compiling it takes
                              # memory the program shares in the sandbox)
CHECKED_HASH = 0b11  # the pyc header's flags: hash-based, checked against the source


def current(source: bytes, cfile: str) -> bool:
    try:
        with open(cfile, "rb") as fh:
            header = fh.read(16)
    except OSError:
        return False
    return (header[:4] == importlib.util.MAGIC_NUMBER
            and int.from_bytes(header[4:8], "little") == CHECKED_HASH
            and header[8:16] == importlib.util.source_hash(source))


def modules(root: str):
    for folder, dirs, files in os.walk(root):
        # hidden folders (.git, .venv, .tox), virtualenvs under any name, installed packages
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP
                         and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg")))
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(folder, name)


def main(root: str) -> int:
    try:
        os.nice(19)
    except OSError:
        pass
    compiled = seen = 0
    for path in modules(os.path.abspath(root)):
        if seen >= LIMIT:
            break
        seen += 1
        try:
            if os.path.getsize(path) > SIZE_LIMIT:
                continue
            with open(path, "rb") as fh:
                source = fh.read()
            cfile = importlib.util.cache_from_source(path)
            if current(source, cfile):
                continue
            py_compile.compile(path, cfile, doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
            compiled += 1
        except (OSError, ValueError, SyntaxError, py_compile.PyCompileError):
            continue  # unreadable, not Python, or a syntax error the run itself will report
    print(f"compiled {compiled} of {seen}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
