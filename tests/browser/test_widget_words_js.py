"""The live widget says what the record says: labextension/src/render/words.js against the Python side
(model.STATUS_WORDS and duration, render.numbers), run under Node on the same inputs."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from forge_jupyter import render
from forge_jupyter.model import STATUS_WORDS, Tokens, duration
from forge_jupyter.render.sources import cited_sources

WORDS_JS = Path(__file__).resolve().parents[2] / "labextension" / "src" / "render" / "words.js"

SCRIPT = """
const w = await import(process.argv[1]);
const cases = JSON.parse(process.argv[2]);
console.log(JSON.stringify({
  status: w.STATUS_WORDS,
  duration: cases.parts.map((p) => w.duration(p)),
  seconds: cases.seconds.map((s) => w.seconds(s)),
  money: cases.money.map((c) => w.money(c)),
  usage: cases.usage.map(([t, c, m]) => w.usage(t, c, m)),
  sources: w.citedSources(cases.citations),
  notList: [null, {}, "x", 3].map((c) => w.citedSources(c)),
}));
"""

PARTS = [{"time_start": 10.0, "time_end": 12.5}, {"time_start": 10.0, "time_end": None},
         {"time_start": None, "time_end": None}, {}, {"time_start": 3.0, "time_end": 3.0}]
# Exact binary ties (2.125, 42.25, 90.5) round up on both sides, as JavaScript does.
SECONDS = [None, -0.2, 0.0, 0.0004, 0.25, 0.9996, 1.0, 2.125, 9.994, 9.996, 42.25, 59.9, 60.0, 61.5,
           90.5, 3725.4]
# past a trillion: scientific notation (2.25e12 is an exact tie: rounded up on both sides)
MONEY = [None, 0, 0.0, 0.00001234, 0.0099, 0.01, 0.5, 1.235, 12.0, 999_999_999_999.99, 1e12,
         1.5e12, 2.25e12, 9.96e13, 1e26, 1.7e308, -3e15]
USAGE = [
    ({"input": 1234, "output": 56}, 0.0012, "openai/gpt-4o-mini"),
    ({"input": 10, "output": 2, "estimated": True}, None, "openai/fake-model"),
    ({"input": 0, "output": 0}, 0, None),
    ({"input": 1_234_567, "output": 890, "reasoning": 12, "cache_read": 1000}, 3.5, "m"),
    ({"input": 5, "output": 7, "estimated": True, "cache_read": 2}, 0.0, None),
]

# A provider's citations as the wire has them, and hostile ones: only http(s) links survive,
# each page once; titles are text (clipped at 120 characters, counted in code points).
CITATIONS = [
    {"type": "web_search_result_location", "url": "https://www.python.org/downloads/",
     "title": "Python <b>3.13</b>\n\trelease", "cited_text": "…"},
    {"type": "url_citation", "url_citation": {"url": "https://docs.python.org/3/", "title": ""}},
    {"url": "https://www.python.org/downloads/", "title": "the same page again"},
    {"url": "javascript:alert(1)", "title": "js"}, {"url": " https://lead.space/", "title": "x"},
    {"url": "https://a b/", "title": "space"}, {"url": "https://nbsp\u00a0x/", "title": "nbsp"},
    {"url": "https://nel\u0085x/", "title": "nel"}, {"url": "data:text/html,<script>", "title": "d"},
    {"url": "//no-scheme.example/", "title": "rel"}, {"url": "HTTPS://EX.COM/\"><script>", "title": 7},
    {"url": "https://long.example/" + "é" * 3000, "title": "too long"},
    {"url": "https://emoji.example/", "title": "🐍" * 130},
    {"url_citation": "not a dict", "url": "https://outer.example/", "title": "outer"},
    "junk", None, 5, ["https://x.example/"], {"url": None}, {"title": "no url"},
    *[{"url": f"https://many.example/{i}", "title": f"page {i}"} for i in range(30)],
]


def test_widget_words_and_figures_agree_with_the_python_side():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    cases = {"parts": PARTS, "seconds": SECONDS, "money": MONEY, "usage": USAGE,
             "citations": CITATIONS}
    done = subprocess.run([node, "--input-type=module", "-e", SCRIPT, WORDS_JS.as_uri(),
                           json.dumps(cases)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    js = json.loads(done.stdout)
    assert js["status"] == STATUS_WORDS
    assert js["duration"] == [duration(p) for p in PARTS]
    assert js["seconds"] == [render.seconds(s) for s in SECONDS]
    assert js["money"] == [render.money(c) for c in MONEY]
    assert js["usage"] == [render.usage(Tokens(**t), c, m) for t, c, m in USAGE]
    expected = [list(pair) for pair in cited_sources(CITATIONS)]
    assert js["sources"] == expected
    assert [url for url, _ in expected[:4]] == [
        "https://www.python.org/downloads/", "https://docs.python.org/3/",
        'HTTPS://EX.COM/"><script>', "https://emoji.example/"]
    assert expected[0][1] == "Python <b>3.13</b> release" and expected[1][1] == expected[1][0]
    assert expected[3][1] == "🐍" * 119 + "…" and len(expected) == 20
    assert js["notList"] == [[], [], [], []]
    # The cases above reach every branch that a person reads.
    assert "cost unknown" in js["money"] and "$0" in js["money"]
    assert any("tokens estimated" in u for u in js["usage"])
