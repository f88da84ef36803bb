"""Decide which files of the user's repo go into a sandbox, and pack them.

What is copied: the working tree, tracked and untracked files alike, minus what .gitignore and an
optional .dgymignore (gitignore syntax, patterns relative to the repo root) exclude, minus .git.
git itself does the matching, so the rules are exactly git's. Nothing here writes to the repo.
"""

from __future__ import annotations

import os
import queue
import stat
import subprocess
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from dgym_tui.sandbox.errors import SandboxError

DEFAULT_SIZE_LIMIT = 500 * 1024 * 1024
SANDBOX_UID = 1000  # the image's unprivileged user


@dataclass
class RepoFiles:
    """The files to copy, as paths relative to the repo root, with what was left out and why."""

    root: Path
    files: list[str] = field(default_factory=list)
    symlinks: dict[str, str] = field(default_factory=dict)  # relative path -> link target
    skipped: list[str] = field(default_factory=list)  # e.g. symlinks pointing outside the repo
    total_bytes: int = 0


def check_repo_path(path: str | os.PathLike) -> Path:
    """The repo as an absolute directory, or a SandboxError saying what is wrong with it."""
    p = Path(path).expanduser()
    if not p.exists():
        raise SandboxError(f"no such directory: {p}")
    if not p.is_dir():
        raise SandboxError(f"{p} is a file, not a directory: give the repository's folder")
    return p.resolve()


def _git(args: list[str], cwd: Path) -> bytes:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True
    ).stdout


def _git_ok(args: list[str], cwd: Path) -> bool:
    try:
        _git(args, cwd)
        return True
    except subprocess.CalledProcessError:
        return False


def _split(out: bytes) -> list[str]:
    return [os.fsdecode(p) for p in out.split(b"\0") if p]


def _list_candidates(root: Path) -> list[str]:
    """Paths git would consider part of the working tree (tracked + untracked, not ignored)."""
    dgymignore = root / ".dgymignore"
    extra = [f"--exclude-from={dgymignore}"] if dgymignore.is_file() else []
    try:
        inside = _git_ok(["rev-parse", "--is-inside-work-tree"], root)
    except FileNotFoundError:
        raise SandboxError("git is not installed: it is needed to copy the repo (see dgym-tui doctor)")
    if inside and _git_ok(["check-ignore", "-q", "."], root):
        inside = False  # the folder itself is ignored by an enclosing repository
    if inside:
        listed = _split(_git(["ls-files", "-z", "-co", "--exclude-standard", *extra], root))
        if extra:  # tracked files are never excluded by ls-files; drop those .dgymignore matches
            dropped = set(_split(_git(["ls-files", "-z", "-ci", *extra], root)))
            listed = [p for p in listed if p not in dropped]
        return listed
    # Not a git checkout: an empty throwaway git dir lets git apply the .gitignore files anyway.
    with tempfile.TemporaryDirectory(prefix="dgym-ls-") as gitdir:
        subprocess.run(["git", "init", "-q", "--bare", gitdir], check=True, capture_output=True)
        out = _git([f"--git-dir={gitdir}", f"--work-tree={root}", "ls-files", "-z", "-o",
                    "--exclude-standard", *extra], root)
    return _split(out)


def collect_files(repo: str | os.PathLike, size_limit: int = DEFAULT_SIZE_LIMIT) -> RepoFiles:
    root = check_repo_path(repo)
    result = RepoFiles(root=root)
    sizes: dict[str, int] = {}
    for rel in sorted(set(_list_candidates(root))):
        if rel == ".git" or rel.startswith(".git/") or "/.git/" in rel:
            continue
        full = root / rel
        try:
            st = full.lstat()
        except FileNotFoundError:
            continue  # tracked but deleted in the working tree
        if stat.S_ISLNK(st.st_mode):
            resolved = full.resolve()
            if resolved == root or root in resolved.parents:
                # Relative, so that in the copy it points into the copy, never back at the user's repo.
                result.symlinks[rel] = os.path.relpath(resolved, full.parent)
            else:
                result.skipped.append(f"{rel} (symlink pointing outside the repo)")
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        result.files.append(rel)
        result.total_bytes += st.st_size
        sizes[rel] = st.st_size
    if not result.files and not result.symlinks:
        raise SandboxError(f"{root} has no files to copy: nothing to debug there")
    if result.total_bytes > size_limit:
        raise SandboxError(
            f"{root} holds {result.total_bytes / 2**20:.0f} MB, over the {size_limit / 2**20:.0f} MB "
            f"limit; biggest folders: {_biggest_dirs(sizes)} (exclude them in .dgymignore)"
        )
    return result


def _biggest_dirs(sizes: dict[str, int], depth: int = 2, count: int = 3) -> str:
    per_dir: dict[str, int] = {}
    for rel, size in sizes.items():
        parts = rel.split("/")[:-1]
        for i in range(1, min(len(parts), depth) + 1):
            key = "/".join(parts[:i]) + "/"
            per_dir[key] = per_dir.get(key, 0) + size
    top = sorted(per_dir.items(), key=lambda kv: -kv[1])[:count]
    return ", ".join(f"{d} ({s / 2**20:.0f} MB)" for d, s in top) or "(files at the top level)"


def write_tar(files: RepoFiles, fileobj, prefix: str = "", uid: int = SANDBOX_UID,
              extra: tuple[tuple[str, Path], ...] = ()) -> None:
    """Write files (and in-repo symlinks) as a tar stream owned by uid, under prefix/; `extra`
    adds whole folders (arcname, path) to the same archive, minus __pycache__."""
    with tarfile.open(fileobj=fileobj, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        def owned(info: tarfile.TarInfo):
            if "__pycache__" in info.name:
                return None
            info.uid = info.gid = uid
            return info

        for arcname, path in extra:
            tar.add(path, arcname=arcname, filter=owned)
        dirs_done: set[str] = set()

        def add_dirs(rel: str) -> None:
            parent = os.path.dirname(rel)
            if not parent or parent in dirs_done:
                return
            add_dirs(parent)
            dirs_done.add(parent)
            info = tarfile.TarInfo(_join(prefix, parent))
            info.type, info.mode, info.uid, info.gid = tarfile.DIRTYPE, 0o755, uid, uid
            tar.addfile(info)

        for rel in files.files:
            add_dirs(rel)
            full = files.root / rel
            st = full.stat()
            info = tarfile.TarInfo(_join(prefix, rel))
            info.size, info.mtime, info.uid, info.gid = st.st_size, int(st.st_mtime), uid, uid
            info.mode = 0o755 if st.st_mode & stat.S_IXUSR else 0o644
            with open(full, "rb") as fh:
                tar.addfile(info, fh)
        for rel, target in files.symlinks.items():
            add_dirs(rel)
            info = tarfile.TarInfo(_join(prefix, rel))
            info.type, info.linkname, info.uid, info.gid = tarfile.SYMTYPE, target, uid, uid
            tar.addfile(info)


class _ChunkWriter:
    """A write-only file that hands 256 KB chunks to a queue (for a streaming upload)."""

    def __init__(self, out: "queue.Queue[bytes | None]", size: int = 256 * 1024):
        self.out, self.size, self.buf = out, size, bytearray()

    def write(self, data: bytes) -> int:
        self.buf += data
        if len(self.buf) >= self.size:
            self.out.put(bytes(self.buf))
            self.buf.clear()
        return len(data)

    def close(self) -> None:
        if self.buf:
            self.out.put(bytes(self.buf))
        self.out.put(None)


def tar_stream(files: RepoFiles, prefix: str = "", uid: int = SANDBOX_UID,
               extra: tuple[tuple[str, Path], ...] = ()) -> Iterator[bytes]:
    """The tar as chunks produced on a thread while the consumer sends them: packing and
    uploading overlap instead of one waiting for the other."""
    chunks: queue.Queue = queue.Queue(maxsize=64)
    failure: list[BaseException] = []

    def produce():
        writer = _ChunkWriter(chunks)
        try:
            write_tar(files, writer, prefix, uid, extra)
        except BaseException as e:  # re-raised on the consuming side
            failure.append(e)
        finally:
            writer.close()

    threading.Thread(target=produce, daemon=True, name="tar-stream").start()
    while (chunk := chunks.get()) is not None:
        yield chunk
    if failure:
        raise failure[0]


def _join(prefix: str, rel: str) -> str:
    return f"{prefix.rstrip('/')}/{rel}" if prefix else rel
