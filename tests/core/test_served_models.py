"""``Forge.api_base`` with no model: the model that server lists is asked once per Forge
(model_choice.ServedModels), not at every prompt; a failed answer is asked again. The fake
server counts its GET …/models; the prompts go through real litellm."""

from __future__ import annotations

import os

import pytest

from forge_jupyter import Forge
from forge_jupyter.errors import InvalidOption
from forge_jupyter.model_choice import PROVIDER_DEFAULTS
from forge_jupyter.testing import Turn


@pytest.fixture
def no_keys(monkeypatch):
    """No provider key and no configured model: api_base alone decides the model."""
    for name in list(os.environ):
        if name.endswith("_API_KEY") or name in {v for v, _ in PROVIDER_DEFAULTS}:
            monkeypatch.delenv(name)
    for name in ("FORGE_API_BASE", "FORGE_MODEL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def forge_at(no_keys, tmp_path):
    made: list[Forge] = []

    def make(api_base: str) -> Forge:
        made.append(Forge(db=str(tmp_path / f"f{len(made)}.duckdb"), api_base=api_base,
                          builtin_tools=False))
        return made[-1]

    yield make
    for f in made:
        f.close()


def test_two_prompts_ask_the_server_for_its_model_once(forge_at, server):
    forge = forge_at(server.openai_base)
    server.add(Turn.text("One."), Turn.text("Two."), Turn.text("Three."))
    s = forge.session("s")
    assert s.prompt("first").text == "One."
    assert s.prompt("second").text == "Two."
    forge.session("other").prompt("third")  # another session of the same Forge
    assert server.model_list_requests == 1
    assert [r.body["model"] for r in server.requests] == ["fake-model"] * 3


def test_the_model_choice_is_announced_once_a_session_not_at_every_prompt(forge_at, server):
    """The notice ("Using …, the model the server … lists") opens each session; the answers'
    footers name the model after that."""
    from forge_jupyter.bus import SessionStatus

    forge = forge_at(server.openai_base)
    said: list[tuple[str, str]] = []
    forge.bus.subscribe(lambda ev: said.append((ev.session_id, ev.detail.get("message", ""))),
                        types=SessionStatus)
    server.add(*(Turn.text(w) for w in ("One.", "Two.", "Three.")))
    s, other = forge.session("s"), forge.session("other")
    s.prompt("first")
    s.prompt("second")
    other.prompt("third")
    notices = [(sid, m) for sid, m in said if "the model the server at Forge.api_base lists" in m]
    assert [sid for sid, _ in notices] == [s.id, other.id], said


def test_a_failed_listing_is_asked_again_not_remembered(forge_at, server):
    forge = forge_at(server.openai_base)
    server.models_status = 503
    with pytest.raises(InvalidOption, match="did not list one at GET …/models"):
        forge.session("s").prompt("first")
    assert server.model_list_requests == 1 and server.requests == []
    server.models_status = 200  # the server is back
    server.add(Turn.text("Back."), Turn.text("Still."))
    assert forge.session("s").prompt("again").text == "Back."
    assert forge.session("s").prompt("and again").text == "Still."
    assert server.model_list_requests == 2  # once failed, once answered, then remembered


def test_each_forge_asks_for_itself(forge_at, server):
    server.add(Turn.text("A."), Turn.text("B."))
    forge_at(server.openai_base).session("s").prompt("one")
    forge_at(server.openai_base + "/").session("s").prompt("two")  # a new life: asked again
    assert server.model_list_requests == 2
