"""The two packages as a user gets them: both wheels built from this checkout, installed
alone in a fresh venv (their dependencies resolved within the ranges they declare, as
for anyone), `taisce serve --demo` started from that venv outside the checkout, and the
demo recalled through the installed client over real HTTP.

Slow (a venv of about 40 packages): marked `packaging`, `pytest -m packaging` runs these
alone and `-m "not packaging"` skips them.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from packaging.requirements import Requirement

import taisce
from tests.draining import lines_into
from tests.recall_fixture import settle

pytestmark = pytest.mark.packaging

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "python"
CREDENTIAL = re.compile(r"^tsk_[A-Za-z0-9_-]{40,}$")


def _environ(**extra: str) -> dict[str, str]:
    """The machine's environment without Taisce's settings or a path into the checkout."""
    drop = ("TAISCE_", "PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)} | extra


def _run(*command: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(c) for c in command],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=cwd,
        env=env if env is not None else _environ(),
    )
    assert done.returncode == 0, f"{command}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@dataclass(frozen=True)
class Wheels:
    server: Path
    client: Path


def _left_in_tree() -> set[Path]:
    """What a setuptools build leaves in a source tree (hatchling builds elsewhere)."""
    return {
        p
        for folder in (ROOT, CLIENT)
        for p in (*folder.glob("build"), *folder.glob("*.egg-info"), *folder.glob("dist"))
    }


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Wheels:
    out = tmp_path_factory.mktemp("wheels")
    before = _left_in_tree()
    for source in (ROOT, CLIENT):
        _run(sys.executable, "-m", "build", "--wheel", "--outdir", out, source)
    assert _left_in_tree() == before  # nothing (build/, *.egg-info) left in the checkout
    (server,) = out.glob("taisce_server-*.whl")
    (client,) = out.glob("taisce_client-*.whl")
    return Wheels(server, client)


def _install(python: Path, *requirements: str | Path) -> None:
    """Install into the venv of `python` as `pip install` would, by the uv that `make
    install` puts beside this interpreter (it reads the same metadata and ranges; pip
    took a minute of the suite's time for these two venvs)."""
    uv = Path(sys.executable).parent / "uv"
    _run(uv, "pip", "install", "-q", "--python", python, *requirements)


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, wheels: Wheels) -> Path:
    """A fresh venv holding the two wheels and what they depend on, nothing else."""
    folder = tmp_path_factory.mktemp("venv") / "venv"
    _run(sys.executable, "-m", "venv", folder)
    _install(folder / "bin" / "python", wheels.server, wheels.client)
    return folder


@dataclass
class Served:
    url: str
    secret: str
    printed: list[str]


@pytest.fixture(scope="module")
def served(venv: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`taisce serve --demo` from the venv, run from a folder outside the checkout."""
    away = tmp_path_factory.mktemp("elsewhere")
    process = subprocess.Popen(
        [str(venv / "bin" / "taisce"), "serve", "--port", "0", "--demo", "--data", "data"],
        cwd=away,
        env=_environ(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    out: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=lines_into, args=(process.stdout, out), daemon=True).start()
    threading.Thread(target=process.stderr.read, daemon=True).start()  # never blocks it
    try:
        printed: list[str] = []
        deadline = time.monotonic() + 120
        while not (printed and CREDENTIAL.match(printed[-1])):
            line = out.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, f"serve --demo stopped: {printed}"
            printed.append(line)
        url = re.search(r"taisce serving (http://\S+)", "\n".join(printed))
        assert url, printed
        yield Served(url.group(1), printed[-1], printed)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _members(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def _metadata(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return archive.read(name).decode()


def test_the_server_wheel_holds_its_data_files_the_routes_and_the_licence(wheels: Wheels) -> None:
    members = _members(wheels.server)
    package = ROOT / "layers" / "core" / "taisce"
    data_files = [
        p.relative_to(package.parent).as_posix()
        for folder in ("ui/static", "adapters/embedders/minilm")
        for p in (package / folder).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    ]
    assert "taisce/api/openapi.json" in members
    assert "taisce/ui/static/vendor/cytoscape-LICENSE.txt" in data_files
    assert set(data_files) <= members
    # The routes and their functions, where `taisce serve` looks in an installed package.
    assert "taisce/local/stack/template.yaml" in members
    functions = {
        f"taisce/local/stack/{p.relative_to(ROOT).as_posix()}"
        for p in (ROOT / "functions").rglob("*.py")
    }
    assert functions and functions <= members
    assert not [m for m in members if "__pycache__" in m or m.endswith(".pyc")]
    assert not [m for m in members if m.split("/")[0] not in ("taisce", _dist_info(members))]
    licences = {m.rsplit("/", 1)[-1] for m in members if "/licenses/" in m}
    assert licences == {"LICENSE", "NOTICE"}
    metadata = _metadata(wheels.server)
    assert "Name: taisce-server\n" in metadata
    assert "License-Expression: Apache-2.0\n" in metadata


def _dist_info(members: set[str]) -> str:
    (folder,) = {m.split("/")[0] for m in members if m.split("/")[0].endswith(".dist-info")}
    return folder


def test_both_wheels_carry_the_one_version_and_the_server_accepts_its_client(
    wheels: Wheels,
) -> None:
    server, client = _metadata(wheels.server), _metadata(wheels.client)
    version = taisce.__version__
    assert f"Version: {version}\n" in server and f"Version: {version}\n" in client
    assert "Name: taisce-client\n" in client and "License-Expression: Apache-2.0\n" in client
    (wanted,) = [
        Requirement(line.removeprefix("Requires-Dist: "))
        for line in server.splitlines()
        if line.startswith("Requires-Dist: taisce-client")
    ]
    assert wanted.specifier.contains(version)  # the server installs with its own client


def test_the_installed_client_recalls_the_demo_from_the_installed_server(
    venv: Path, served: Served
) -> None:
    # The demo's facts are ranked by meaning once the worker has embedded them; before,
    # a fact can fall under the words floor (recall right after a write is not yet
    # guaranteed to see it), so this waits for the worker as the other HTTP tests do.
    headers = {"Authorization": f"Bearer {served.secret}"}
    with httpx.Client(base_url=served.url, headers=headers, timeout=10) as http:
        settle(lambda: bool(http.get("/v1/status").json()["work_pending"]))
    python = venv / "bin" / "python"
    script = (
        "import json, taisce, taisce_client\n"
        "with taisce_client.Client() as c:\n"
        "    bundle = c.recall('Where does Atlas work, and who manages him?', hops=2)\n"
        "print(json.dumps({'facts': [f.statement for f in bundle.facts],"
        " 'modules': [taisce.__file__, taisce_client.__file__]}))\n"
    )
    away = venv.parent  # outside the checkout
    answer = json.loads(
        _run(
            python,
            "-c",
            script,
            cwd=away,
            env=_environ(TAISCE_URL=served.url, TAISCE_API_KEY=served.secret),
        )
    )
    assert "Atlas works at Acme Corp" in answer["facts"]
    assert "Maya Okafor manages Atlas" in answer["facts"]
    for module in answer["modules"]:  # both from the venv, not from the checkout
        assert Path(module).resolve().is_relative_to(venv.resolve())
    # The command line's recall goes through the same client.
    printed = _run(
        venv / "bin" / "taisce",
        "recall",
        "Where does Atlas work?",
        "--url",
        served.url,
        "--api-key",
        served.secret,
        "--json",
        cwd=away,
    )
    assert "Atlas works at Acme Corp" in [f["statement"] for f in json.loads(printed)["facts"]]


def test_the_installed_server_serves_the_explorer_and_its_description(served: Served) -> None:
    import httpx

    with httpx.Client(base_url=served.url, timeout=30) as http:
        page = http.get("/ui/")
        assert page.status_code == 200 and "<html" in page.text.lower()
        graph = http.get("/ui/vendor/cytoscape-3.35.0.esm.min.js")
        assert graph.status_code == 200 and len(graph.content) > 100_000
        description = http.get("/v1/openapi.json")
        assert description.status_code == 200 and description.json()["openapi"].startswith("3.1")
        assert http.get("/v1/health").json() == {"status": "ok"}
        told = http.get("/v1/status", headers={"Authorization": f"Bearer {served.secret}"})
        assert told.json()["version"] == taisce.__version__


def test_the_local_server_needs_no_aws_sdk(venv: Path, served: Served) -> None:
    # Served above from a venv without the [aws] extra: none of its packages is there.
    python = venv / "bin" / "python"
    probe = (
        "import importlib.util as u\n"
        "print([m for m in ('boto3', 'botocore', 'opensearchpy') if u.find_spec(m)])"
    )
    assert _run(python, "-c", probe).strip() == "[]"
    assert served.secret
    # Asking for the AWS store there says what to install, in one line.
    done = subprocess.run(
        [venv / "bin" / "taisce", "credentials", "list", "--store", "dynamodb", "--table", "t"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=venv.parent,
        env=_environ(AWS_DEFAULT_REGION="eu-west-1"),
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "error: boto3 is not installed; the DynamoDB store, Bedrock and OpenSearch need the "
        "AWS libraries: pip install 'taisce-server[aws]'"
    ]


def _python310() -> str | None:
    """A Python 3.10 interpreter: on the PATH, or one that pyenv holds."""
    candidates = [shutil.which("python3.10")]
    if pyenv := shutil.which("pyenv"):
        listed = subprocess.run([pyenv, "root"], capture_output=True, text=True, timeout=60)
        versions = Path(listed.stdout.strip()) / "versions"
        candidates += [str(p) for p in sorted(versions.glob("3.10.*/bin/python3.10"))]
    for candidate in filter(None, candidates):
        probe = subprocess.run(
            [candidate, "-c", "import sys, venv; assert sys.version_info[:2] == (3, 10)"],
            capture_output=True,
            timeout=60,
        )
        if probe.returncode == 0:
            return candidate
    return None


def test_the_client_wheel_works_on_python_3_10(
    wheels: Wheels, served: Served, tmp_path: Path
) -> None:
    python310 = _python310()
    if python310 is None:
        pytest.skip("no python3.10 on this machine")
    folder = tmp_path / "venv310"
    _run(python310, "-m", "venv", folder)
    python = folder / "bin" / "python"
    _install(python, f"{wheels.client}[mcp]")
    script = (
        "import sys, taisce_client, taisce_client.mcp_server\n"
        "with taisce_client.Client() as c:\n"
        "    facts = [f.statement for f in c.recall('Where does Atlas work?').facts]\n"
        "print(sys.version_info[:2], 'Atlas works at Acme Corp' in facts)\n"
    )
    env = _environ(TAISCE_URL=served.url, TAISCE_API_KEY=served.secret)
    assert _run(python, "-c", script, cwd=tmp_path, env=env).strip() == "(3, 10) True"
