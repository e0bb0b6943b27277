"""One JupyterLab server and one headless Chromium for the module; a fake model server that
the kernels reach over loopback (FORGE_API_BASE), scripted by each test before it runs cells.

Chromium is Debian's /usr/bin/chromium (installed with apt-get when missing and possible),
never Playwright's download.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from forge_jupyter.testing import FakeModelServer
from tests.browser.kernel_frontend import kernel_env
from tests.browser.lab_helpers import ARTIFACTS, Lab

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-dev-shm-usage"]


def ensure_chromium() -> str | None:
    """None when /usr/bin/chromium is there (installing it if we can), else why not."""
    if os.path.exists(CHROMIUM):
        return None
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        return "/usr/bin/chromium is missing and cannot be installed here (needs apt-get as root)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "chromium"]):
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            return f"/usr/bin/chromium is missing and `{' '.join(cmd)}` failed: {done.stderr[-300:]}"
    return None if os.path.exists(CHROMIUM) else "apt-get installed chromium but not at /usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def model_server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server


@pytest.fixture
def script(model_server: FakeModelServer) -> FakeModelServer:
    """The module's fake model server with an empty script (a failed test leaves no turns)."""
    model_server.clear()
    return model_server


TREE_LABEXTENSION = Path(__file__).resolve().parents[2] / "forge_jupyter" / "labextension"


def tree_labextension(base: Path) -> dict[str, str]:
    """JUPYTER_PATH putting this tree's built labextension before an installed one, so the page
    runs the front end of the code under test (a worktree, an edit not yet installed)."""
    if not (TREE_LABEXTENSION / "package.json").exists():
        return {}
    found = base / "jupyter-path" / "labextensions"
    found.mkdir(parents=True)
    (found / "forge-jupyter").symlink_to(TREE_LABEXTENSION, target_is_directory=True)
    path = os.pathsep.join(p for p in (str(base / "jupyter-path"), os.environ.get("JUPYTER_PATH")) if p)
    return {"JUPYTER_PATH": path}


@pytest.fixture(scope="module")
def lab(model_server: FakeModelServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    base = tmp_path_factory.mktemp("lab")
    root = base / "root"
    root.mkdir()
    settings = base / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    token, port = secrets.token_hex(16), free_port()
    env = {**os.environ, **kernel_env(model_server, base),
           "JUPYTER_CONFIG_DIR": str(base / "config"),
           "JUPYTERLAB_SETTINGS_DIR": str(base / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
           "JUPYTER_RUNTIME_DIR": str(base / "runtime")}
    env.pop("FORGE_WIDGET", None)
    env.update(tree_labextension(base))
    log = open(base / "jupyterlab.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root",
         f"--IdentityProvider.token={token}", "--LabApp.expose_app_in_browser=True",
         f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
         f"--ServerApp.root_dir={root}"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    server = Lab(root, port, token, proc)
    deadline = time.monotonic() + 60
    while True:
        try:
            server.api("/api/status")
            break
        except Exception:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"JupyterLab did not start; see {base / 'jupyterlab.log'}") from None
            time.sleep(0.25)
    yield server
    try:
        server.shutdown_kernels()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    why = ensure_chromium()
    if why is not None:
        pytest.skip(why)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any, lab: Lab, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.forge_errors = errors
    yield pg
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        pg.screenshot(path=str(ARTIFACTS / f"{request.node.name}-end.png"), full_page=True)
    except Exception:
        pass
    context.close()
    lab.shutdown_kernels()
