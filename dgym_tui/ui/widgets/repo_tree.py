"""The repo copy in the sandbox as a tree, built from the session's file list.

The list comes from events (the baseline's files, then the changes), so a replayed session shows
the same tree. Nodes are made when their folder is first expanded: a huge repo opens at once.
Files changed in the sandbox carry a marker; names are shown with control characters made
visible (a file name is untrusted).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from dgym_tui.core.safe_text import one_line

HIDDEN = {"__pycache__", ".pytest_cache", ".git", ".mypy_cache", ".ruff_cache"}
MAX_ENTRIES = 2000  # per directory; the palette's file finder reaches the rest
CHANGED_MARK = " ●"
DELETED_MARK = " ✖"


@dataclass
class Entry:
    path: str  # relative to the repo root; "." for the root
    is_dir: bool
    loaded: bool = False


def index_dirs(files: list[str]) -> dict[str, tuple[set[str], set[str]]]:
    """Folder -> (its sub-folder names, its file names), for every folder the files imply."""
    index: dict[str, tuple[set[str], set[str]]] = {".": (set(), set())}
    for path in files:
        parts = path.split("/")
        if any(part in HIDDEN for part in parts) or path.endswith(".pyc"):
            continue
        parent = "."
        for depth, part in enumerate(parts[:-1]):
            index[parent][0].add(part)
            parent = "/".join(parts[:depth + 1])
            index.setdefault(parent, (set(), set()))
        index[parent][1].add(parts[-1])
    return index


class RepoTree(Tree[Entry]):
    class FileSelected(Message):
        """The person picked a file to open in the source view."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    def __init__(self, **kwargs) -> None:
        super().__init__(Text("repo"), data=Entry(".", True), **kwargs)  # (a str is parsed as markup: slow)
        self.changed: dict[str, str] = {}
        self.files: list[str] = []
        self._index: dict[str, tuple[set[str], set[str]]] = {}
        self.guide_depth = 2

    def set_repo(self, name: str) -> None:
        self.root.set_label(Text(one_line(name)))

    def set_files(self, files: list[str], changed: dict[str, str]) -> None:
        """The copy's files now (and which differ from the baseline); keeps folders open."""
        deleted = sorted(p for p, status in changed.items() if status == "D")
        shown = sorted(set(files) | set(deleted))  # a deleted file stays, marked, until undone
        if shown != self.files:
            self.files = shown
            self._index = index_dirs(shown)
            expanded = {n.data.path for n in self._walk() if n.data and n.data.is_dir and n.is_expanded}
            cursor = self.cursor_node.data.path if self.cursor_node and self.cursor_node.data else None
            self.root.remove_children()
            self.root.data.loaded = False
            self._expand_loaded(self.root, expanded | {"."})
            if cursor:
                self.reveal(cursor)
        self.changed = dict(changed)
        self.refresh()  # labels are rendered from self.changed, so a repaint is enough

    def _expand_loaded(self, node: TreeNode[Entry], expanded: set[str]) -> None:
        self._load(node)
        node.expand()
        for child in node.children:
            if child.data and child.data.is_dir and child.data.path in expanded:
                self._expand_loaded(child, expanded)

    def _walk(self):
        stack = [self.root]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(node.children)

    def reveal(self, path: str) -> None:
        """Select a file's node if its folder is already open (opens nothing)."""
        node = next((n for n in self._walk() if n.data and n.data.path == path), None)
        if node is not None:
            self.move_cursor(node)

    def is_changed(self, entry: Entry) -> bool:
        if entry.is_dir:
            prefix = "" if entry.path == "." else entry.path + "/"
            return any(p.startswith(prefix) for p in self.changed)
        return entry.path in self.changed

    def render_label(self, node: TreeNode[Entry], base_style: Style, style: Style) -> Text:
        text = super().render_label(node, base_style, style)
        if node.data is not None and self.changed and self.is_changed(node.data):
            color = self.app.theme_variables.get("warning", "yellow")
            text.stylize(Style(color=color), len(text) - len(node.label))
            deleted = self.changed.get(node.data.path) == "D"
            text.append(DELETED_MARK if deleted else CHANGED_MARK, style=Style(color=color, bold=True))
        return text

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[Entry]) -> None:
        event.stop()
        self._load(event.node)

    def on_tree_node_selected(self, event: Tree.NodeSelected[Entry]) -> None:
        entry = event.node.data
        if entry is not None and not entry.is_dir:
            event.stop()
            self.post_message(self.FileSelected(entry.path))

    def _load(self, node: TreeNode[Entry]) -> None:
        entry = node.data
        if entry is None or not entry.is_dir or entry.loaded:
            return
        entry.loaded = True
        dirs, files = self._index.get(entry.path, (set(), set()))
        base = "" if entry.path == "." else entry.path
        names = sorted(dirs, key=str.lower)[:MAX_ENTRIES]
        for name in names:
            node.add(Text(one_line(name)), data=Entry(posixpath.join(base, name) if base else name, True),
                     allow_expand=True)
        room = MAX_ENTRIES - len(names)
        for name in sorted(files, key=str.lower)[:max(room, 0)]:
            node.add_leaf(Text(one_line(name)), data=Entry(posixpath.join(base, name) if base else name, False))
        extra = len(dirs) + len(files) - MAX_ENTRIES
        if extra > 0:
            node.add_leaf(f"… {extra} more (ctrl+p to find a file)")
