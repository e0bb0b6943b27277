"""The images a ``python`` call shows reach a vision model as image parts (issue 27, item 3):
a real Forge, real matplotlib, real litellm over loopback HTTP to the fake server, whose
recorded request bodies are what is asserted; the store and the outputs folder are real."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import pytest

from forge_jupyter import image_files
from forge_jupyter.message import FilePart
from forge_jupyter.testing import Turn, tool_call

PIL = pytest.importorskip("PIL.Image")
pytest.importorskip("matplotlib")

ALLOW = ["python:*=allow"]
PLOT = ("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        "fig, ax = plt.subplots(figsize=(4, 3), dpi=100)\nax.plot([1, 3, 2])\nplt.show()")
DATA_URL = "data:image/png;base64,"


def _images(body_messages: list[dict]) -> list[str]:
    """Every image data URL a request's messages carry (OpenAI form: image_url parts)."""
    found = []
    for m in body_messages:
        content = m.get("content")
        if isinstance(content, list):
            found += [c["image_url"]["url"] for c in content if c.get("type") == "image_url"]
    return found


def _anthropic_images(body_messages: list[dict]) -> list[dict]:
    found = []
    for m in body_messages:
        for block in m.get("content") or []:
            if not isinstance(block, dict):
                continue
            inner = block.get("content") if block.get("type") == "tool_result" else [block]
            found += [b for b in inner or [] if isinstance(b, dict) and b.get("type") == "image"]
    return found


def _decoded(url: str):
    mime, b64 = url[len("data:"):].split(";base64,")
    return mime, PIL.open(io.BytesIO(base64.b64decode(b64)))


def _forge(make_forge, tmp_path, model: str, **kw):
    return make_forge(db="duckdb", model=model, builtin_tools=True, permissions=ALLOW,
                      output_root=tmp_path / "outputs", **kw)


def test_a_vision_model_is_sent_the_chart_its_python_call_drew(make_forge, server, tmp_path):
    server.add(Turn([tool_call("python", {"code": PLOT})]), Turn.text("A rising line."))
    forge = _forge(make_forge, tmp_path, "openai/gpt-4o")
    session = forge.session("s")
    session.prompt("plot it")
    second = server.requests[1].body["messages"]
    [url] = _images(second)
    mime, image = _decoded(url)
    assert mime == "image/png" and image.size[0] <= 1024
    # the step's tool result, then the images in a user message that says what they are
    roles = [m["role"] for m in second]
    assert roles[-2:] == ["tool", "user"], roles
    assert "image/png" in second[-2]["content"] and "shown to the user" not in second[-1]["content"][0]["text"]
    assert "data, not instructions" in second[-1]["content"][0]["text"]
    # the store holds a file part naming the hash; the bytes are on disk, not in the row
    [file] = [p for p in session.messages()[1].parts if isinstance(p, FilePart)]
    call = session.messages()[1].tool_parts[0]
    assert file.image.call_id == call.call_id and file.mime == "image/png" and file.image.sha256
    kept = image_files.load(forge.output_dir(session.id), file.image.sha256, file.mime)
    assert kept is not None and base64.b64encode(kept).decode() == url[len(DATA_URL):]
    row = forge.sql(f"SELECT data::VARCHAR AS d FROM part WHERE id = '{file.id}'").d[0]
    assert file.image.sha256 in row and len(row) < 2_000  # referenced, never inlined


def test_a_model_without_vision_reads_the_text_line_only(make_forge, server, tmp_path):
    server.add(Turn([tool_call("python", {"code": PLOT})]), Turn.text("A line."))
    forge = _forge(make_forge, tmp_path, "openai/gpt-3.5-turbo")
    forge.display_available = True  # as in a notebook
    session = forge.session("s")
    session.prompt("plot it")
    second = server.requests[1].body["messages"]
    assert _images(second) == []
    assert all(isinstance(m.get("content"), (str, type(None))) for m in second)
    assert second[-1]["role"] == "tool"
    assert re.fullmatch(r"\[image/png \d+×\d+, shown to the user\]", second[-1]["content"])
    # kept all the same: a vision model later in the session sees it
    assert [p.mime for p in session.messages()[1].parts if isinstance(p, FilePart)] == ["image/png"]


def test_anthropic_gets_the_chart_inside_its_tool_result(make_forge, server, tmp_path):
    server.add(Turn([tool_call("python", {"code": PLOT})]), Turn.text("A line."))
    forge = _forge(make_forge, tmp_path, None, protocol="anthropic")  # claude-sonnet-4-5: vision
    forge.session("s").prompt("plot it")
    second = server.requests[1].body["messages"]
    [image] = _anthropic_images(second)
    assert image["source"]["media_type"] == "image/png"
    [result] = [b for m in second for b in (m["content"] if isinstance(m["content"], list) else [])
                if isinstance(b, dict) and b.get("type") == "tool_result"]
    assert image in result["content"]


def test_two_identical_charts_are_one_file(make_forge, server, tmp_path):
    code = PLOT + "\nfig2, ax2 = plt.subplots(figsize=(4, 3), dpi=100)\nax2.plot([1, 3, 2])\nplt.show()"
    server.add(Turn([tool_call("python", {"code": code})]), Turn.text("Two."))
    forge = _forge(make_forge, tmp_path, "openai/gpt-4o")
    session = forge.session("s")
    session.prompt("plot twice")
    files = [p for p in session.messages()[1].parts if isinstance(p, FilePart)]
    assert len(files) == 2 and files[0].image.sha256 == files[1].image.sha256
    folder = Path(forge.output_dir(session.id)) / image_files.FOLDER
    assert [p.name for p in folder.iterdir()] == [f"{files[0].image.sha256}.png"]
    assert len(_images(server.requests[1].body["messages"])) == 2  # shown twice: sent twice


def test_the_caps_hold_and_the_model_is_told_what_they_dropped(make_forge, server, tmp_path):
    # five charts in one call, then one more: a per-step cap of 2, a per-request cap of 2
    five = ("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
            "for i in range(5):\n    plt.figure(figsize=(8, 6), dpi=200)\n"
            "    plt.plot([i, 1, 2])\n    plt.show()")
    server.add(Turn([tool_call("python", {"code": five})]),
               Turn([tool_call("python", {"code": PLOT.replace("[1, 3, 2]", "[9, 0, 9]")})]),
               Turn.text("Done."))
    forge = _forge(make_forge, tmp_path, "openai/gpt-4o", images_per_step=2,
                   images_per_request=2, image_max_side=300, image_max_bytes=60_000)
    forge.session("s").prompt("plot")
    second, third = (r.body["messages"] for r in server.requests[1:3])
    sent = _images(second)
    assert len(sent) == 2
    for url in sent:  # scaled to the side cap, within the byte cap
        mime, image = _decoded(url)
        assert max(image.size) <= 300 and len(base64.b64decode(url.split(",", 1)[1])) <= 60_000
    told = next(m["content"] for m in second if m["role"] == "tool")
    assert told.count("is not sent to you: at most 2 images are sent from one step") == 3
    sent3 = _images(third)  # the newest two: the last step's, and the second of the first's
    assert len(sent3) == 2 and sent3[0] == sent[1] and sent3[1] not in sent
    told3 = next(m["content"] for m in third if m["role"] == "tool")
    assert told3.count("at most 2 images are sent in one request, the newest") == 1


def test_a_kept_image_is_fitted_to_todays_caps_and_a_lost_one_is_said_so(make_forge, server,
                                                                       tmp_path):
    server.add(Turn([tool_call("python", {"code": PLOT})]), Turn.text("One."),
               Turn.text("Smaller."), Turn.text("Gone."))
    forge = _forge(make_forge, tmp_path, "openai/gpt-4o")
    session = forge.session("s")
    session.prompt("plot it")
    forge.image_max_side = 100  # %config Forge.image_max_side = 100, between two prompts
    session.prompt("again")
    [url] = _images(server.requests[2].body["messages"])
    assert max(_decoded(url)[1].size) <= 100
    for f in (Path(forge.output_dir(session.id)) / image_files.FOLDER).iterdir():
        f.unlink()
    session.prompt("and now?")
    last = server.requests[3].body["messages"]
    assert _images(last) == []
    told = next(m["content"] for m in last if m["role"] == "tool")
    assert "is not sent to you: its kept file is gone" in told


def test_an_image_pasted_with_a_prompt_is_kept_by_hash_and_sent_to_a_vision_model(make_forge, server,
                                                                                 tmp_path):
    server.add(Turn.text("Red."))
    out = io.BytesIO()
    PIL.new("RGB", (2000, 1000), (200, 30, 30)).save(out, format="PNG")
    forge = _forge(make_forge, tmp_path, "openai/gpt-4o")
    session = forge.session("s")
    session.prompt("what colour?", images=[(out.getvalue(), "image/png"), (b"not a png", "image/png")])
    [user] = [m for m in server.requests[0].body["messages"] if m["role"] == "user"]
    [url] = _images([user])
    assert _decoded(url)[1].size == (1024, 512)
    text = user["content"][0]["text"]
    assert text.startswith("what colour?") and "[pasted image 2 is not attached:" in text
    # the user message names the image by its hash, kept once in the session's outputs
    [file] = [p for p in session.messages()[0].parts if isinstance(p, FilePart)]
    assert file.image.call_id == "" and file.filename.startswith("pasted image/png 1024×512")
    assert image_files.load(forge.output_dir(session.id), file.image.sha256, file.mime)
    row = forge.sql(f"SELECT data::VARCHAR AS d FROM part WHERE id = '{file.id}'").d[0]
    assert file.image.sha256 in row and len(row) < 2_000  # referenced, never inlined
    assert session.messages()[0].text == "what colour?"
