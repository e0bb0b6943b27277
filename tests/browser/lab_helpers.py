"""A JupyterLab server as the tests see it, and a notebook driven through the app object
(``--LabApp.expose_app_in_browser``)."""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat

from tests.tool_cells import NOTE_TOOL  # noqa: F401 - the browser tests import it from here

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
# the docs' pictures (the ``screenshots`` fixture writes there with FORGE_WRITE_SCREENSHOTS=1)
DOCS_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "_static" / "screenshots"
MAX_SCREENSHOT_BYTES = 200_000  # each picture, so the repository stays small

PANEL = "window.jupyterapp.shell.currentWidget"

# JS declarations for the DOM audits of the record (test_record_xss) and of the panel
# (panel_page): ``badUrl(tag, attr)`` names an attribute holding a URL whose scheme is not
# http, https or mailto (an inline raster image aside), read as the DOM holds it;
# ``badLinks(root)`` names the links whose href, as the browser resolves it, is none of those.
URL_AUDIT = """
    const URLS = ['href', 'src', 'action', 'formaction', 'xlink:href', 'srcdoc', 'data',
        'background', 'poster', 'srcset', 'lowsrc', 'dynsrc', 'ping'];
    const IMAGE = /^data:image\\/(png|jpeg|gif|webp);base64,/;
    const badUrl = (tag, attr) => {
        const name = attr.name.toLowerCase();
        if (!URLS.includes(name)) return null;
        const v = attr.value.replace(/[\\u0000-\\u0020]/g, '').toLowerCase();
        const m = v.match(/^([a-z][a-z0-9+.-]*):/);
        const image = tag === 'IMG' && name === 'src' && IMAGE.test(v);
        return m && !['http', 'https', 'mailto'].includes(m[1]) && !image
            ? `${tag} ${name}=${attr.value.slice(0, 80)}` : null;
    };
    const badLinks = (root) => [...root.querySelectorAll('a[href]')]
        .filter((a) => !['http:', 'https:', 'mailto:'].includes(new URL(a.href).protocol))
        .map((a) => 'a.href ' + a.href.slice(0, 80));
"""


def forge_cell(prompt: str, options: str = "") -> str:
    """The source of a %%forge cell."""
    return f"%%forge {options}".rstrip() + "\n" + prompt


class Lab:
    """A running JupyterLab as one test module sees it: the server's URL, and the module's own
    folder under the server's root (``root``), where its notebooks, their kernels' working
    directory and the files the kernels write live.

    One server serves the whole run (tests/browser/conftest.py); ``base`` holds what is the
    server's, not the module's: its config (``config_dir``) and the store file its kernels
    and its REST API share (``db``).
    """

    def __init__(self, root: Path, port: int, token: str, proc: subprocess.Popen,
                 base: Path | None = None, folder: str = "") -> None:
        self.port, self.token, self.proc = port, token, proc
        self.server_root, self.folder = root, folder
        self.root = root / folder if folder else root
        self.base = base if base is not None else root.parent
        self.url = f"http://127.0.0.1:{port}"
        self.ready = False  # wait_ready() has seen it answer

    @property
    def db(self) -> Path:
        """The DuckDB file of the server's kernels and of its history API (FORGE_DB)."""
        return self.base / "forge.duckdb"

    @property
    def config_dir(self) -> Path:
        """The server's JUPYTER_CONFIG_DIR (labconfig/page_config.json is read per page)."""
        return self.base / "config"

    def wait_ready(self, timeout: float = 60) -> None:
        """Until the server answers its REST API (at once when it did before)."""
        if self.ready:
            return
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.api("/api/status")
                break
            except Exception:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.proc.kill()
                    raise RuntimeError("JupyterLab did not start; see "
                                       f"{self.base / 'jupyterlab.log'}") from None
                time.sleep(0.1)
        self.ready = True

    def in_folder(self, folder: str) -> Lab:
        """The same server seen from ``folder`` under its root (made if missing)."""
        view = Lab(self.server_root, self.port, self.token, self.proc, self.base, folder)
        view.ready = self.ready
        view.root.mkdir(parents=True, exist_ok=True)
        return view

    def path(self, name: str) -> str:
        """``name`` (in this module's folder) as the server's URLs and APIs name it."""
        return f"{self.folder}/{name}" if self.folder else name

    def api(self, path: str, method: str = "GET") -> Any:
        req = urllib.request.Request(f"{self.url}{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        return json.loads(body) if body else None

    def write_notebook(self, name: str, cells: list[str]) -> Path:
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
        path = self.root / name
        nbformat.write(nb, path)
        return path

    def read_notebook(self, name: str) -> Any:
        return nbformat.read(self.root / name, as_version=4)

    def shutdown_kernels(self) -> None:
        """Shut every kernel down, all at once (each DELETE waits for its kernel to exit)."""
        def delete(kernel_id: str) -> None:
            try:
                self.api(f"/api/kernels/{kernel_id}", method="DELETE")
            except Exception:
                pass

        kernels = [k["id"] for k in self.api("/api/kernels")]
        with ThreadPoolExecutor(max_workers=max(1, len(kernels))) as pool:
            list(pool.map(delete, kernels))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


@contextmanager
def running_lab(kernel_env: dict[str, str], base: Path) -> Iterator[Lab]:
    """A JupyterLab server in ``base`` (its root, config, settings, runtime and log there),
    its kernels started with ``kernel_env``, ready to serve; stopped at the end."""
    server = launch_lab(kernel_env, base)
    try:
        server.wait_ready()
        yield server
    finally:
        stop_lab(server)


def launch_lab(kernel_env: dict[str, str], base: Path) -> Lab:
    """Start a JupyterLab server in ``base`` and return at once, before it serves: the caller
    does something else meanwhile (launches Chromium) and calls ``wait_ready`` when it needs
    the server. ``stop_lab`` stops it."""
    root = base / "root"
    root.mkdir()
    settings = base / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    token, port = secrets.token_hex(16), free_port()
    env = {**os.environ, **kernel_env,
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
    log.close()  # the child holds its own copy of the descriptor
    return Lab(root, port, token, proc, base)


def stop_lab(server: Lab) -> None:
    """Shut the server's kernels down, then the server."""
    try:
        if server.proc.poll() is None:
            server.shutdown_kernels()
    finally:
        server.proc.terminate()
        try:
            server.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.proc.kill()


def module_lab(server: Lab, folder: str) -> Lab:
    """The run's Lab for a test module starting: no kernel running, an empty store (the
    kernels and the REST API open the file per operation, so deleting it between modules is
    safe), and ``folder`` under the root as the module's own ("" for the root itself)."""
    server.shutdown_kernels()
    for leftover in (server.db, server.db.with_name(server.db.name + ".wal")):
        leftover.unlink(missing_ok=True)
    return server.in_folder(folder)


class NotebookPage:
    def __init__(self, page: Any, lab: Lab, name: str) -> None:
        self.page, self.lab, self.name = page, lab, name

    # -- opening and running ---------------------------------------------------------------

    def open(self) -> NotebookPage:
        workspace = "-".join(filter(None, [self.lab.folder, Path(self.name).stem]))
        self.page.goto(f"{self.lab.url}/lab/workspaces/{workspace}/tree/{self.lab.path(self.name)}"
                       f"?reset&token={self.lab.token}")
        self.page.wait_for_function(
            f"""() => {{
                const p = window.jupyterapp && {PANEL};
                const k = p && p.sessionContext && p.sessionContext.session
                    && p.sessionContext.session.kernel;
                return k && k.status === 'idle' && p.content && p.content.widgets.length > 0;
            }}""", timeout=90_000)
        self.dismiss_popups()
        return self

    def dismiss_popups(self) -> None:
        """The news question and other toasts, if one shows anyway."""
        for label in ("No", "Dismiss"):
            button = self.page.locator(f".jp-Notification-Toast button:has-text('{label}')")
            if button.count():
                button.first.click()

    def run_all(self) -> None:
        self.page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")

    def run_cell(self, index: int) -> None:
        self.page.evaluate(f"""() => {{
            const p = {PANEL};
            p.content.activeCellIndex = {index};
            window.jupyterapp.commands.execute('notebook:run-cell');
        }}""")

    def save(self) -> None:
        self.page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        self.page.wait_for_function(f"() => !{PANEL}.context.model.dirty", timeout=15_000)

    # -- reading ---------------------------------------------------------------------------

    def cell(self, index: int) -> Any:
        return self.page.locator(".jp-Notebook .jp-Cell").nth(index)

    def busy(self, index: int) -> bool:
        """The cell is queued or running (its prompt shows [*])."""
        return bool(self.page.evaluate(f"""() => {{
            const c = {PANEL}.content.widgets[{index}];
            return c.promptNode ? c.promptNode.textContent.includes('*') : false;
        }}"""))

    def wait_busy(self, index: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not self.busy(index):
            assert time.monotonic() < deadline, f"cell {index} never started"
            time.sleep(0.05)

    def wait_idle(self, index: int, timeout: float = 90) -> None:
        """Until cell ``index`` has run (an execution count, no [*])."""
        self.page.wait_for_function(f"""() => {{
            const c = {PANEL}.content.widgets[{index}];
            return c.model.executionCount !== null && !c.promptNode.textContent.includes('*');
        }}""", timeout=timeout * 1000)

    def outputs(self, index: int) -> list[dict[str, Any]]:
        """The cell's outputs as the notebook model holds them (what saving writes)."""
        return self.page.evaluate(f"() => {PANEL}.content.widgets[{index}].model.outputs.toJSON()")

    def widget(self, index: int) -> Any:
        return self.cell(index).locator(".forge-turn")

    def screenshot(self, name: str) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def set_theme(page: Any, name: str, light: bool) -> None:
    """Switch JupyterLab's theme (``JupyterLab Light``/``JupyterLab Dark``) as its command
    palette would, and wait until the page has restyled."""
    page.evaluate(f"() => window.jupyterapp.commands.execute('apputils:change-theme', {{theme: '{name}'}})")
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{str(light).lower()}'")
    page.wait_for_timeout(500)  # the theme's CSS is applied after the flag flips


THEMES = (("light", "JupyterLab Light", True), ("dark", "JupyterLab Dark", False))


def in_both_themes(page: Any) -> Iterator[str]:
    """JupyterLab's light theme, then its dark one (yielding ``"light"``/``"dark"`` for the
    pictures' names); the page is back in the light theme when the loop ends."""
    for suffix, name, light in THEMES:
        set_theme(page, name, light)
        yield suffix
    set_theme(page, "JupyterLab Light", True)
