"""The question tool in a real kernel through ``%%forge``, with this test as the widget frontend
(kernel_frontend.py): offered where a live widget can show the card, answered over the widget's
comm; where no view answers it returns at once, and with the widget off it is not offered."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from forge_jupyter.testing import FakeModelServer, Turn, tool_call
from tests.browser.kernel_frontend import KernelFrontend, kernel_env

pytestmark = pytest.mark.slow

ASK = {"question": "Which year should I use?", "options": ["2023", "2024"]}


@pytest.fixture(scope="module")
def server(model_server: FakeModelServer) -> FakeModelServer:
    return model_server  # the module's (conftest.py)


@pytest.fixture(scope="module")
def kernel(server: FakeModelServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelFrontend]:
    cwd = tmp_path_factory.mktemp("kernel")
    env = {**os.environ, **kernel_env(server, cwd)}  # the lab's kernels' settings
    env.pop("FORGE_WIDGET", None)
    fe = KernelFrontend(env=env, cwd=str(cwd))
    fe.run("%load_ext forge_jupyter")
    yield fe
    fe.close()


def _ops(fe: KernelFrontend, name: str) -> list[dict]:
    return [op for r in fe.received for op in r.content.get("ops", []) if op["op"] == name]


def _tool_result(request) -> str:
    return [m for m in request.messages if m.get("role") == "tool"][-1]["content"]


def test_a_live_widget_offers_the_question_and_its_answer_reaches_the_model(kernel, server):
    server.clear()
    n = len(server.requests)
    server.add(Turn([tool_call("question", ASK)]), Turn.text("Using 2024."))
    sent: list[str] = []

    def answer(fe: KernelFrontend, body: dict) -> None:
        for op in body.get("ops", []):
            if op["op"] == "approval" and op["request"].get("kind") == "question" and not sent:
                sent.append(op["request"]["id"])
                rid = op["request"]["id"]
                for bad in ({"request_id": "qst_nope", "text": "2023"},
                            {"request_id": rid, "text": "  "},
                            {"request_id": "q" * 100_000, "text": "2023"},
                            {"request_id": rid, "text": ["2023"]},
                            {"request_id": rid, "text": "x" * 1_000_000},
                            {"request_id": {"$ne": None}, "text": "2023"}):
                    fe.send_to_view({"type": "answer", **bad})
                fe.send_to_view({"type": "approve", "request_id": rid, "answer": "once" * 50_000})
                fe.send_to_view({"type": "answer", "request_id": op["request"]["id"], "text": "2024"})

    kernel.run("%%forge\nAnalyse the sales.", on_custom=answer, timeout=90)
    assert "question" in server.requests[n].tools
    assert _tool_result(server.requests[n + 1]) == "The user answered: 2024"
    [asked] = [op["request"] for op in _ops(kernel, "approval")]
    assert asked["question"] == ASK["question"] and asked["options"] == ASK["options"]
    [done] = _ops(kernel, "answered")
    assert done["answer"] == "answered" and done["text"] == "2024" and done["by"] == "widget"
    notices = [op["message"] for op in _ops(kernel, "notice")]
    assert len(notices) == 7 and all(len(n) < 300 for n in notices)  # never a huge echo
    assert any("no pending question 'qst_nope'" in n for n in notices)  # told, nothing answered
    assert any("the answer is empty" in n for n in notices)
    assert any("keep it under 10,000" in n for n in notices)
    assert sum("names no pending request" in n for n in notices) == 2


def test_with_no_view_the_question_returns_without_waiting(kernel, server):
    server.clear()
    n = len(server.requests)
    server.add(Turn([tool_call("question", ASK)]), Turn.text("Assumed 2024."))
    kernel.answer_ready = False  # nbconvert-like: the widget never says it rendered
    kernel.stdout.clear()
    try:
        kernel.run("%%forge\nAnalyse again.", timeout=60)
    finally:
        kernel.answer_ready = True
    assert len(server.requests) == n + 2
    result = _tool_result(server.requests[n + 1])
    assert result.startswith("The user did not answer: no one can answer questions here")
    out = "".join(kernel.stdout)
    assert "? question: Which year should I use?" in out and "Assumed 2024." in out


def test_with_the_widget_off_the_question_is_not_offered(kernel, server):
    server.clear()
    n = len(server.requests)
    server.add(Turn.text("Plain."), Turn.text("Asked for."), Turn.text("Live again."))
    kernel.run("%config Forge.widget = 'off'\n")
    try:
        kernel.run("%%forge\nHello.", timeout=60)
        kernel.run("%config Forge.flags = ['question']\n")  # asked for by name: offered
        kernel.run("%%forge\nHello, asked for.", timeout=60)
    finally:
        kernel.run("%config Forge.widget = 'auto'\n%config Forge.flags = []\n")
    kernel.run("%%forge\nHello again.", timeout=60)
    assert "question" not in server.requests[n].tools
    assert "python" in server.requests[n].tools  # only the question tool is left out
    assert "question" in server.requests[n + 1].tools
    assert "question" in server.requests[n + 2].tools  # a widget again: offered again


def test_stop_while_a_question_waits_ends_the_turn_and_the_card(kernel, server):
    server.clear()
    n = len(server.requests)
    server.add(Turn([tool_call("question", ASK)]), Turn.text("never asked for"))
    stopped: list[str] = []

    def stop(fe: KernelFrontend, body: dict) -> None:
        for op in body.get("ops", []):
            if op["op"] == "approval" and op["request"].get("kind") == "question" and not stopped:
                stopped.append(op["request"]["id"])
                fe.send_to_view({"type": "stop"})

    kernel.run("%%forge\nAsk, then be stopped.", on_custom=stop, timeout=60)
    assert stopped and len(server.requests) == n + 1  # the model was not asked again
    [over] = [op for op in _ops(kernel, "answered") if op["id"] == stopped[0]]
    assert over["answer"] == "unanswered" and "stopped" in over["reason"]
    server.clear()
    server.add(Turn.text("Fine again."))
    kernel.run("%%forge\nNext.", timeout=60)  # nothing left pending: the session takes prompts
    assert len(server.requests) == n + 2
