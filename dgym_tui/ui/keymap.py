"""The main screen's commands as data: one table that the screen's key bindings, the help screen
(`?`) and the command palette (ctrl+p) all read, so a key, its words and its palette entry never
drift apart.

A command names an action of the main screen (or of the app, `app.…`), with its keys (none: the
palette only), its word in the footer, its line of help and its title in the palette (none: keys
only). The palette adds what changes with the session (the entrypoint, the agent, the tools, the
panes, the themes): see DgymApp.palette_commands.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True)
class Command:
    action: str            # the screen's action with its arguments ("app.…": the app's)
    tooltip: str           # what it does: the help's line, the palette's help
    keys: str = ""         # Textual key names, comma-separated ("": the palette only)
    short: str = ""        # the footer's word
    palette: str = ""      # the palette's title ("": not in the palette)
    show: bool = False     # in the footer
    priority: bool = False  # taken as the key comes in, before the focused widget sees it

    def binding(self) -> Binding:
        return Binding(self.keys, self.action, self.short, show=self.show, priority=self.priority,
                       tooltip=self.tooltip)


# By section: the help screen lists them in this order, the palette too (before the session's own).
SECTIONS: list[tuple[str, list[Command]]] = [
    ("Source view", [
        Command("app.go_to_line", "move the source cursor to a line (ctrl+g in the source)", palette="Go to line…"),
    ]),
    ("Debugger (pudb keys; not while typing in the console)", [
        # n s c u d are priority bindings: taken as the key comes in rather than after it has
        # passed through the focused widget and its parents (~1 ms of each step). A focused text
        # field still gets them (Textual leaves the keys an Input consumes to it); r and t stay
        # ordinary bindings: the agent pane binds them when it has the focus.
        Command("pdb('next')", "next: run to the next line in this function", "n", "Next", show=True, priority=True),
        Command("pdb('step')", "step: into the call on this line", "s", "Step", show=True, priority=True),
        Command("pdb('continue')", "continue to the next breakpoint", "c", "Cont", show=True, priority=True),
        Command("pdb('return')", "return: run until this function returns", "r", "Return", show=True),
        Command("toggle_breakpoint", "toggle a breakpoint at the cursor line", "b", "Break", show=True,
                palette="Toggle breakpoint at cursor"),
        Command("conditional_breakpoint", "set a conditional breakpoint at the cursor line (asks for the condition)",
                "B", "Cond. break", palette="Conditional breakpoint at cursor…"),
        Command("logpoint", "set a logpoint at the cursor line: prints a message with {expr} values, never stops",
                "L", "Logpoint", palette="Logpoint at cursor…"),
        Command("hit_condition", "stop at the cursor line's breakpoint only on some hits (3, >= 5, % 10 == 0)",
                "H", "Hit count", palette="Hit count at cursor…"),
        Command("watch", "watch an expression: shown at every stop (Delete on its row removes it)",
                "w", "Watch", palette="Watch an expression…"),
        Command("data_breakpoint", "data breakpoint: stop when an expression's value changes (old and new shown)",
                "D", "Data break", palette="Data breakpoint…"),
        Command("step_back", "step back: this run's stops as recorded (read-only); Enter runs the program again to one",
                "left_square_bracket", "Back", palette="Step back…"),
        Command("run_to_cursor", "run to the cursor line (temporary breakpoint)", "t", "To cursor", show=True,
                palette="Run to cursor"),
        Command("clear_breakpoints", "clear every breakpoint, in every file", palette="Clear all breakpoints"),
        Command("restart_program", "restart the program: a fresh pdb, breakpoints kept "
                                   "(pdb's `restart`/`run` in the console do the same)",
                "R", "Restart", show=True, palette="Restart the program"),
        Command("pdb('up')", "up: to the calling frame", "u", "Up", priority=True),
        Command("pdb('down')", "down: to the called frame", "d", "Down", priority=True),
        Command("interrupt", "interrupt a running command (when idle, ctrl+c copies as usual)", "ctrl+c",
                "Interrupt", priority=True, palette="Interrupt"),
    ]),
    ("Sandbox", [
        Command("app.run_tests", "run the tests: pytest in the sandbox (outside pdb)", palette="Run the tests"),
        Command("app.undo", "undo the last change: revert the last checkpoint (an edit, a command that changed files)",
                palette="Undo the last change"),
        Command("app.restart_sandbox", "a fresh sandbox from your repo (after it died)", palette="Restart the sandbox"),
    ]),
    ("Panes", [
        Command("focus_pane('console')", "! focus the pdb console (Escape goes back to the source)",
                "exclamation_mark", "Console", show=True),
        Command("focus_pane('tree')", "focus the repo tree", "f1", "Files"),
        Command("focus_pane('source')", "focus the source view", "f2", "Source"),
        Command("focus_pane('console')", "focus the pdb console", "f3", "Console"),
        Command("focus_pane('transcript')", "focus the transcript", "f4", "Transcript"),
        Command("focus_pane('variables')", "focus the variables (Enter shows a full value)", "f5", "Variables"),
        Command("focus_pane('stack')", "focus the stack (Enter moves pdb to that frame)", "f6", "Stack"),
        Command("focus_pane('agent')", "focus the agent pane (its keys answer a waiting call: a A e r t)", "f7", "Agent"),
        Command("toggle_maximize", "maximize / restore the focused pane", "z", "Zoom",
                palette="Maximize / restore the focused pane"),
        Command("resize(1)", "widen the focused pane", "ctrl+right", "Wider"),
        Command("resize(-1)", "narrow the focused pane", "ctrl+left", "Narrower"),
        Command("resize_console(1)", "make the console taller", "ctrl+up", "Console taller"),
        Command("resize_console(-1)", "make the console shorter", "ctrl+down", "Console shorter"),
    ]),
    ("Agent (anywhere)", [
        Command("agent('pause')", "pause or resume the agent", "f8", "Pause agent"),
        Command("agent('mode')", "cycle the agent's mode: step / auto", "f9", "Agent mode"),
    ]),
    ("App", [
        Command("help", "this help", "question_mark", "Help", show=True, palette="Help: keys"),
        Command("app.apply_changes", "write the session's changes to your repo (shows the diff first; all or nothing)",
                "W", "Apply", palette="Apply the changes to your repo…"),
        Command("app.quit", "quit (asks first if the sandbox holds changes)", "q", "Quit", show=True),
    ]),
]

COMMANDS = [command for _, commands in SECTIONS for command in commands]


def bindings() -> list[Binding]:
    return [command.binding() for command in COMMANDS if command.keys]


def binding_sections() -> list[tuple[str, list[Binding]]]:
    """The sections that have keys, as bindings, for the help screen."""
    sections = [(title, [c.binding() for c in commands if c.keys]) for title, commands in SECTIONS]
    return [(title, keys) for title, keys in sections if keys]


def in_palette() -> list[Command]:
    return [command for command in COMMANDS if command.palette]
