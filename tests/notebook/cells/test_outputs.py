"""Each bound on what the agent reads of an output, against hostile outputs (issue 27, "Bad
input and limits"): every one holds, and says so where it applied."""

from __future__ import annotations

import base64
import time

import pytest

from forge_jupyter.notebook.cells import budget
from forge_jupyter.notebook.cells.outputs import image_bytes, images, summarize
from forge_jupyter.scrub import Scrubber

SECRET = "ghp_" + "aB3dE6fG9hJ2kL5mN8pQ1rS4tU7vW0xY3zA6"
scrub = Scrubber()


def display(data, metadata=None, kind="display_data"):
    return {"output_type": kind, "data": data, "metadata": metadata or {}}


def test_a_10_mb_html_output_is_cut_before_it_is_parsed_and_said_twice():
    html = "<table>" + "<tr><td>cell</td><td>value</td></tr>" * 300_000 + "</table>"
    assert len(html) > 10_000_000
    start = time.perf_counter()
    s = summarize(display({"text/html": html}), scrub)
    assert time.perf_counter() - start < 5  # bounded work, not 10 MB of parsing
    assert len(s.text) <= budget.OUTPUT_CHARS
    assert any("HTML cut at 200,000" in n for n in s.notes)
    assert any("[output cut at" in n for n in s.notes)


@pytest.mark.parametrize("markup", [
    "<script>fetch('//evil')</script><p>hello</p>",
    "<SCRIPT type=module>fetch('//evil')</SCRIPT><p>hello</p>",
    "<p>hello</p><style>p{}</style><iframe src=//evil>fetch('//evil')</iframe>",
    "<p onclick=\"fetch('//evil')\">hello</p>",
])
def test_html_becomes_text_without_its_scripts(markup):
    s = summarize(display({"text/html": markup}), scrub)
    assert "hello" in s.text and "evil" not in s.text


@pytest.mark.parametrize("uri", [
    "data:image/png;base64,", "data:image/jpeg;charset=utf-8;base64,", "data:;base64,"])
def test_base64_images_inside_html_are_a_note_never_their_bytes(uri):
    payload = base64.b64encode(b"\x89PNG" + bytes(range(256)) * 40).decode()
    s = summarize(display({"text/html": f'<img src="{uri}{payload}"><p>chart</p>'
                                         f"<p>{uri}{payload}</p>"}), scrub)
    assert payload[:40] not in s.text and "inline" in s.text


def test_a_dataframe_reads_as_its_text_form_not_its_html():
    s = summarize(display({"text/plain": "   city  temp\n0  Oslo     3",
                           "text/html": "<table><tr><td>Oslo</td></tr></table>"},
                          kind="execute_result"), scrub)
    assert s.text == "   city  temp\n0  Oslo     3"


def test_a_plotly_figure_is_described_not_dumped():
    fig = {"data": [{"type": "scatter", "x": list(range(100_000))}, {"type": "bar"}],
           "layout": {"title": {"text": "Sales"}}}
    s = summarize(display({"application/vnd.plotly.v1+json": fig, "text/html": "<div/>"}), scrub)
    assert "Plotly figure: 2 trace(s) (bar, scatter), title \"Sales\"" in s.text
    assert "99999" not in s.text and len(s.text) < 300


def test_binary_and_unknown_outputs_are_named_with_their_size():
    s = summarize(display({"application/octet-stream": "AAAA" * 10_000}), scrub)
    assert s.text == "[application/octet-stream, 40,000 characters, not shown]"
    odd = summarize({"output_type": "weird"}, scrub)
    assert "not read" in odd.text
    assert summarize("not a dict", scrub).kind == "unknown"


def test_images_are_noted_with_mime_and_size_and_their_bytes_can_be_had():
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 1000
    out = display({"image/png": base64.b64encode(png).decode(), "text/plain": "<Figure>"},
                  {"image/png": {"width": 640, "height": 480}})
    s = summarize(out, scrub)
    assert s.images == images(out) and s.images[0].mime == "image/png"
    assert "[image/png 640×480, 1,008 bytes]" in s.text
    assert image_bytes(out, "image/png") == png
    assert image_bytes(out, "image/png", limit=100) is None  # over the caller's bound
    assert image_bytes(out, "image/jpeg") is None
    assert image_bytes(display({"image/png": "not base64!"}), "image/png") is None


def test_an_error_keeps_its_last_frames_without_ansi():
    frames = [f"\x1b[0;36mFile frame{i}.py:{i}\x1b[0m" for i in range(2_000)]
    s = summarize({"output_type": "error", "ename": "KeyError", "evalue": "'x'",
                   "traceback": [*frames, "\x1b[0;31mKeyError\x1b[0m: 'x'"]}, scrub)
    assert "\x1b" not in s.text and s.text.endswith("KeyError: 'x'")
    assert "frame1999" in s.text and "frame0.py" not in s.text
    assert s.error == "KeyError: 'x'" and any("last" in n for n in s.notes)


@pytest.mark.parametrize("where", ["stream", "html", "plain", "error"])
def test_a_secret_in_an_output_is_scrubbed_even_where_it_is_cut(where):
    padding = "x" * (budget.OUTPUT_CHARS - 10)  # the secret straddles the cut
    text = f"{padding} {SECRET} tail"
    out = {"stream": {"output_type": "stream", "name": "stdout", "text": text},
           "html": display({"text/html": f"<p>{text}</p>"}),
           "plain": display({"text/plain": [text[:50], text[50:]]}),  # nbformat's list form
           "error": {"output_type": "error", "ename": "E", "evalue": SECRET,
                     "traceback": [SECRET, "x"]}}[where]
    s = summarize(out, scrub)
    assert SECRET[:8] not in s.text and SECRET[:8] not in (s.error or "")


def test_invalid_unicode_and_carriage_returns_are_made_safe():
    s = summarize({"output_type": "stream", "text": "a\ud800b\r\nc"}, scrub)
    assert s.text == "a\ufffdb\nc"
