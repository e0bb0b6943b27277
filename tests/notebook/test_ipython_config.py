"""forge_jupyter loads from ipython_config.py, and config-file settings show as such."""

from __future__ import annotations

from tests.notebook.nb_kernel import Kernel


def test_extension_and_settings_come_from_ipython_config(tmp_path):
    profile = tmp_path / "ipython" / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_config.py").write_text(
        "c.InteractiveShellApp.extensions = ['forge_jupyter']\n"
        "c.Forge.model = 'openai/configured-in-file'\n"
        "c.Forge.step_limit = 7\n"
    )
    k = Kernel({"IPYTHONDIR": str(tmp_path / "ipython"), "FORGE_DB": str(tmp_path / "f.duckdb"),
                "FORGE_STEP_LIMIT": "99"}, cwd=str(tmp_path))
    try:
        r = k.run("_c = %forge config\nprint(_c.loc['model'].tolist(), _c.loc['step_limit'].tolist())")
        assert r.status == "ok", r.stderr
        assert "['openai/configured-in-file', 'config']" in r.stdout
        assert "[7, 'config']" in r.stdout  # the config file wins over FORGE_STEP_LIMIT
    finally:
        k.close()
