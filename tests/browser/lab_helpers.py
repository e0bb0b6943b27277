"""A JupyterLab server as the tests see it, and a notebook driven through the app object
(``--LabApp.expose_app_in_browser``)."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import nbformat

from tests.tool_cells import NOTE_TOOL  # noqa: F401 - the browser tests import it from here

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

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
    """A running JupyterLab: its URL, its root folder, and notebook helpers."""

    def __init__(self, root: Path, port: int, token: str, proc: subprocess.Popen) -> None:
        self.root, self.port, self.token, self.proc = root, port, token, proc
        self.url = f"http://127.0.0.1:{port}"

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
        for k in self.api("/api/kernels"):
            try:
                self.api(f"/api/kernels/{k['id']}", method="DELETE")
            except Exception:
                pass


class NotebookPage:
    def __init__(self, page: Any, lab: Lab, name: str) -> None:
        self.page, self.lab, self.name = page, lab, name

    # -- opening and running ---------------------------------------------------------------

    def open(self) -> NotebookPage:
        workspace = Path(self.name).stem
        self.page.goto(f"{self.lab.url}/lab/workspaces/{workspace}/tree/{self.name}"
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
