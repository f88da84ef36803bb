"""The final change of a session, as one `git apply`-able diff against the user's repo.

The session file holds each checkpoint's patch (the diff from the one before), and which
checkpoints an undo dropped. The final diff is rebuilt in a temporary git repository: the
files the patches touch, as they are in the user's repo, then every checkpoint still in force
applied in order, then one `git diff` (new, deleted and binary files included). The touched
files must still be what the session started from (the sha256 hashes in the file's header);
when they are not, the rebuild says which, and tells apart a repo that already holds the
session's change (applied before: reverse-applying the checkpoints gives back the start).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from dgym_tui.core import events as ev


class PatchError(Exception):
    """The final diff cannot be rebuilt; str() says why in one line. `changed`: the touched
    files that differ from the session's start, when that is why."""

    def __init__(self, message: str, changed: list[str] | None = None):
        super().__init__(message)
        self.changed = changed or []


@dataclass
class FinalPatch:
    diff: str                         # "" when the session changed nothing
    touched: list[str]                # files the diff changes, repo-relative
    start: dict[str, str | None]      # touched file -> sha256 at the session's start (None: absent)
    final: dict[str, str | None]      # touched file -> sha256 once applied (None: deleted)
    changed: list[str] = field(default_factory=list)  # differ from the start (and are not the result)
    applied: bool = False             # the repo already holds the result
    base_from_git: bool = False       # changed files' start came from the repo's git HEAD


def checkpoint_line(events) -> list[ev.Checkpoint]:
    """The checkpoints in force at the end, in order: a new sandbox announces the carried ones
    again, an undo drops the ones it lists (the same rule as DebugState)."""
    line: list[ev.Checkpoint] = []
    for event in events:
        if event.kind == "sandbox_ready":
            line = []
        elif event.kind == "checkpoint":
            line.append(event.data)
        elif event.kind == "restored":
            line = [c for c in line if c.id not in event.data.undone]
    return line


def final_patch(recording, against_start: bool = False) -> FinalPatch:
    """Rebuild the final diff of a recorded session (a SessionFile) against the user's repo.

    Raises PatchError when the repo is gone, when the header has no hashes to check against,
    or when touched files changed since the start (unless `against_start`: then the start is
    taken from the repo's git HEAD when it matches the recorded hashes, for `git apply --3way`).
    A repo that already holds the change gives `applied=True` and the diff that made it."""
    header = recording.header
    repo = Path(str(header.get("repo") or ""))
    if not header.get("repo") or not repo.is_dir():
        raise PatchError(f"the repo {repo} no longer exists: the final change cannot be rebuilt against it")
    hashes = header.get("repo_hashes")
    if not isinstance(hashes, dict) or (not hashes and header.get("repo_hashes_error")):
        why = header.get("repo_hashes_error") or "the session file's header has no file hashes"
        raise PatchError(f"cannot check the repo against the session's start: {why}")
    patches = [c.patch for c in checkpoint_line(recording.events) if c.patch.strip()]
    with _TempRepo() as tmp:
        touched = tmp.paths_of(patches)
        for rel in touched:
            _check_path(rel)
        start = {rel: hashes.get(rel) for rel in touched}
        now = {rel: file_sha256(repo / rel) for rel in touched}
        changed = [rel for rel in touched if now[rel] != start[rel]]
        applied = base_from_git = False
        tmp.fill(repo, touched)
        if changed:
            if patches and tmp.reverse(patches) and tmp.hashes(touched) == start:
                applied = True
            else:
                tmp.fill(repo, touched)  # back from a partial reverse
                if against_start and _start_from_git(tmp, repo, changed, start):
                    base_from_git = True
                else:
                    raise PatchError(_changed_message(repo, changed), changed)
        tmp.commit()
        for number, patch in enumerate(patches, start=1):
            if not tmp.apply(patch):
                raise PatchError(f"checkpoint {number} of the session does not apply to the repo's files "
                                 "(the session file and the repo disagree)")
        diff = tmp.diff()
        final = tmp.hashes(touched)
    return FinalPatch(diff=diff, touched=[rel for rel in touched if final[rel] != start[rel]], start=start,
                      final=final, changed=[] if applied else changed, applied=applied,
                      base_from_git=base_from_git)


def _changed_message(repo: Path, changed: list[str]) -> str:
    return (f"{len(changed)} file(s) the session changes differ in {repo} from when it started: "
            f"{', '.join(changed)}")


def _check_path(rel: str) -> None:
    """A path from the session file is untrusted: it must stay inside the repo."""
    parts = PurePosixPath(rel).parts
    if not rel or rel.startswith("/") or ".." in parts or (parts and parts[0] == ".git"):
        raise PatchError(f"the session's patches touch {rel!r}, outside the repo: refusing")


def file_sha256(path: Path) -> str | None:
    if not path.is_file():
        return None
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def run_git(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    """git, captured; no git on the PATH is a one-line PatchError, not a traceback."""
    try:
        return subprocess.run(["git", *args], capture_output=True, **kwargs)
    except FileNotFoundError:
        raise PatchError("git is needed for this and was not found on the PATH") from None


def git_location(repo: Path) -> tuple[Path, str] | None:
    """(the work tree's top folder, repo's path inside it) when repo is in a git work tree."""
    out = run_git(["-C", str(repo), "rev-parse", "--show-toplevel", "--show-prefix"], text=True)
    if out.returncode != 0:
        return None
    lines = out.stdout.split("\n")
    return Path(lines[0]), lines[1] if len(lines) > 1 else ""


def _start_from_git(tmp: _TempRepo, repo: Path, changed: list[str], start: dict) -> bool:
    """Put the session's start of the changed files into tmp from the repo's git HEAD, if HEAD
    holds exactly what the session started from."""
    where = git_location(repo)
    if where is None:
        return False
    top, prefix = where
    for rel in changed:
        shown = run_git(["-C", str(top), "show", f"HEAD:{prefix}{rel}"])
        data = shown.stdout if shown.returncode == 0 else None
        if (hashlib.sha256(data).hexdigest() if data is not None else None) != start[rel]:
            return False
        tmp.write(rel, data)
    return True


class _TempRepo:
    """A throwaway git repository, blind to the user's git configuration (a `diff.noprefix`
    or `core.autocrlf` there must not change the diff)."""

    def __enter__(self) -> _TempRepo:
        self._dir = tempfile.TemporaryDirectory(prefix="dgym-tui-patch-")
        self.root = Path(self._dir.name) / "repo"
        self.root.mkdir()
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self._dir.name, "LANG": "C",
                    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                    "GIT_AUTHOR_NAME": "dgym-tui", "GIT_AUTHOR_EMAIL": "dgym-tui@localhost",
                    "GIT_COMMITTER_NAME": "dgym-tui", "GIT_COMMITTER_EMAIL": "dgym-tui@localhost"}
        self.git("init", "-q")
        return self

    def __exit__(self, *exc) -> None:
        self._dir.cleanup()

    def git(self, *args: str, stdin: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess:
        out = run_git(list(args), cwd=self.root, env=self.env, input=stdin)
        if check and out.returncode != 0:
            raise PatchError(f"git {args[0]} failed: {out.stderr.decode(errors='replace').strip()[-300:]}")
        return out

    def paths_of(self, patches: list[str]) -> list[str]:
        """Every path the patches touch (both sides of a rename), in first-seen order."""
        seen: dict[str, None] = {}
        for patch in patches:
            out = self.git("apply", "--numstat", "-z", "-", stdin=patch.encode("utf-8", "surrogateescape")).stdout
            fields = out.split(b"\0")
            i = 0
            while i < len(fields) - 1:
                counts = fields[i].split(b"\t")
                if len(counts) == 3 and counts[2]:
                    names = [counts[2]]
                    i += 1
                else:  # a rename: the counts, then the old and the new name
                    names = fields[i + 1:i + 3]
                    i += 3
                for name in names:
                    seen[os.fsdecode(name)] = None
        return list(seen)

    def write(self, rel: str, data: bytes | None, mode: int | None = None) -> None:
        path = self.root / rel
        if data is None:
            path.unlink(missing_ok=True)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if mode is not None:
            path.chmod(mode & 0o777)

    def fill(self, repo: Path, touched: list[str]) -> None:
        """The touched files as they are in the user's repo (absent ones stay absent)."""
        for rel in touched:
            source = repo / rel
            if source.is_file():
                self.write(rel, source.read_bytes(), source.stat().st_mode)
            else:
                self.write(rel, None)

    def hashes(self, touched: list[str]) -> dict[str, str | None]:
        return {rel: file_sha256(self.root / rel) for rel in touched}

    def reverse(self, patches: list[str]) -> bool:
        """Undo the patches, last first, in the work tree; False if one does not reverse."""
        for patch in reversed(patches):
            if self.git("apply", "-R", "--whitespace=nowarn", "-", stdin=patch.encode("utf-8", "surrogateescape"),
                        check=False).returncode != 0:
                return False
        return True

    def commit(self) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "--no-verify", "-m", "start")

    def apply(self, patch: str) -> bool:
        return self.git("apply", "--index", "--whitespace=nowarn", "-",
                        stdin=patch.encode("utf-8", "surrogateescape"), check=False).returncode == 0

    def diff(self) -> str:
        out = self.git("diff", "--cached", "--binary", "--no-renames", "--no-color", "--no-ext-diff", "HEAD")
        return out.stdout.decode("utf-8", "surrogateescape")
