"""A unified diff split per file into (path, before, after) texts a diff view can draw, without
the repo: each side holds the hunks' lines at their own line numbers, the lines between hunks
left blank on both sides (the same count on both, so they match and are not shown as changed)."""

from __future__ import annotations

import re

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def file_changes(patch: str) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    path = None
    old: list[str] = []
    new: list[str] = []
    binary = False

    def flush() -> None:
        if path is not None:
            out.append((path, "\n".join(old) + ("\n" if old else ""), "\n".join(new) + ("\n" if new else ""))
                       if not binary else (path, "", "(a binary file changes)\n"))

    for line in patch.splitlines():
        if line.startswith("diff --git "):
            flush()
            parts = line.split(" b/", 1)
            path = parts[1] if len(parts) == 2 else line[len("diff --git "):]
            old, new, binary = [], [], False
            continue
        if path is None:
            if line.startswith("--- "):
                path = "?"
            else:
                continue
        if line.startswith("+++ "):
            name = line[4:].strip()
            if name != "/dev/null":
                path = name[2:] if name.startswith("b/") else name
            continue
        if line.startswith("--- ") or line.startswith("index ") or line.startswith(("new file", "deleted file",
                                                                                     "similarity", "rename ", "old mode",
                                                                                     "new mode")):
            continue
        if line.startswith("Binary files") or line.startswith("GIT binary patch"):
            binary = True
            continue
        match = HUNK.match(line)
        if match:
            # pad each side to the hunk's first line (blank filler, the same on both sides)
            old.extend([""] * max(0, int(match.group(1)) - 1 - len(old)))
            new.extend([""] * max(0, int(match.group(3)) - 1 - len(new)))
            continue
        if line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
        elif line.startswith(" ") or line == "":
            old.append(line[1:])
            new.append(line[1:])
        # "\ No newline at end of file" and anything else: not a line of either side
    flush()
    return out
