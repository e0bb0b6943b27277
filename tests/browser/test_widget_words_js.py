"""The live widget says what the record says: labextension/src/render/words.ts against the
Python side (model.STATUS_WORDS and duration, render.numbers, render.sources).

The inputs below and the Python side's answers to them are labextension/test/words.cases.json;
labextension/test/words.test.ts (``npm test``, run by tests/browser/test_labextension_js.py)
pins that words.ts gives the same answers. Here: the file is what Python answers today.
Rewrite it with ``python -m tests.browser.test_widget_words_js``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from forge_jupyter import render
from forge_jupyter.message import STATUS_WORDS, Tokens, duration
from forge_jupyter.render.sources import cited_sources

CASES_JSON = Path(__file__).resolve().parents[2] / "labextension" / "test" / "words.cases.json"

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



def python_answers() -> dict[str, Any]:
    """The inputs, and what the Python side says for each (JSON as the Node test reads it)."""
    inputs = {"parts": PARTS, "seconds": SECONDS, "money": MONEY, "usage": USAGE,
              "citations": CITATIONS}
    python = {
        "status": STATUS_WORDS,
        "duration": [duration(p) for p in PARTS],
        "seconds": [render.seconds(s) for s in SECONDS],
        "money": [render.money(c) for c in MONEY],
        "usage": [render.usage(Tokens(**t), c, m) for t, c, m in USAGE],
        "sources": [list(pair) for pair in cited_sources(CITATIONS)],
    }
    return json.loads(json.dumps({"inputs": inputs, "python": python}))


def cases_text() -> str:
    return json.dumps(python_answers(), indent=1, ensure_ascii=False) + "\n"


def test_the_node_test_cases_are_the_python_sides_answers_today():
    assert CASES_JSON.read_text(encoding="utf-8") == cases_text(), (
        "labextension/test/words.cases.json is stale: run python -m tests.browser.test_widget_words_js "
        "and commit it")


def test_the_python_side_answers_what_a_person_reads():
    python = python_answers()["python"]
    expected = python["sources"]
    assert [url for url, _ in expected[:4]] == [
        "https://www.python.org/downloads/", "https://docs.python.org/3/",
        'HTTPS://EX.COM/"><script>', "https://emoji.example/"]
    assert expected[0][1] == "Python <b>3.13</b> release" and expected[1][1] == expected[1][0]
    assert expected[3][1] == "🐍" * 119 + "…" and len(expected) == 20
    # The cases above reach every branch that a person reads.
    assert "cost unknown" in python["money"] and "$0" in python["money"]
    assert any("tokens estimated" in u for u in python["usage"])


if __name__ == "__main__":
    CASES_JSON.write_text(cases_text(), encoding="utf-8")
