"""The offline builder on real code fetched at test time (issue 48): pytest 7.0.0's sdist as a
pytest-dev/pytest 7.0 instance, whose build needs setuptools-scm (PEP 518), built with no network
into swebench's image name; an image made by another version of the builder is not reused. A real
Docker engine."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.docker
pytest.importorskip("swebench", reason="the swebench extra: pip install 'dgym-tui[swebench]' (.ci/run does)")


def test_a_package_whose_build_needs_setuptools_scm_builds_offline(tmp_path, monkeypatch):
    import docker
    import swebench_real
    from conftest import require_docker

    import dgym_tui.batch.swebench_image as image

    require_docker()
    repos = tmp_path / "repos"
    record = swebench_real.pytest_build_instance(repos)
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(record) + "\n")
    done = subprocess.run([sys.executable, "-m", "dgym_tui", "image", "swebench", str(rows), "--repos", str(repos),
                           "--rebuild"], capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "setuptools" in done.stdout and "scm" in done.stdout  # its build requirements became wheels
    name = "swebench/sweb.eval.x86_64.pytest-dev_1776_pytest-v7.0.0-build:latest"
    client = docker.from_env()
    out = client.containers.run(name, ["bash", "-c", (
        "source /opt/miniconda3/bin/activate && conda activate testbed && cd /tmp && "
        "python -c 'import _pytest, pytest; print(_pytest.__file__); print(pytest.__version__)' && "
        "ls /opt/dgym-wheels /opt/dgym-wheels-instance | grep -ci setuptools_scm && "
        "cd /testbed && git log --format=%s | tail -1 && "
        "python -c 'import os, sys; print(os.path.realpath(sys.executable))' && "
        "mkdir -p /tmp/tox/bin && ln -s /opt/miniconda3/envs/testbed/bin/python /tmp/tox/bin/python && "
        "/tmp/tox/bin/python -c 'import sys, pytest; print(sys.prefix)'")], network_mode="none", remove=True,
        user="0").decode()
    lines = out.strip().splitlines()
    # the environment's python is its own interpreter, as conda's is: its real path stays in the
    # environment (newer tox-current-env runs the real path of sys.executable), and run through a
    # symlink elsewhere (tox-current-env 0.0.11's .tox/py39/bin/python) it still has its packages
    assert lines[4].startswith("/opt/miniconda3/envs/testbed/bin/python"), out
    assert lines[5] == "/opt/miniconda3/envs/testbed", out
    assert lines[0] == "/testbed/src/_pytest/__init__.py", out  # `pip install -e .`, as the spec says
    assert lines[1].startswith("0.1.dev") or lines[1][0].isdigit(), out  # setuptools-scm gave it a version
    assert int(lines[2]) >= 1 and lines[3] == "pytest 7.0.0 (its sdist)", out
    # Built again by the same builder: reused. By a changed builder: its key differs, so the old
    # image is not taken for a current one.
    again = image.build(record, repos, progress=lambda line: None)
    assert again["built"] is False and again["image"] == name
    label = client.images.get(name).labels[image.LABEL]
    inputs = {k: record.get(k) for k in ("repo", "version", "base_commit", "environment_setup_commit", "test_patch")}
    base = image._image_id(client, "dgym-tui-sandbox:latest")
    assert image._digest(base, inputs) == label
    monkeypatch.setattr(image, "builder_digest", lambda: "another builder")
    fresh = image._digest(base, inputs)
    assert fresh != label and image._present(client, name, fresh) is None
    # and is built again by it, under the same name (the wheels come from the cache this time)
    rebuilt = image.build(record, repos, progress=lambda line: None)
    assert rebuilt["built"] is True and client.images.get(name).labels[image.LABEL] == fresh


def test_pre_install_edits_run_offline_and_a_failed_step_is_named(tmp_path):
    import docker
    from conftest import require_docker

    from dgym_tui.batch.swebench_testbed import apply_edits
    from dgym_tui.batch.swebench_wheels import BuildError

    require_docker()
    client = docker.from_env()
    testbed = tmp_path / "testbed"
    testbed.mkdir()
    (testbed / "setup.py").write_text("install_requires=['sphinxcontrib-applehelp', 'Jinja2>=2.3']\n")
    (testbed / "tox.ini").write_text("commands = pytest {posargs}\n")
    apply_edits(client, "dgym-tui-sandbox:latest", testbed, [
        "sed -i 's/pytest/pytest -rA/' tox.ini", "sed -i 's/Jinja2>=2.3/Jinja2<3.0/' setup.py",
        "sed -i 's/sphinxcontrib-applehelp/sphinxcontrib-applehelp<=1.0.7/' setup.py"])
    assert (testbed / "setup.py").read_text() == "install_requires=['sphinxcontrib-applehelp<=1.0.7', 'Jinja2<3.0']\n"
    assert (testbed / "tox.ini").read_text() == "commands = pytest -rA {posargs}\n"
    with pytest.raises(BuildError) as failed:  # no network in there: the step that needs it is the one named
        apply_edits(client, "dgym-tui-sandbox:latest", testbed, ["sed -i 's/a/a/' tox.ini",
                                                                 "python3 -c 'import socket; socket.create_connection((\"8.8.8.8\", 53), 3)'",
                                                                 "echo never"])
    assert str(failed.value).startswith("the spec's pre_install step `python3 -c 'import socket;"), failed.value
    assert "\n" not in str(failed.value) and "unreachable" in str(failed.value).lower()


def test_debian_packages_are_fetched_here_and_installed_in_an_image_with_no_network(tmp_path):
    """What an apt step of pre_install needs (or a compiler), fetched by this machine's apt for the
    image's own package set, installs from the files alone."""
    import docker
    from conftest import require_docker

    from dgym_tui.batch.swebench_testbed import fetch_debs

    require_docker()
    client = docker.from_env()
    debs = tmp_path / "debs"
    fetch_debs(client, "dgym-tui-sandbox:latest", ["hunspell-en-us"], debs)
    names = sorted(p.name for p in debs.glob("*.deb"))
    assert any(n.startswith("hunspell-en-us_") for n in names), names
    out = client.containers.run("dgym-tui-sandbox:latest", ["bash", "-c", (
        "apt-get install -y --no-install-recommends /debs/*.deb >/dev/null 2>&1; ls /usr/share/hunspell/en_US.dic")],
        volumes={str(debs): {"bind": "/debs", "mode": "ro"}}, network_mode="none", remove=True, user="0").decode()
    assert out.strip() == "/usr/share/hunspell/en_US.dic", out


def test_a_suite_that_calls_httpbin_runs_against_one_served_in_its_container(tmp_path):
    """requests 2.4.3's tests call httpbin.org; the image serves an httpbin on the loopback of a
    container with no network, and $HTTPBIN_URL points them at it: they pass, as SWE-bench's
    validation (with the network) had them. A test that needs another host still fails, and is
    what the report names (tests/test_swebench_build.py)."""
    import docker
    import swebench_real
    from conftest import require_docker

    require_docker()
    repos = tmp_path / "repos"
    record = swebench_real.requests_httpbin_instance(repos)
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(record) + "\n")
    done = subprocess.run([sys.executable, "-m", "dgym_tui", "image", "swebench", str(rows), "--repos", str(repos)],
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    name = "swebench/sweb.eval.x86_64.psf_1776_requests-v2.4.3-httpbin:latest"
    client = docker.from_env()
    assert client.images.get(name).labels["dgym-tui.serves"] == "httpbin"
    # as the sandbox runs it: no network, not root, every capability dropped, the name mapped
    out = client.containers.run(name, ["bash", "-c", (
        "source /opt/miniconda3/bin/activate && conda activate testbed && cd /testbed && echo $HTTPBIN_URL && "
        "python -m pytest -q -p no:cacheprovider test_requests.py -k 'test_HTTP_200_OK_GET_ALTERNATIVE or "
        "test_DIGEST_HTTP_200_OK_GET or test_POSTBIN_GET_POST_FILES or test_pyopenssl_redirect or "
        "test_stream_timeout' 2>&1 | tail -1")], network_mode="none", remove=True, user="1000:1000",
        cap_drop=["ALL"], extra_hosts={"httpbin.org": "127.0.0.1"}).decode()
    assert out.splitlines()[0] == "http://httpbin.org/", out
    # a GET, a digest auth, two multipart POSTs; over https (port 443, the served certificate
    # trusted through $REQUESTS_CA_BUNDLE) a redirect and a read that times out
    assert out.splitlines()[-1].startswith("6 passed, "), out
    # as the official harness runs it, as root with no host mapped: the entrypoint maps the name
    out = client.containers.run(name, ["bash", "-c", (
        "source /opt/miniconda3/bin/activate && conda activate testbed && cd /testbed && "
        "python -m pytest -q -p no:cacheprovider test_requests.py -k 'test_pyopenssl_redirect' "
        "2>&1 | tail -1")], network_mode="none", remove=True, stderr=True).decode()
    assert out.strip().startswith("1 passed"), out
    # without the served httpbin (a host not served), the same tests fail: there is no network
    out = client.containers.run(name, ["bash", "-c", (
        "source /opt/miniconda3/bin/activate && conda activate testbed && cd /testbed && "
        "HTTPBIN_URL=http://httpbin.invalid/ python -m pytest -q -p no:cacheprovider test_requests.py -k "
        "'test_HTTP_200_OK_GET_ALTERNATIVE' 2>&1 | tail -1")], network_mode="none", remove=True).decode()
    assert out.strip().startswith("1 failed"), out
    # the sandbox's containers on such an image: the name httpbin.org itself leads to the served one
    # (requests 0.14's tests hard-code it, with no $HTTPBIN_URL)
    from dgym_tui.sandbox.docker_sandbox import DockerSandbox

    (tmp_path / "empty").mkdir()
    with DockerSandbox(tmp_path / "empty", image=name, workdir="/testbed",
                       activate="source /opt/miniconda3/bin/activate && conda activate testbed") as box:
        got = box.exec("python -c \"import urllib.request; r = urllib.request.urlopen('http://httpbin.org/get?x=1', "
                       "timeout=10); print(r.status, b'127.0.0.1' in r.read() or 'served')\"", timeout=60)
        assert got.output.split()[:1] == ["200"], got.output
        # over https, a Session.send (which reads no $REQUESTS_CA_BUNDLE) fails on the served
        # certificate, at once, and the report names it as needing the real host
        got = box.exec("python -m pytest -q -p no:cacheprovider test_requests.py -k "
                       "test_mixed_case_scheme_acceptable 2>&1", timeout=120)
        assert got.output.strip().splitlines()[-1].startswith("1 failed"), got.output[-2000:]
        from dgym_tui.batch.swebench_validation import network_bound

        assert network_bound(got.output) == {"RequestsTestCase.test_mixed_case_scheme_acceptable"}
