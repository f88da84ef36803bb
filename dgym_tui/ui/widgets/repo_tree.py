"""The repo copy in the sandbox as a tree, read one directory at a time, when it is expanded.

Listing runs in a thread worker (a Docker `find` or a local scandir), so a huge repo opens at once
and the UI never waits on the sandbox. Files changed in the sandbox carry a marker.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual import work
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

HIDDEN = {"__pycache__", ".pytest_cache", ".git", ".mypy_cache", ".ruff_cache"}
MAX_ENTRIES = 2000  # per directory; the palette's file finder reaches the rest
CHANGED_MARK = " ●"


@dataclass
class Entry:
    path: str  # relative to the repo root; "." for the root
    is_dir: bool
    loaded: bool = False


class RepoTree(Tree[Entry]):
    class FileSelected(Message):
        """The person picked a file to open in the source view."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    def __init__(self, **kwargs) -> None:
        super().__init__("repo", data=Entry(".", True), **kwargs)
        self.sandbox = None
        self.changed: set[str] = set()
        self.guide_depth = 2

    def set_sandbox(self, sandbox, repo_name: str) -> None:
        """The sandbox is up: show the repo's top level."""
        self.sandbox = sandbox
        self.root.set_label(repo_name)
        self.root.remove_children()
        self.root.data.loaded = False
        self.root.expand()  # NodeExpanded loads it

    def set_changed(self, paths) -> None:
        self.changed = set(paths)
        self.refresh()  # labels are rendered from self.changed, so a repaint is enough

    def reveal(self, path: str) -> None:
        """Select a file's node if its directory is already loaded (does not load anything)."""
        node = self._find(path)
        if node is not None:
            self.move_cursor(node)

    def _find(self, path: str) -> TreeNode[Entry] | None:
        stack = [self.root]
        while stack:
            node = stack.pop()
            if node.data and node.data.path == path:
                return node
            stack.extend(node.children)
        return None

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
            text.append(CHANGED_MARK, style=Style(color=color, bold=True))
        return text

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[Entry]) -> None:
        event.stop()
        entry = event.node.data
        if entry is not None and entry.is_dir and not entry.loaded and self.sandbox is not None:
            entry.loaded = True  # here, not in the worker: a second expand must not load twice
            self._load(event.node)

    def on_tree_node_selected(self, event: Tree.NodeSelected[Entry]) -> None:
        entry = event.node.data
        if entry is not None and not entry.is_dir:
            event.stop()
            self.post_message(self.FileSelected(entry.path))

    @work(thread=True, group="tree")
    def _load(self, node: TreeNode[Entry]) -> None:
        entry = node.data
        try:
            entries = self.sandbox.list_dir(entry.path)
        except Exception as e:  # a vanished directory or a dead sandbox: say so in the tree
            self.app.call_from_thread(self._add_error, node, str(e))
            return
        entries = sorted((e for e in entries if e.name not in HIDDEN and not e.name.endswith(".pyc")),
                         key=lambda e: (not e.is_dir, e.name.lower()))
        self.app.call_from_thread(self._add_children, node, entries)

    def _add_children(self, node: TreeNode[Entry], entries) -> None:
        base = "" if node.data.path == "." else node.data.path
        for e in entries[:MAX_ENTRIES]:
            path = posixpath.join(base, e.name) if base else e.name
            if e.is_dir:
                node.add(e.name, data=Entry(path, True), allow_expand=True)
            else:
                node.add_leaf(e.name, data=Entry(path, False))
        if len(entries) > MAX_ENTRIES:
            node.add_leaf(f"… {len(entries) - MAX_ENTRIES} more (ctrl+p to find a file)")

    def _add_error(self, node: TreeNode[Entry], message: str) -> None:
        node.data.loaded = False  # allow a retry on the next expand
        node.add_leaf(Text(f"⚠ {message}", style="italic"))
