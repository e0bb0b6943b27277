"""Every declared setting takes effect both ways — from its FORGE_* variable in a plain script,
and from %config in a real kernel — and nothing a Forge takes is left out of the declaration."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

from forge_jupyter import Forge
from forge_jupyter.settings import FORGE_SETTINGS, SETTINGS
from tests.notebook.nb_kernel import forge_kernel

# Forge(...) arguments that are objects or wiring, not settings a person configures.
NOT_SETTINGS = {"self", "agents", "system", "tools", "retry", "namespace", "root", "output_root",
                "load_plugins", "skills", "litellm_kwargs"}

# setting → (a value other than the default, how the variable spells it, what to read back and
# where the running code reads it: `f` is the Forge, `c` the notebook's config).
PROBES: dict[str, tuple[object, str, object, str]] = {
    "model": ("openai/probe-model", "openai/probe-model", "openai/probe-model", "f.model"),
    "db": ("{tmp}/probe.duckdb", "{tmp}/probe.duckdb", "{tmp}/probe.duckdb", "str(f.store.path)"),
    "tenant": ("probe-tenant", "probe-tenant", "probe-tenant", "f.store.tenant_id"),
    "agent": ("plan", "plan", "plan", "f.default_agent"),
    "api_base": ("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1",
                 "f.litellm_kwargs.get('api_base')"),
    "permissions": (["read:*=deny"], "read:*=deny", [["read", "*", "deny"]],
                    "[[r.tool, r.pattern, r.action] for r in f.permissions]"),
    "compaction_ratio": (0.5, "0.5", 0.5, "f.compaction_ratio"),
    "char_budget": (1234, "1234", 1234, "f.char_budget"),
    "step_limit": (3, "3", 3, "f.step_limit"),
    "tool_timeout": (7.0, "7", 7.0, "f.tool_timeout"),
    "shell_timeout": (9.0, "9", 9.0, "f.shell_timeout"),
    "stream_timeout": (3.0, "3", 3.0, "f.stream_timeout"),
    "max_tokens": (77, "77", 77, "f.max_tokens"),
    "lean_stream": (True, "1", True, "f.lean_stream"),
    "tool_profile": ("lean", "lean", "lean", "f.tool_profile"),
    "tool_search_tokens": (1234, "1234", 1234, "f.tool_search_tokens"),
    "builtin_tools": (False, "false", False, "'python' in f.registry.names()"),
    "max_age": ("3650d", "3650d", 3650, "getattr(f.max_age, 'days', f.max_age)"),
    "mcp_servers": ({"probe": {"command": "true"}}, '{"probe": {"command": "true"}}', ["probe"],
                    "sorted(f.mcp.specs)"),
    "memory_long_term": (False, "false", True, "f.memory is None"),
    "memory_dir": ("{tmp}/probe-memory", "{tmp}/probe-memory", "{tmp}/probe-memory",
                   "str(f.memory.folder.path)"),
    "memory_embedding_model": ("none", "none", "none", "f._memory_settings['memory_embedding_model']"),
    "memory_keyword_weight": (0.6, "0.6", 0.6, "f.memory.weights.keyword"),
    "memory_vector_weight": (0.4, "0.4", 0.4, "f.memory.weights.vector"),
    "memory_half_life_days": (3.0, "3", 3.0, "f.memory.weights.half_life_days"),
    "flags": (["search"], "search", True, "'search' in f.flags"),
    # global: the process's own provider (otlp would export, here to nowhere)
    "tracing": ("global", "global", ["global", True], "[f.tracing, f.services.tracer is not None]"),
    "image_max_side": (512, "512", 512, "f.image_max_side"),
    "image_max_bytes": (99_000, "99000", 99_000, "f.image_max_bytes"),
    "images_per_step": (2, "2", 2, "f.images_per_step"),
    "images_per_request": (3, "3", 3, "f.images_per_request"),
    # read by the notebook's controller and widget, not by a Forge
    "widget_throttle": (5.0, "5", 5.0, "c.widget_throttle"),
    "widget": ("off", "off", "off", "c.widget"),
    "session_max_age": ("2h", "2h", "2h", "c.session_max_age"),
    "replay": ("strict", "strict", "strict", "c.replay"),
    "notebook_context": (False, "0", False, "c.notebook_context"),
    "cell_auto_accept": (True, "true", True, "c.cell_auto_accept"),
    "cell_run_wait": (5.0, "5", 5.0, "f.editor.runner.wait() if f.editor else c.cell_run_wait"),
}


def filled(value: object, tmp: Path) -> object:
    return json.loads(json.dumps(value).replace("{tmp}", str(tmp)))


def test_every_argument_of_forge_that_is_a_setting_is_declared():
    params = set(inspect.signature(Forge.__init__).parameters) - NOT_SETTINGS
    declared = {s.name for s in FORGE_SETTINGS}
    assert params == declared, (
        f"Forge(...) takes {sorted(params - declared)} with no declaration in settings.py, "
        f"or settings.py declares {sorted(declared - params)} that Forge(...) does not take")


def test_every_declared_setting_has_a_probe_here():
    assert set(PROBES) == {s.name for s in SETTINGS}


def test_each_variable_takes_effect_in_a_plain_script(tmp_path):
    cases = {s.name: PROBES[s.name] for s in FORGE_SETTINGS}
    script = tmp_path / "probe.py"
    script.write_text(
        "import json, os, sys\n"
        "from forge_jupyter import Forge\n"
        "cases, tmp = json.loads(sys.argv[1]), sys.argv[2]\n"
        "seen = {}\n"
        "for name, (env, expr) in cases.items():\n"
        "    var = 'FORGE_' + name.upper()\n"
        "    os.environ[var] = env.replace('{tmp}', tmp)\n"
        "    f = Forge(db=None if name == 'db' else os.path.join(tmp, 'base.duckdb'))\n"
        "    seen[name] = eval(expr, {'f': f})\n"
        "    f.close()\n"
        "    del os.environ[var]\n"
        "print(json.dumps(seen))\n")
    env_cases = {name: (env, expr) for name, (_, env, _, expr) in cases.items()}
    # A script whose db is left to the variable: FORGE_DB is its only way in
    env_cases["db"] = (PROBES["db"][1], PROBES["db"][3])
    clean = {k: v for k, v in __import__("os").environ.items() if not k.startswith("FORGE_")}
    done = subprocess.run([sys.executable, str(script), json.dumps(env_cases), str(tmp_path)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**clean, "HOME": str(tmp_path), "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    for name, (_, _, expected, _) in cases.items():
        assert seen[name] == filled(expected, tmp_path), f"FORGE_{name.upper()} did nothing in a script"


def test_an_explicit_argument_wins_over_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("FORGE_STEP_LIMIT", "3")
    monkeypatch.setenv("FORGE_STREAM_TIMEOUT", "3")
    f = Forge(db=str(tmp_path / "x.duckdb"), step_limit=9, stream_timeout=None)
    assert (f.step_limit, f.stream_timeout) == (9, None)
    g = Forge(db=str(tmp_path / "y.duckdb"))
    assert (g.step_limit, g.stream_timeout) == (3, 3.0)


def test_a_bad_variable_says_which_and_what_to_give(tmp_path, monkeypatch):
    monkeypatch.setenv("FORGE_STEP_LIMIT", "lots")
    with pytest.raises(ValueError, match="FORGE_STEP_LIMIT='lots' is not a valid int"):
        Forge(db=str(tmp_path / "x.duckdb"))


@pytest.mark.slow
def test_each_config_value_takes_effect_in_a_kernel_over_the_variable(fake_model_server, tmp_path):
    # The variable says one thing, %config another: config wins, for every declared setting.
    k = forge_kernel(fake_model_server.openai_base, tmp_path, {"FORGE_STEP_LIMIT": "11"})
    try:
        assert k.run("import forge_jupyter; forge_jupyter.current().step_limit").text.strip().endswith("11")
        for s in SETTINGS:
            value, _, expected, expr = PROBES[s.name]
            value = filled(value, tmp_path)
            r = k.run(f"%config Forge.{s.name} = {value!r}")
            assert r.status == "ok", (s.name, r.text)
            r = k.run("import json, forge_jupyter\n"
                      "from forge_jupyter.notebook.extension import controller as _ctl\n"
                      "c = _ctl().config\n"
                      f"f = forge_jupyter.current()\nprint(json.dumps({expr}))")
            assert r.status == "ok", (s.name, r.text)
            assert json.loads(r.stdout.strip().splitlines()[-1]) == filled(expected, tmp_path), (
                f"%config Forge.{s.name} did nothing after the Forge was built")
            # back to what the kernel started with, so the next probe reads its own setting only
            default = str(tmp_path / "forge.duckdb") if s.name == "db" else s.default
            assert k.run(f"%config Forge.{s.name} = {default!r}").status == "ok", s.name
    finally:
        k.close()
