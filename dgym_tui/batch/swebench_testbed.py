"""A SWE-bench instance's /testbed, made on this machine before its image is built
(batch/swebench_image.py):

- the repository with its history up to the base commit, as SWE-bench's images have it (agents
  read `git log` and `git blame`): the base and its ancestors, the tags made no later than the
  base (SWE-bench's own rule), no remote, nothing later. A mirror that refuses the fetch (an
  `upload-pack` that aborts) still gives the base's tree through `git archive`: one commit then;
- the spec's `pre_install` edits (pins in setup.py, tox.ini's pytest flags) made before the wheels
  are resolved, in a container of the base image with no network, so the wheels fit the edited
  pins; a failed step is named by its own command;
- the Debian packages `pre_install` installs with apt, fetched on this machine for the base
  image's own package set, then installed in the image from those files: the build stays offline.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import tempfile
import zipfile
from pathlib import Path

from dgym_tui.batch.swebench_wheels import BuildError

DEBS = "/opt/dgym-debs"
# What replaces an apt step in the image's setup script: the packages fetched for it, from files.
APT_FROM_FILES = f"apt-get install -y --no-install-recommends {DEBS}/*.deb"
GIT_ENV = {"GIT_AUTHOR_NAME": "dgym-tui", "GIT_AUTHOR_EMAIL": "build@dgym-tui.invalid",
           "GIT_COMMITTER_NAME": "dgym-tui", "GIT_COMMITTER_EMAIL": "build@dgym-tui.invalid"}


def _git(*args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    if check and done.returncode != 0:
        raise BuildError(f"git {args[0] if args[0] not in ('-C', '--git-dir') else args[2]} failed: "
                         f"{(done.stderr.strip().splitlines() or ['git failed'])[-1][:300]}")
    return done


def tags_up_to(git_dir: str, commit: str) -> list[str]:
    """The tags whose commit is no later than `commit`'s (by committer time): those SWE-bench's
    setup script keeps."""
    limit = _commit_time(git_dir, commit)
    return [name for name, when in _tag_times(git_dir) if when <= limit]


def _commit_time(git_dir: str, commit: str) -> int:
    header = _git("--git-dir", git_dir, "cat-file", "commit", commit).stdout  # read alone: no tree walked
    return int(next(line for line in header.splitlines() if line.startswith("committer ")).split()[-2])


def _tag_times(git_dir: str) -> list[tuple[str, int]]:
    """Each tag's ref and its commit's committer time (an annotated tag's, peeled)."""
    listed = _git("--git-dir", git_dir, "for-each-ref", "--format=%(refname) %(*committerdate:unix) "
                  "%(committerdate:unix)", "refs/tags").stdout
    return [(name, int(times[0])) for name, *times in (line.split() for line in listed.splitlines()) if times]


def fetch(git_dir: str, commit: str, into: Path) -> str:
    """/testbed at the base commit, on a branch of its own: "history" (the base's ancestors and
    the tags up to it), else "archive" (the tree in one commit, when the mirror refuses a fetch;
    "archive (the mirror lost PATH, …)" when even the base's tree misses files, left out)."""
    into.mkdir(parents=True)
    _git("init", "-q", cwd=into)
    refs = [f"+{tag}:{tag}" for tag in tags_up_to(git_dir, commit)] if _has(git_dir, commit) else []
    done = _git("-c", "uploadpack.allowAnySHA1InWant=true", "fetch", "-q", "--no-tags", git_dir, commit, *refs,
                cwd=into, check=False)
    if done.returncode == 0:
        _git("checkout", "-q", "-b", "main", "FETCH_HEAD", cwd=into)
        return "history"
    why = (done.stderr.strip().splitlines() or ["git fetch failed"])[-1]
    lost: list[str] = []
    while True:  # a file whose object the mirror lost is left out, and named
        archive = subprocess.run(["git", "--git-dir", git_dir, "archive", "--format=tar", commit, "--", ".",
                                  *[f":(exclude,literal){path}" for path in lost]], capture_output=True)
        said = archive.stderr.decode(errors="replace")
        missing = re.findall(r"invalid object \S+ \S+ for '([^']+)'", said)
        if archive.returncode == 0 or not missing or len(lost) >= 20 or set(missing) <= set(lost):
            break
        lost += [path for path in missing if path not in lost]
    if archive.returncode != 0:
        raise BuildError(f"cannot get base commit {commit[:12]} from {git_dir}: {why[:200]}; "
                         f"git archive: {(said.strip().splitlines() or ['failed'])[0][:200]}")
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    _git("checkout", "-q", "-b", "main", cwd=into)
    _git("add", "-A", "-f", cwd=into)
    _git("commit", "-q", "-m", f"the tree of {commit} (git archive: the mirror refused a fetch)", cwd=into)
    # the base's id still names it: swebench's scripts `git show` it and `git checkout` test files from it
    _git("update-ref", f"refs/replace/{commit}", "HEAD", cwd=into)
    return f"archive (the mirror lost {', '.join(lost)})" if lost else "archive"


RELEASE_TAG = re.compile(r"^refs/tags/v?(\d+(?:\.\d+)*)$")  # a final release: v5.2.1, 1.3, v2


def nearest_releases(git_dir: str, commit: str, count: int = 4) -> list[str]:
    """The repository's final releases nearest the base commit in time, either side (its tags)."""
    when = _commit_time(git_dir, commit)
    found = sorted((abs(time - when), m.group(1)) for name, time in _tag_times(git_dir)
                   if (m := RELEASE_TAG.match(name)))
    return [version for _, version in found[:count]]


def lost_paths(testbed: str) -> list[str]:
    """The files fetch() left out, from what it said ("archive (the mirror lost A, B)")."""
    lost = re.match(r"archive \(the mirror lost (.*)\)$", testbed)
    return lost.group(1).split(", ") if lost else []


def stand_in_lost(testbed: Path, git_dir: str, commit: str, lost: list[str], project: str, python: str,
                  sources_args: tuple = (), sources_env: dict | None = None) -> str | None:
    """Files the mirror has no object of (a snapshot that leaves out its largest files: astropy's
    IERS table), taken from the project's own release wheel nearest the base: the same path,
    byte for byte where a release holds the base's very blob, else that release's version of it.
    Written into /testbed's one commit, so `git status` stays clean. Says what it did, or None."""
    said: dict[str, str] = {}
    for version in nearest_releases(git_dir, commit):  # each release's wheel downloaded once
        for path, data in _from_wheel(project, version, [p for p in lost if p not in said], python,
                                      sources_args, sources_env).items():
            (testbed / path).parent.mkdir(parents=True, exist_ok=True)
            (testbed / path).write_bytes(data)
            want = _git("--git-dir", git_dir, "rev-parse", f"{commit}:{path}", check=False).stdout.strip()
            same = _git("hash-object", str(testbed / path)).stdout.strip() == want
            said[path] = f"{path} from {project} {version}'s wheel" + ("" if same else " (that release's version of it)")
        if len(said) == len(lost):
            break
    if not said:
        return None
    _git("add", "-A", "-f", cwd=testbed)
    _git("commit", "-q", "--amend", "--no-edit", cwd=testbed)
    _git("update-ref", f"refs/replace/{commit}", "HEAD", cwd=testbed)
    return "; ".join(said[path] for path in lost if path in said)


def _from_wheel(project: str, version: str, paths: list[str], python: str, args: tuple,
                env: dict | None) -> dict[str, bytes]:
    """Those of `paths` (repository paths: `pkg/…` or `src/pkg/…`) that `project==version`'s wheel
    for `python` holds, downloaded with no dependencies; {} where there is no such wheel."""
    if not paths:
        return {}
    with tempfile.TemporaryDirectory(prefix="dgym-stand-in-") as tmp:
        done = subprocess.run([python, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:",
                               "-d", tmp, f"{project}=={version}", *args], capture_output=True, text=True,
                              env=env, timeout=600)
        wheels = list(Path(tmp).glob("*.whl"))
        if done.returncode != 0 or not wheels:
            return {}
        with zipfile.ZipFile(wheels[0]) as wheel:
            names = set(wheel.namelist())
            inside = {path: path[len("src/"):] if path.startswith("src/") else path for path in paths}
            return {path: wheel.read(name) for path, name in inside.items() if name in names}


def fill_submodules(testbed: Path, repos: str | os.PathLike) -> tuple[list[str], list[str]]:
    """The base's submodules (astropy 1.3's astropy_helpers), each checked out at its recorded
    commit from a clone under `repos`, as SWE-bench's build had it from the network: initialised,
    so astropy's bootstrap finds it there and asks git for nothing (it runs `git submodule update
    --init` on one that is not), and /testbed's status stays clean. The submodule's remote is its
    own URL again afterwards. A clone that refuses the fetch gives the files alone (git archive).
    Returns (filled, missing): a submodule with no clone here is named, and left empty."""
    from dgym_tui.batch.tasks import find_repo

    if not (testbed / ".gitmodules").is_file():
        return [], []
    listed = _git("config", "-f", ".gitmodules", "--get-regexp", r"^submodule\..*\.(path|url)$", cwd=testbed,
                  check=False).stdout
    modules: dict[str, dict[str, str]] = {}
    for line in listed.splitlines():
        key, _, value = line.partition(" ")
        name, _, field = key[len("submodule."):].rpartition(".")
        modules.setdefault(name, {})[field] = value.strip()
    filled, missing = [], []
    for name, module in modules.items():
        path, url = module.get("path"), module.get("url", "")
        entry = _git("ls-tree", "HEAD", "--", path, cwd=testbed, check=False).stdout.split() if path else []
        if len(entry) < 3 or entry[0] != "160000":  # not a gitlink at the base
            continue
        m = re.search(r"github\.com[:/]([^/]+)/([^/]+?)(?:\.git)?/?$", url)
        clone = find_repo(repos, f"{m.group(1)}/{m.group(2)}") if m else None
        if clone and _checkout_submodule(testbed, name, path, url, clone):
            filled.append(path)
            continue
        archive = (subprocess.run(["git", "--git-dir", clone, "archive", "--format=tar", entry[2]], capture_output=True)
                   if clone else None)
        (testbed / path).mkdir(parents=True, exist_ok=True)  # as a checkout leaves an uninitialised one
        if archive is None or archive.returncode != 0:
            missing.append(f"{path} ({url} at {entry[2][:12]})")
            continue
        subprocess.run(["tar", "-x", "-C", str(testbed / path)], input=archive.stdout, check=True)
        filled.append(f"{path} (its files only: the clone refused a fetch)")
    return filled, missing


def _checkout_submodule(testbed: Path, name: str, path: str, url: str, clone: str) -> bool:
    """git's own `submodule update --init` of one submodule, from the local clone; True when done."""
    _git("config", f"submodule.{name}.url", clone, cwd=testbed)
    done = _git("-c", "protocol.file.allow=always", "submodule", "update", "--init", "-q", "--", path,
                cwd=testbed, check=False)
    _git("config", f"submodule.{name}.url", url, cwd=testbed)
    if done.returncode != 0:
        _git("submodule", "deinit", "-q", "-f", "--", path, cwd=testbed, check=False)
        return False
    _git("-C", str(testbed / path), "remote", "set-url", "origin", url, check=False)
    return True


def _has(git_dir: str, commit: str) -> bool:
    return _git("--git-dir", git_dir, "cat-file", "-e", f"{commit}^{{commit}}", check=False).returncode == 0


# --- pre_install ------------------------------------------------------------------------------------

_APT = re.compile(r"\bapt(-get)?\s+(-\S+\s+)*install\b")


# A step that sets up the system, not the repository (Django's locales): it runs in the image.
_SYSTEM = re.compile(r"(^|[\s>'\"])/(etc|usr|var|opt)/|\blocale-gen\b|\bupdate-alternatives\b|\bldconfig\b")


def split_pre_install(steps: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(the edits of the repository, the system steps, the Debian packages): a step that installs
    with apt gives its packages (its `apt-get update` and `upgrade` need nothing here); a step on
    the system's files runs in the image, in its place; every other step edits the repository."""
    edits, system, packages = [], [], []
    for step in steps:
        if "apt-get" in step or re.match(r"\s*apt\s", step):
            for part in re.split(r"&&|;", step):
                if _APT.search(part):
                    words = shlex.split(part[_APT.search(part).end():])
                    packages += [w for w in words if not w.startswith("-") and "=" not in w]
        elif _SYSTEM.search(step):
            system.append(step)
        else:
            edits.append(step)
    return edits, system, list(dict.fromkeys(packages))


def apply_edits(client, image: str, testbed: Path, edits: list[str]) -> None:
    """Run the spec's edits in /testbed as its setup script would, in a container of `image` with no
    network. BuildError names the step that failed and what it said."""
    if not edits:
        return
    script = "\n".join(["set -euo pipefail", "trap 'echo \"dgym-failed: $BASH_COMMAND\" >&2' ERR",
                        "cd /testbed", *edits]) + "\n"
    (testbed.parent / "pre_install.sh").write_text(script)
    container = client.containers.create(image, ["bash", "/dgym/pre_install.sh"], user="0", network_mode="none",
                                         volumes={str(testbed): {"bind": "/testbed", "mode": "rw"},
                                                  str(testbed.parent): {"bind": "/dgym", "mode": "ro"}})
    try:
        container.start()
        code = container.wait(timeout=600).get("StatusCode", 1)
        said = container.logs(stdout=True, stderr=True).decode(errors="replace")
    finally:
        container.remove(force=True)
    if code != 0:
        failed = re.findall(r"dgym-failed: (.*)", said)
        other = [ln for ln in said.splitlines() if ln.strip() and not ln.startswith("dgym-failed")]
        raise BuildError(f"the spec's pre_install step `{(failed or ['?'])[-1][:200]}` failed"
                         + (f": {other[-1][:200]}" if other else ""))


def fetch_debs(client, image: str, packages: list[str], into: Path) -> None:
    """The packages and what they need that `image` lacks, as .deb files in `into`, fetched by this
    machine's apt (a Debian like the image's) for the image's own package set."""
    into.mkdir(parents=True, exist_ok=True)
    if not packages:
        return
    with tempfile.TemporaryDirectory(prefix="dgym-apt-") as tmp:
        status = Path(tmp) / "status"
        container = client.containers.create(image, ["true"])
        try:
            bits, _ = container.get_archive("/var/lib/dpkg/status")
            import io
            import tarfile

            with tarfile.open(fileobj=io.BytesIO(b"".join(bits))) as tar:
                status.write_bytes(tar.extractfile(tar.getmembers()[0]).read())
        finally:
            container.remove(force=True)
        (Path(tmp) / "partial").mkdir()
        argv = ["apt-get", "-q", "-y", "--download-only", "--no-install-recommends",
                "-o", f"Dir::State::status={status}", "-o", f"Dir::Cache::archives={tmp}",
                "-o", "Debug::NoLocking=1", "install", *packages]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0 and "Unable to locate" in done.stderr + done.stdout:
            subprocess.run(["apt-get", "-q", "update"], capture_output=True, timeout=600)
            done = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            last = [ln for ln in (done.stderr + done.stdout).splitlines() if ln.startswith("E:")] or ["apt-get failed"]
            raise BuildError(f"the Debian packages {' '.join(packages)} cannot be fetched here: {last[-1][:200]}")
        for deb in Path(tmp).glob("*.deb"):
            os.replace(deb, into / deb.name)


# --- tests that reach a host -------------------------------------------------------------------------

HTTPBIN_PORT = 80
# By name, as the tests had it: an https:// variant of it then reaches the served https, where
# the address's port 80 would take a TLS handshake and never answer (test_mixed_case_scheme_acceptable).
# requests.get and the like trust the served certificate ($REQUESTS_CA_BUNDLE); a Session.send of
# requests 2.x reads no environment and verifies against requests' own bundle in /testbed, which
# the real host's certificate chains to and the served one cannot: it fails, and is named.
HTTPBIN_URL = "http://httpbin.org/"


def calls_httpbin(testbed: Path) -> bool:
    """The repository's tests call httpbin.org (requests' older suites, through $HTTPBIN_URL or by
    that name): SWE-bench ran them with the network; here an httpbin is served inside the
    container instead, as debug-gym does, over http and https, and the name httpbin.org leads
    there (the sandbox's containers map it to the loopback; the entrypoint, run as root, too)."""
    for path in testbed.rglob("*.py"):
        if "test" in path.name or "test" in path.parent.name or path.name == "conftest.py":
            try:
                text = path.read_text(errors="replace")
            except OSError:
                continue
            if "httpbin.org" in text:
                return True
    return False


HTTPBIN_TLS_PORT = 443
HTTPBIN_CERT = "/opt/dgym-httpbin/httpbin.pem"  # its certificate, the one its tests' requests trust
HTTPBIN_KEY = "/opt/dgym-httpbin/httpbin.key"

# Made as the image is built (no network): one certificate for httpbin.org and 127.0.0.1 that is
# its own authority, so https://httpbin.org verifies against it ($REQUESTS_CA_BUNDLE) as it did
# against the real host's. requests' suites call both http:// and https://httpbin.org.
HTTPBIN_MAKE_CERT = f"""import datetime, ipaddress
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "httpbin.org")])
cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(datetime.datetime(2000, 1, 1)).not_valid_after(datetime.datetime(2099, 1, 1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("httpbin.org"),
                                                    x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256()))
open("{HTTPBIN_CERT}", "wb").write(cert.public_bytes(serialization.Encoding.PEM))
open("{HTTPBIN_KEY}", "wb").write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                    serialization.NoEncryption()))
"""

# The image's entrypoint when it serves httpbin: the servers in the background (on the loopback,
# which a container with no network still has; http and https), ready before the container's own
# command runs. Under gunicorn, as httpbin.org runs: a request line it would refuse (requests'
# bytes method, "b'GET'") is refused here too, where a development server lets it through.
HTTPBIN_ENTRYPOINT = f"""#!/bin/sh
# the sandbox maps the name to the loopback (extra hosts); a container run as root without it
# (the official harness's) gets the line here
grep -q " httpbin.org" /etc/hosts 2>/dev/null || {{ echo "127.0.0.1 httpbin.org" >> /etc/hosts; }} 2>/dev/null || true
/opt/dgym-httpbin/bin/gunicorn --bind 127.0.0.1:{HTTPBIN_PORT} --workers 2 --threads 4 httpbin:app \
    >/tmp/dgym-httpbin.log 2>&1 &
/opt/dgym-httpbin/bin/gunicorn --bind 127.0.0.1:{HTTPBIN_TLS_PORT} --workers 2 --threads 4 \
    --certfile {HTTPBIN_CERT} --keyfile {HTTPBIN_KEY} httpbin:app >/tmp/dgym-httpbin-tls.log 2>&1 &
for port in {HTTPBIN_PORT} {HTTPBIN_TLS_PORT}; do
    for _ in $(seq 50); do
        /opt/dgym-httpbin/bin/python -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" \
            2>/dev/null && break
        sleep 0.2
    done
done
exec "$@"
"""
