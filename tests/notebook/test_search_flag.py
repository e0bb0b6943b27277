"""``%config Forge.flags`` in a real kernel: the next %%forge cell's tool table follows it
(asserted on what the fake model server received), and long-term memory keeps its own flag."""

from __future__ import annotations

from forge_jupyter.testing import Turn
from tests.notebook.nb_kernel import forge_kernel


def test_config_flags_turn_webfetch_on_and_off_for_the_next_cell(model_server, tmp_path):
    kernel = forge_kernel(model_server.openai_base, tmp_path, {"FORGE_FLAGS": ""})
    try:
        tables = []
        for setting in (None, '["search"]', "[]"):
            if setting is not None:
                assert kernel.run(f"%config Forge.flags = {setting}").status == "ok"
            model_server.add(Turn.text("ok"))
            r = kernel.run("%%forge\nhello")
            assert r.status == "ok", r.error
            tables.append(model_server.requests[-1].tools)
        off, on, off_again = tables
        assert "webfetch" not in off and "webfetch" in on and "webfetch" not in off_again
        assert all("memory_search" in t for t in tables)  # memory's own flag stayed on
    finally:
        kernel.close()
