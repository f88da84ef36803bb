"""Code that runs inside the sandbox: standard library only, CPython 3.6 to 3.13
(compat.py holds what the older ones lack).

The debugger, started as `python3 dgym_pdb.py ...` (which loads this folder as the package
`dgym_box`), one module per job:

    protocol.py       what the host and the debugger say to each other (documented there):
                      the ready line, the handshake, the marker before every prompt, the exit
    launch.py         starting the program (script, module, pytest) and ending the process
    ended.py          after the program's end: breakpoints kept, `p` answered "no frame", no rerun
    debugger.py       the pdb.Pdb subclass and its commands (log, hit, watch, dbreak, ...)
    breakpoints.py    the host's breakpoints restored, logpoints, hit counts, watches, run-to
    databreak.py      data breakpoints (sys.monitoring on 3.12+, settrace before)
    pytest_plugin.py  pytest mode: the test running, the tests failed, pytest's banners quiet
    runners.py        other test runners (unittest, Django's, sympy's): a failing test stops
    origins.py        which code is the repo's, the debugger's or a library's; file names
    reprs.py          reprs of the program's values that can neither break nor stall a marker
    terminal.py       the pty: no readline, pdb's output on its own line, the program's stdin
    state.py          the state of the one program this process debugs
    compat.py         what Pythons older than 3.13 lack, one name per difference

Helpers the host runs by path: dgym_procs.py (a run's processes), dgym_compile.py (the repo
copy compiled ahead).
"""
