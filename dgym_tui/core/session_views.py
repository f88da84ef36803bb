"""The session's read-only look-ups for the views (the runner's look lane), and what changed.

A part of Session (core/session.py), in a module of its own: its methods are the Session's,
marked `@operation` where the runner runs them.
"""

from __future__ import annotations

import hashlib
import posixpath
from typing import TYPE_CHECKING

from dgym_tui.core.events import SYSTEM, Changes, FileContent
from dgym_tui.core.runner import operation
from dgym_tui.sandbox.errors import SandboxError

if TYPE_CHECKING:  # the debugger and the backends load in start(), off the UI's first frame
    from dgym_tui.sandbox.base import DirEntry, Sandbox


SOURCE_LIMIT = 5 * 1024 * 1024  # bytes of a file a view may read


class ViewsDoor:
    """What the views read, off the act lane: files, folders, searches, the diff."""

    @operation(lane="look")
    def walk(self, path: str = ".", depth: int = 1, actor: str = SYSTEM) -> list[tuple[str, bool]]:
        """Entries under a folder down to `depth` levels, as (path relative to it, is a folder),
        sorted, the sandbox's own .git and the bytecode caches left out."""
        sandbox = self._sandbox()
        rel = sandbox.rel_path(path)
        result = sandbox.exec(["find", rel, "-mindepth", "1", "-maxdepth", str(depth), "-not", "-path", "./.git",
                               "-not", "-path", "./.git/*", "-not", "-name", ".git", "-not", "-name", "__pycache__",
                               "-not", "-path", "*/__pycache__/*", "-printf", r"%y %P\0"],
                              timeout=30)
        if result.exit_code != 0 or not result.output.strip("\0 \n") and not sandbox_is_dir(sandbox, rel):
            raise SandboxError(f"{path}: no such folder in the repository")
        entries = []
        for item in result.output.split("\0"):
            if len(item) > 2:
                entries.append((item[2:], item[0] == "d"))
        return sorted(entries, key=lambda e: e[0].split("/"))


    @operation(lane="look")
    def search(self, pattern: str, path: str = ".", max_results: int = 100,
               actor: str = SYSTEM) -> list[tuple[str, int, str]]:
        """Lines matching an extended regular expression: (file, line number, text)."""
        sandbox = self._sandbox()
        rel = sandbox.rel_path(path)
        result = sandbox.exec(["grep", "-rnIHE", "--exclude-dir=.git", "--exclude-dir=__pycache__",
                               "--exclude-dir=node_modules", "-m", str(max_results), "--", pattern, rel],
                              timeout=30, output_cap=4 * 1024 * 1024)
        if result.exit_code not in (0, 1):
            raise SandboxError(result.output.strip().splitlines()[-1] if result.output.strip() else "grep failed")
        matches = []
        for line in result.output.splitlines():
            file, _, rest = line.partition(":")
            number, _, text = rest.partition(":")
            if number.isdigit():
                matches.append((file.removeprefix("./"), int(number), text))
                if len(matches) >= max_results:
                    break
        return matches


    def _sandbox(self) -> Sandbox:
        if self.sandbox is None or not self.sandbox.baseline:
            raise SandboxError(self.error or "the sandbox is not started")
        return self.sandbox


    @operation(lane="look")
    def read_source(self, path: str, actor: str = SYSTEM) -> str:
        """A file's text for the views: a repo file (relative path) or one outside the repo that
        the stack shows (absolute: the standard library, site-packages). Recorded as an event,
        its content once per hash."""
        return self._read_source(path, actor)


    def _read_source(self, path: str, actor: str) -> str:
        sandbox = self._sandbox()
        root = sandbox.root.rstrip("/") + "/"
        if posixpath.isabs(path) and not path.startswith(root):
            result = sandbox.exec(["cat", "--", path], timeout=10, output_cap=SOURCE_LIMIT)
            if not result.ok:
                raise SandboxError(f"{path}: {result.output.strip() or 'cannot read it'}")
            text = result.output
        else:
            path = sandbox.rel_path(path)
            data = sandbox.read_bytes(path)
            if len(data) > SOURCE_LIMIT:
                raise SandboxError(f"{path}: {len(data) / 2**20:.1f} MB, too big to show")
            text = data.decode("utf-8", errors="replace")
        sha = hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()
        with self._lock:
            known = sha in self._recorded
            self._recorded.add(sha)
            self._fresh.add(path)
        self.events.emit(FileContent(path=path, sha=sha, text=None if known else text), actor)
        return text


    @operation(lane="look")
    def list_dir(self, path: str = ".", actor: str = SYSTEM) -> list[DirEntry]:
        return self._sandbox().list_dir(path)


    @operation(lane="look")
    def list_files(self, actor: str = SYSTEM) -> list[str]:
        return self._sandbox().list_files()


    @operation(lane="look")
    def changed_files(self, actor: str = SYSTEM) -> list[str]:
        """Files the sandbox holds changed from the baseline. Raises when it cannot tell."""
        return sorted(self._refresh_changes(actor))


    def diff_now(self) -> str:
        """The change against the baseline, asked of the sandbox at once, outside the runner (for
        a caller whose runner may be stuck in a command it is about to kill); "" when it cannot."""
        try:
            return self.sandbox.diff() if self.sandbox is not None else ""
        except SandboxError:
            return ""


    @operation(lane="look")
    def diff(self, from_id: str | None = None, actor: str = SYSTEM) -> str:
        """The change in the sandbox from a commit (default: the baseline), new files included."""
        return self._sandbox().diff(from_id)


    def _refresh_changes(self, actor: str) -> dict[str, str]:
        """Compare the copy with its baseline; emit Changes when the answer is new."""
        sandbox = self._sandbox()
        changed = sandbox.changed_status()
        if changed:  # what is not yet in a checkpoint, kept to rebuild a sandbox that dies
            self.workspace.pending = sandbox.diff(self.workspace.head(sandbox))
        with self._lock:
            if changed == self._changes:
                return changed
            self._changes = changed
            self._fresh.clear()  # files may have changed under the views: read them again
        self.events.emit(Changes(changed=changed), actor)
        return changed


def sandbox_is_dir(sandbox, rel: str) -> bool:
    return sandbox.exec(["test", "-d", rel], timeout=10).exit_code == 0
