"""Which saved notebook a headless run is executing, found from the cells it runs.

JupyterLab tells the kernel its notebook (``__session__``, ``JPY_SESSION_NAME``) and each cell's
id; nbclient, nbconvert and papermill tell it neither, so replay had nothing to match a cell's
recordings by and every run asked the model again. What such a run does have is the folder
the kernel runs in (nbconvert starts it in the notebook's folder; papermill in ``--cwd``, or where
papermill was started, where its output notebook is written as the run goes) and the cells it
has run so far. A notebook there that holds the running cell — and the most of the cells run
before it — is the one being run; papermill's output names its input (``metadata.papermill
.input_path``), so a run is known by its input notebook whatever the output is called. The cell's
id then comes from that file.

Files are untrusted: only regular ``.ipynb`` files of at most ``SAVED_BYTES``, at most
``MAX_FILES`` of them, parsed as JSON and compared as strings; a file that fails to read is
passed over. What was read is kept by (mtime, size), so each cell re-reads only what changed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .document import cells_of, load_saved

MAX_FILES = 200  # notebooks looked at in the folder, in name order


@dataclass(frozen=True)
class Found:
    """What the folder says: the notebook (absolute; None when several different notebooks hold
    the cell), the cell's id (None when unknown), and how that was decided or why nothing was."""

    path: str | None
    cell_id: str | None
    why: str


@dataclass(frozen=True)
class _Saved:
    code: tuple[tuple[str, str | None], ...]  # (source stripped, id) of each code cell, in order
    identity: str  # the notebook a run of this file is: its papermill input, else itself


class NotebookFinder:
    """Kept by the kernel's controller; ``find`` runs once per headless ``%%forge`` cell."""

    def __init__(self) -> None:
        self._read: dict[str, tuple[tuple[float, int], _Saved | None]] = {}

    def find(self, folder: str, source: str, earlier: list[str]) -> Found:
        """The notebook in ``folder`` running ``source`` after ``earlier`` (the kernel's inputs
        before it, as written)."""
        wanted = source.strip()
        ran = {s.strip() for s in earlier if s.strip()}
        nth = sum(1 for s in earlier if s.strip() == wanted)  # the same cell written twice
        best: list[tuple[str, str | None]] = []  # (identity, cell id) of the best-scoring files
        best_score = -1
        for path in self._notebooks(folder):
            saved = self._saved(path, folder)
            if saved is None:
                continue
            matches = [cid for src, cid in saved.code if src == wanted]
            if not matches:
                continue
            score = sum(1 for src, _ in saved.code if src in ran)
            cell_id = matches[nth] if nth < len(matches) else None
            if score > best_score:
                best, best_score = [], score
            if score == best_score:
                best.append((saved.identity, cell_id))
        return _decide(folder, best)

    def _notebooks(self, folder: str) -> list[str]:
        try:
            names = sorted(n for n in os.listdir(folder)
                           if n.endswith(".ipynb") and not n.startswith("."))
        except OSError:
            return []
        return [os.path.join(folder, n) for n in names[:MAX_FILES]]

    def _saved(self, path: str, folder: str) -> _Saved | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        key = (st.st_mtime, st.st_size)
        kept = self._read.get(path)
        if kept is not None and kept[0] == key:
            return kept[1]
        nb = load_saved(path)
        saved = None if isinstance(nb, str) else _Saved(
            tuple((c.source.strip(), c.id) for c in cells_of(nb.get("cells")) if c.type == "code"),
            _identity(nb, path, folder))
        self._read[path] = (key, saved)
        return saved


def _identity(nb: dict[str, object], path: str, folder: str) -> str:
    """A papermill output stands for its input notebook when that is a file under the folder.
    Only there: the field is the file's word, and the notebook it names is what the agent would
    then read as "this notebook" — a planted output must not point it at one elsewhere."""
    meta = nb.get("metadata")
    papermill = meta.get("papermill") if isinstance(meta, dict) else None
    source = papermill.get("input_path") if isinstance(papermill, dict) else None
    if isinstance(source, str) and source.endswith(".ipynb") and "\0" not in source:
        top = os.path.realpath(folder)
        candidate = os.path.realpath(os.path.join(folder, source))
        if candidate.startswith(top + os.sep) and os.path.isfile(candidate):
            return os.path.abspath(os.path.join(folder, source))
    return os.path.abspath(path)


def _decide(folder: str, best: list[tuple[str, str | None]]) -> Found:
    if not best:
        return Found(None, None, f"no notebook in the kernel's folder ({folder}) holds this cell")
    paths = sorted({identity for identity, _ in best}, key=lambda p: (len(os.path.basename(p)), p))
    ids = {cell_id for _, cell_id in best}
    if len(paths) == 1 or (len(ids) == 1 and None not in ids):
        # One notebook, or copies of one (an nbconvert output beside it, the same cell ids):
        # the copy with the shortest name, x.ipynb before x.nbconvert.ipynb.
        cell_id = ids.pop() if len(ids) == 1 else None
        return Found(paths[0], cell_id, f"found by its cells in {os.path.basename(paths[0])}")
    names = ", ".join(os.path.basename(p) for p in paths[:5])
    return Found(None, None, f"several notebooks in {folder} hold this cell ({names}); set "
                             "JPY_SESSION_NAME to the one being run")
