"""The state of the one program this process debugs, shared by the shim's modules.

Module attributes, read and written as `state.NAME` (never imported by name: the launch, the
debugger and the pytest plugin each change some of them while the program runs).
"""

import os

NONCE = None             # set by the handshake; only ever written into marker lines
ROOT = os.getcwd()       # the repo root: files inside it are reported relative to it
MODE = "script"          # "script" | "module" | "pytest"
PENDING_ERRORS = []      # breakpoint problems, reported (once) by the next marker
PENDING_NOTICES = []     # notices for the person, reported (once) by the next marker
QUIT = False             # the person typed q / EOF (or restart)
RESTART = False          # the person typed restart/run: the host should spawn a new process
RESTART_ARGS = None      # the arguments typed after `restart` / `run`, if any
ACTIVE = None            # the debugger running the program (breakpoint() reuses it)
TEST = None              # pytest mode: the node id of the test running now
FAILED = []              # pytest mode: node ids that failed so far, in order
LINE_OPEN = False        # the program's last output left a line unfinished on the terminal
MAIN_PID = None          # the process that talks to the host; a forked child never does
MAIN_THREAD = None       # data breakpoints are checked in the program's main thread only
TTY_IN = None            # pdb's own handle on the terminal (the program's stdin is empty)
PDB_STDOUT = None        # pdb's stdout over the terminal (terminal.PdbOutput), once set up
WATCHES = []             # expressions shown at every stop (evaluated in the selected frame)
RUN_TO = None            # (the hidden breakpoint counting arrivals, the breakpoints it paused)
TEST_TIMEOUT = 0.0       # pytest mode: seconds a test may run (not counting its stops); 0: no limit
TIMED_OUT = None         # the test the time limit just stopped (said at the stop, then cleared)


def is_main():
    return MAIN_PID is None or os.getpid() == MAIN_PID


def take_errors():
    errors = list(PENDING_ERRORS)
    del PENDING_ERRORS[:]
    return errors
