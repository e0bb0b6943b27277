"""One JupyterLab server, one headless Chromium and one fake model server for this folder
(starting them was most of its time: a Lab and a Chromium per module before).

They are package-scoped, not session-scoped: sync Playwright marks its asyncio loop as
running in the main thread for as long as it lives (playwright/_impl/_greenlets.py), so a
later test's ``asyncio.run()`` would fail with "cannot be called from a running event
loop". Pytest stops them when the run leaves tests/browser, which clears the mark;
tests/conftest.py fails any test outside this folder that still sees a loop running.

Each test module still starts from what it had with a server of its own: its own folder
under the Lab's root (``lab.root``: its notebooks, its kernels' working directory), an empty
store (the DuckDB file the kernels and the REST API share is deleted when a module starts,
its kernels shut down), no kernel running, and an empty script on the model server. Each
test gets a fresh page of one shared browser context (cookies and storage cleared after it). The
kernels reach the model server over loopback (FORGE_API_BASE); each test scripts it before
it runs cells.

Chromium is Debian's /usr/bin/chromium (installed with apt-get when missing and possible),
never Playwright's download.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from forge_jupyter.testing import FakeModelServer
from tests.browser.kernel_frontend import kernel_env
from tests.browser.lab_helpers import (
    ARTIFACTS,
    DOCS_SCREENSHOTS,
    Lab,
    launch_lab,
    module_lab,
    stop_lab,
)

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


@pytest.fixture(scope="package")
def model_server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server


@pytest.fixture(scope="module", autouse=True)
def module_model_server(model_server: FakeModelServer) -> FakeModelServer:
    """A module starts with no turn scripted and no request recorded by another module."""
    model_server.reset()
    return model_server


@pytest.fixture
def script(model_server: FakeModelServer) -> FakeModelServer:
    """The run's fake model server with an empty script (a failed test leaves no turns)."""
    model_server.clear()
    return model_server


@pytest.fixture(scope="package")
def lab_server(model_server: FakeModelServer,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """The run's JupyterLab; test modules use it through ``lab`` (their own folder). Yielded
    while it is still starting (``page`` asks for it before ``browser``, so Chromium launches
    meanwhile); ``lab`` waits until it serves."""
    base = tmp_path_factory.mktemp("lab")
    server = launch_lab(kernel_env(model_server, base), base)
    try:
        yield server
    finally:
        stop_lab(server)


@pytest.fixture(scope="module")
def lab(lab_server: Lab, request: pytest.FixtureRequest) -> Lab:
    """The run's JupyterLab from this module's own folder, with an empty store and no kernel."""
    lab_server.wait_ready()
    return module_lab(lab_server, request.module.__name__.rsplit(".", 1)[-1])


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    why = ensure_chromium()
    if why is not None:
        pytest.skip(why)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


# What a page's origin kept in the browser (web storage, IndexedDB): gone before the next test.
FORGET = """async () => {
    localStorage.clear();
    sessionStorage.clear();
    for (const db of await indexedDB.databases()) indexedDB.deleteDatabase(db.name);
}"""


@pytest.fixture(scope="package")
def browser_context(browser: Any) -> Iterator[Any]:
    """One browser context for the folder: its HTTP and compiled-code caches keep Lab's
    bundles between tests (a context per test fetched and compiled them for every page).
    ``page`` clears what could carry a test's state to the next: cookies and web storage."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    yield context
    context.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Keep each phase's report on the test, so ``page`` knows whether the test failed."""
    report = yield
    setattr(item, f"forge_report_{report.when}", report)
    return report


@pytest.fixture
def page(lab_server: Lab, browser_context: Any, lab: Lab,
         request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh page of the folder's browser context (``lab_server`` first: the Lab starts
    while Chromium launches). A failed test leaves a picture of the page's end in
    test-artifacts/; its kernels are shut down after it."""
    pg = browser_context.new_page()
    pg.set_default_timeout(30_000)
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.forge_errors = errors
    yield pg
    call = getattr(request.node, "forge_report_call", None)
    if call is None or call.failed:
        ARTIFACTS.mkdir(exist_ok=True)
        try:
            pg.screenshot(path=str(ARTIFACTS / f"{request.node.name}-end.png"), full_page=True)
        except Exception:
            pass
    for p in browser_context.pages:  # this one, and any a test opened (a clone, a popup)
        try:
            p.evaluate(FORGET)
        except Exception:
            pass  # a page on about:blank has no storage
        p.close()
    browser_context.clear_cookies()
    lab.shutdown_kernels()


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    """Where a test's pictures go: ``docs/_static/screenshots/`` with
    ``FORGE_WRITE_SCREENSHOTS=1`` (the docs show them), else this test's temporary folder."""
    if os.environ.get("FORGE_WRITE_SCREENSHOTS") == "1":
        DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return DOCS_SCREENSHOTS
    return tmp_path


@pytest.fixture
def labextension_disabled(lab: Lab) -> Iterator[None]:
    """This page without the labextension (as ``jupyter labextension disable forge-jupyter``):
    the widget renders with the standalone bundle the kernel sends."""
    page_config = lab.config_dir / "labconfig" / "page_config.json"
    page_config.parent.mkdir(parents=True, exist_ok=True)
    page_config.write_text(json.dumps({"disabledExtensions": {"forge-jupyter": True}}))
    try:
        yield
    finally:
        page_config.unlink()
