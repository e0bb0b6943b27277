"""``forge_jupyter.costs()`` and the other history names reach the notebook's Forge: the same
names as ``forge.data``'s (``HistoryData.FORWARDED``), nothing else."""

from __future__ import annotations

from tests.notebook.nb_kernel import Kernel

CODE = """\
%load_ext forge_jupyter
import forge_jupyter as fj
from forge_jupyter.history_data import HistoryData
f = fj.current()
f.session("alpha")
bound = [getattr(fj, n) for n in HistoryData.FORWARDED]
print("same", all(b.__self__ is f.data and b.__func__ is getattr(HistoryData, n)
                  for b, n in zip(bound, HistoryData.FORWARDED)))
print("frames", fj.sessions().equals(f.sessions()), list(fj.sessions()["title"]))
try:
    fj.not_a_history_name
except AttributeError as exc:
    print("refused", exc)
"""


def test_the_module_forwards_the_history_names_to_the_notebooks_forge(tmp_path):
    k = Kernel({"FORGE_DB": str(tmp_path / "f.duckdb")}, cwd=str(tmp_path))
    try:
        r = k.run(CODE)
        assert r.status == "ok", r.stderr
        assert "same True" in r.stdout, r.stdout
        assert "frames True" in r.stdout, r.stdout
        assert "refused module 'forge_jupyter' has no attribute 'not_a_history_name'" in r.stdout
    finally:
        k.close()
