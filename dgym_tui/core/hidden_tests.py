"""A task's hidden tests (its test patch and its hidden files), put into a sandbox's copy for one
test run and taken away after it, the copy left byte for byte as it was: the `eval` tool's
`--tests eval` mode, as debug-gym's `swebench` environment runs its `eval` (git apply, run,
the test files checked out again). Nothing here commits, so neither the session's diff nor its
checkpoints ever hold them.
"""

from __future__ import annotations

import contextlib
import posixpath
from dataclasses import dataclass, field

from dgym_tui.sandbox.errors import SandboxError, SandboxGone


@dataclass
class HiddenTests:
    patch: str = ""                                       # a unified diff (SWE-bench's test_patch)
    files: dict[str, str] = field(default_factory=dict)   # path -> text (a task folder's hidden files)

    def __bool__(self) -> bool:
        return bool(self.patch.strip() or self.files)

    @property
    def paths(self) -> list[str]:
        """The files they touch, repo-relative, in order."""
        from dgym_tui.core.workspace import patched_files

        return list(dict.fromkeys([*patched_files(self.patch), *self.files]))

    def apply(self, sandbox) -> None:
        """The test patch applied (all or nothing) and the hidden files written. SandboxError: the
        patch does not apply (over the changes made so far)."""
        from dgym_tui.core.workspace import apply_patch

        if self.patch.strip():
            apply_patch(sandbox, self.patch)
        for path, text in self.files.items():
            folder = posixpath.dirname(sandbox.rel_path(path))
            if folder:
                sandbox.exec(["mkdir", "-p", "--", folder], timeout=30)
            sandbox.write_text(path, text)

    def problem(self, sandbox) -> str | None:
        """Why they cannot be applied to the copy as it is now (None: they can). Changes nothing."""
        from dgym_tui.core.workspace import PATCH_FILE

        if not self.patch.strip():
            return None
        sandbox.write_text(PATCH_FILE, self.patch)
        try:
            sandbox.git("apply", "--check", "--whitespace=nowarn", PATCH_FILE)
        except SandboxGone:
            raise
        except SandboxError as e:
            lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
            return (lines[-1] if lines else "git refused it")[:300]
        finally:
            sandbox.exec(["rm", "-f", PATCH_FILE], timeout=10)
        return None

    @contextlib.contextmanager
    def applied(self, sandbox):
        """Applied for the `with` block, then taken away whatever happens: every file they touch
        back as it was (a file they added removed, with the folders they made and what a test run
        left there). SandboxError: they do not apply (nothing is changed then)."""
        saved: dict[str, bytes | None] = {}
        for path in self.paths:
            try:
                saved[path] = sandbox.read_bytes(path)
            except SandboxGone:
                raise
            except SandboxError:
                saved[path] = None
        made = self._new_folders(sandbox, [p for p, data in saved.items() if data is None])
        try:
            self.apply(sandbox)
        except BaseException:
            self._restore(sandbox, saved, made)
            raise
        try:
            yield self
        finally:
            self._restore(sandbox, saved, made)

    @staticmethod
    def _new_folders(sandbox, paths: list[str]) -> list[str]:
        """The folders of these (new) files that do not exist yet, outermost first."""
        folders: list[str] = []
        for path in paths:
            parts = posixpath.dirname(path).split("/") if posixpath.dirname(path) else []
            for n in range(1, len(parts) + 1):
                folder = "/".join(parts[:n])
                if folder in folders:
                    break
                if not sandbox.exec(["test", "-d", folder], timeout=30).ok:
                    folders.append(folder)
                    break  # what is inside a new folder goes with it
        return folders

    @staticmethod
    def _restore(sandbox, saved: dict[str, bytes | None], made: list[str]) -> None:
        for path, data in saved.items():
            if data is None:
                sandbox.exec(["rm", "-f", "--", path], timeout=30)
            else:
                sandbox.write_bytes(path, data)
        for folder in made:
            sandbox.exec(["rm", "-rf", "--", folder], timeout=30)


__all__ = ["HiddenTests"]
