"""The forge side panel's stored history and its looks, in a real JupyterLab and Chromium: the
store's sessions searched and paged through the server's REST API, one session's whole history
with its compaction boundary and superseded messages, forks under their parent, hostile text
everywhere rendered as text, light and dark themes.

The history is written once for the module into the file the lab's server and kernels use,
through the real Forge (litellm over loopback HTTP to the fake model server) and the store's API.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from forge_jupyter import Forge
from forge_jupyter.message import Message, SessionInfo, TextPart, now
from forge_jupyter.session.prompt import run_sync
from forge_jupyter.session.replay import replay_async
from forge_jupyter.session.replay_match import find_recording
from forge_jupyter.session.retry import RetryPolicy
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart
from forge_jupyter.testing import Turn, reasoning, text, tool_call
from tests.browser.lab_helpers import NotebookPage, set_theme
from tests.browser.panel_page import PanelPage
from tests.tool_cells import ECHO_AND_FAIL_TOOLS as TOOLS
from tests.xss_corpus import ALL_VECTORS

pytestmark = pytest.mark.slow

LOAD = "%load_ext forge_jupyter"
FILLERS = 34  # with the sessions below, more than one page (30) of the panel's list
LONG = 450  # messages: three pages of the history's reads (200)

# Sentinels beside the corpus's alert()s: each runs only if its markup survived.
SENTINELS = "\n\n".join([
    '<img src=x onerror="window.__forgePwned=1">',
    "[click](javascript:window.__forgePwned=2)",
    '<svg onload="window.__forgePwned=3"></svg>',
    '<a href="javascript:window.__forgePwned=4">link</a>',
])
PAYLOAD = SENTINELS + "\n\n" + "\n\n".join(v for _, v in ALL_VECTORS)
HOSTILE_IMG = '<img src=x onerror="window.__forgePwned=5">'
HOSTILE_TITLE = HOSTILE_IMG + " <script>window.__forgePwned=6</script>"


@dataclass
class Stored:
    ids: dict[str, str] = field(default_factory=dict)


def write_long(store: DuckDBStore, name: str, count: int, **fields: object) -> str:
    """A session of ``count`` finished messages (one text part each), through the store's API."""
    session = store.create_session(SessionInfo(name=name, **fields))
    ops: list = []
    for i in range(count):
        m = Message(session_id=session.id, role="user" if i % 2 == 0 else "assistant",
                    status="completed", completed_at=now())
        ops += [PutMessage(m), PutPart(TextPart(session_id=session.id, message_id=m.id,
                                                text=f"line {i} of {name}", time_start=now(),
                                                time_end=now())),
                AppendMessage(session.id, m.id)]
    store.write(ops)
    return session.id


CITED = [{"type": "web_search_result_location", "url": "https://www.python.org/downloads/",
          "title": "Python <b>3.13</b>", "cited_text": "3.13.0 is the newest"},
         {"type": "url_citation", "url_citation": {"url": "https://docs.python.org/3/",
                                                   "title": ""}},
         {"url": "javascript:window.__forgePwned=8", "title": HOSTILE_IMG},
         {"url": "https://www.python.org/downloads/", "title": "the same page again"}]


def write_cited(store: DuckDBStore) -> str:
    """A search answer as a provider's web search leaves it: a text part with its citations."""
    session = store.create_session(SessionInfo(name="cited-search", title="Cited search"))
    ask = Message(session_id=session.id, role="user", status="completed", completed_at=now())
    answer = Message(session_id=session.id, role="assistant", status="completed",
                     completed_at=now(), parent_id=ask.id)
    store.write([
        PutMessage(ask), PutPart(TextPart(session_id=session.id, message_id=ask.id,
                                          text="When was Python 3.13 released?",
                                          time_start=now(), time_end=now())),
        AppendMessage(session.id, ask.id), PutMessage(answer),
        PutPart(TextPart(session_id=session.id, message_id=answer.id,
                         text="On 7 October 2024.", time_start=now(), time_end=now(),
                         metadata={"citations": CITED})),
        AppendMessage(session.id, answer.id)])
    return session.id


@pytest.fixture(scope="module")
def stored(lab, model_server) -> Stored:
    db = lab.db  # the file the lab's server and kernels use
    out = Stored()
    store = DuckDBStore(db)
    for i in range(FILLERS):
        write_long(store, f"filler-{i:02d}", 2)
    out.ids["long"] = write_long(store, "long-read", LONG, title="A long read")
    out.ids["hostile"] = write_long(store, HOSTILE_TITLE, 2, title=HOSTILE_TITLE + " " + PAYLOAD,
                                    metadata={"notebook": HOSTILE_TITLE + ".ipynb"})
    out.ids["cited"] = write_cited(store)
    forge = Forge(db=str(db), builtin_tools=False, load_plugins=False,
                  retry=RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02),
                  **model_server.model_kwargs())
    try:
        trip = forge.session("zanzibar", metadata={"notebook": str(lab.root / "travel.ipynb")})
        model_server.add(Turn.text("Fly to Zanzibar in June; the dry season starts then."),
                         Turn.text("Stone Town takes a day: the old fort, the market, the sea front."),
                         Turn.text("## Goal\nA June trip to Zanzibar with a day in Stone Town."),
                         Turn.text("After the compaction the plan still holds."))
        trip.prompt("Plan a trip to Zanzibar.", origin={"notebook": str(lab.root / "travel.ipynb")})
        trip.prompt("Add a day in Stone Town.")
        trip.compact()
        trip.prompt("And after the compaction?")
        fork = trip.fork(name="zanzibar-by-boat")
        model_server.add(Turn.text("The ferry from Dar es Salaam takes two hours."))
        fork.prompt("Go by boat instead.")
        forge.flush()
        # The trip's first cell run again after a restart: replayed from its recording.
        found = find_recording(forge.store, notebook=str(lab.root / "travel.ipynb"), cell_id=None,
                               text="Plan a trip to Zanzibar.", agent="build", point=None)
        assert found.recording is not None, found
        again = forge.session("zanzibar-again")
        run_sync(lambda: replay_async(again, found.recording, "Plan a trip to Zanzibar."))
        forge.flush()
        out.ids |= {"trip": trip.id, "fork": fork.id, "again": again.id}
    finally:
        forge.close()
    return out


def open_panel(page, lab, name: str, cells: list[str]) -> tuple[NotebookPage, PanelPage]:
    lab.write_notebook(name, cells)
    nb = NotebookPage(page, lab, name).open()
    return nb, PanelPage(page).open()


def test_search_finds_an_old_session_and_its_history_shows_the_compaction(page, lab, stored):
    _, panel = open_panel(page, lab, "history.ipynb", ["1"])
    rows = panel.sessions().locator("[data-testid=session-row]")
    rows.first.wait_for()
    # The first page, then "More" until the API has no next page.
    assert rows.count() == 30
    more = panel.tid("sessions-more")
    more.click()
    panel.page.wait_for_function(
        "() => document.querySelectorAll('#forge-jupyter-panel [data-testid=session-row]').length > 30")
    assert more.is_hidden()
    assert rows.count() == FILLERS + 6  # long, hostile, cited, the trip, its fork, its replay

    # Message text is searched too; the fork sits under the session it branched from.
    panel.search("STONE town")
    trip = panel.root.locator(f"[data-session-id={stored.ids['trip']}]")
    trip.wait_for()
    panel.page.wait_for_function(
        "() => document.querySelectorAll('#forge-jupyter-panel [data-testid=session-row]').length == 2")
    nested = panel.root.locator("[data-testid=session-children] [data-testid=session-row]")
    assert nested.get_attribute("data-session-id") == stored.ids["fork"]
    assert nested.get_attribute("data-relation") == "fork"
    assert trip.locator("[data-testid=session-title]").inner_text() == "Plan a trip to Zanzibar."
    assert "travel.ipynb" in trip.inner_text() and "openai/fake-model" in trip.inner_text()
    panel.screenshot("panel-sessions-search")

    trip.click()
    history = panel.tid("history")
    history.and_(panel.page.locator("[data-complete=true]")).wait_for()
    body = panel.tid("history-body")
    prompts = body.locator("[data-testid=history-prompt]")
    assert prompts.all_inner_texts()[0].endswith("Plan a trip to Zanzibar.")
    boundary = body.locator("[data-testid=compaction-boundary]")
    assert boundary.count() == 1
    assert boundary.inner_text().startswith("Compaction boundary")
    # Superseded messages are greyed and say so.
    flags = body.evaluate("""(b) => {
        const out = []; let after = false;
        for (const el of b.children) {
            if (el.dataset.testid === 'compaction-boundary') { after = true; continue; }
            out.push([after, el.dataset.superseded === 'true', el.innerText.slice(0, 60)]);
        }
        return out;
    }""")
    # Before the boundary: the first prompt and its answer superseded (the summary replaced
    # them), the last turn kept as it was; after it, all of it in the model's view.
    before = [sup for after, sup, _ in flags if not after]
    assert before == [True, True, False, False], flags
    assert not any(sup for after, sup, _ in flags if after), flags
    tags = body.locator("[data-testid=superseded-tag]")
    assert tags.count() == 1, "said once, where the superseded messages begin (issue 26, item 8)"
    assert tags.first.inner_text() == "superseded by compaction"
    assert body.evaluate("(b) => getComputedStyle(b.querySelector('.forge-panel-superseded')).opacity") < "1"
    shown = body.inner_text()
    for said in ("Fly to Zanzibar in June", "Stone Town takes a day", "Summary of the earlier conversation",
                 "And after the compaction?", "After the compaction the plan still holds."):
        assert said in shown, said
    panel.screenshot("panel-history-compaction")

    # A long session is read page by page to its end.
    panel.tid("history-back").click()
    panel.search("long read")
    panel.root.locator(f"[data-session-id={stored.ids['long']}]").click()
    history.and_(panel.page.locator("[data-complete=true]")).wait_for()
    assert body.locator("[data-testid=history-prompt]").count() == LONG // 2
    assert f"line {LONG - 1} of long-read" in body.locator("[data-testid=history-turn]").last.inner_text()

    # A turn replayed from its recording says so, in the words of the cell's record.
    panel.tid("history-back").click()
    panel.search("zanzibar-again")
    panel.root.locator(f"[data-session-id={stored.ids['again']}]").click()
    history.and_(panel.page.locator("[data-complete=true]")).wait_for()
    turn = body.locator("[data-testid=history-turn]")
    assert turn.count() == 1
    tag = turn.locator("[data-testid=replayed-tag]").inner_text()
    assert tag.startswith("↻ replayed · recorded ") and tag.endswith(" with openai/fake-model"), tag
    assert "Fly to Zanzibar in June" in turn.inner_text()

    # An answer of a provider's web search lists the pages it cited: http(s) links only.
    panel.tid("history-back").click()
    panel.search("Cited search")
    panel.root.locator(f"[data-session-id={stored.ids['cited']}]").click()
    history.and_(panel.page.locator("[data-complete=true]")).wait_for()
    sources = body.locator("[data-testid=sources]")
    assert sources.inner_text() == ("Sources: Python <b>3.13</b> · https://docs.python.org/3/")
    links = sources.locator("a")
    assert [links.nth(i).get_attribute("href") for i in range(links.count())] == [
        "https://www.python.org/downloads/", "https://docs.python.org/3/"]
    assert links.first.get_attribute("rel") == "noopener noreferrer nofollow"
    assert page.evaluate("window.__forgePwned") is None
    assert not page.forge_errors


def audited(panel: PanelPage, dialogs: list[str], where: str) -> None:
    assert panel.audit() == [], where
    assert panel.page.evaluate("window.__forgePwned") is None, where
    assert dialogs == [], where


def test_hostile_model_text_tool_calls_and_titles_render_as_text_in_the_panel(page, lab, script, stored):
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    script.add(Turn([reasoning(PAYLOAD, chunk=400), text(PAYLOAD, chunk=400),
                     tool_call("echo", {"text": PAYLOAD}), tool_call("fail", {"text": PAYLOAD}),
                     tool_call('<img src=x onerror="window.__forgePwned=7">', {"x": PAYLOAD})]),
               Turn.text("Findings: see [the docs](https://example.com/docs).\n\n" + PAYLOAD, chunk=400))
    nb, panel = open_panel(page, lab, "hostile.ipynb", [LOAD, TOOLS])
    for i in (0, 1):
        nb.run_cell(i)
        nb.wait_idle(i)
    panel.wait_state("attached")
    panel.send(HOSTILE_TITLE + "\nSay something hostile.")
    turn = panel.turns().first
    panel.wait_turn_done(turn, timeout=120)
    page.wait_for_timeout(500)
    # The work is all there, hostile text as text.
    shown = turn.inner_text()
    for said in ("echo", "fail", "completed", "error", "onerror", "Findings"):
        assert said in shown, said
    assert turn.locator("[data-testid=panel-turn-prompt]").inner_text().startswith(HOSTILE_TITLE)
    assert turn.locator("a[href='https://example.com/docs']").count() == 1
    for details in turn.locator("details").all():  # arguments, outputs, reasoning: opened
        details.evaluate("(d) => { d.open = true; }")
    audited(panel, dialogs, "live turn")

    # The titles of the list (one stored, one given by the hostile prompt) and their histories.
    panel.sessions()
    panel.search("forgePwned=6")
    rows = panel.root.locator("[data-testid=session-row]")
    panel.page.wait_for_function(
        "() => document.querySelectorAll('#forge-jupyter-panel [data-testid=session-row]').length == 2")
    titles = rows.locator("[data-testid=session-title]").all_inner_texts()
    assert all(t.startswith(HOSTILE_IMG) for t in titles), titles  # (a title is cut at 80)
    where = panel.root.locator(f"[data-session-id={stored.ids['hostile']}] .forge-panel-session-notebook")
    assert where.get_attribute("title") == HOSTILE_TITLE + ".ipynb"  # the path; its file name shown
    assert where.inner_text() == "script>.ipynb"
    audited(panel, dialogs, "session list")
    live = rows.and_(page.locator(f":not([data-session-id={stored.ids['hostile']}])"))
    live.click()
    history = panel.tid("history")
    history.and_(page.locator("[data-complete=true]")).wait_for()
    body = panel.tid("history-body")
    assert body.locator("[data-testid=tool]").count() == 3
    assert "Findings" in body.inner_text()
    for details in body.locator("details").all():
        details.evaluate("(d) => { d.open = true; }")
    panel.screenshot("panel-xss-history")
    audited(panel, dialogs, "history")
    panel.tid("history-back").click()
    panel.root.locator(f"[data-session-id={stored.ids['hostile']}]").click()
    history.and_(page.locator(f"[data-session-id={stored.ids['hostile']}][data-complete=true]")).wait_for()
    assert panel.tid("history-title").inner_text().startswith(HOSTILE_TITLE)
    audited(panel, dialogs, "stored hostile history")
    assert not page.forge_errors


SALES = '''import forge_jupyter

@forge_jupyter.tool
def sales_by_region(year: int) -> str:
    """Units sold per region in a year."""
    return "North 1240\\nSouth 980\\nWest 755"
'''
ANSWER = ("**North** sold the most in 2024.\n\n| region | units |\n|---|--:|\n| North | 1,240 |\n"
          "| South | 980 |\n| West | 755 |")
BACKGROUND = """(el) => {
    const probe = document.createElement('div');
    probe.style.background = 'var(--jp-layout-color1)';
    document.body.append(probe);
    const want = getComputedStyle(probe).backgroundColor;
    probe.remove();
    return [getComputedStyle(el).backgroundColor, want, getComputedStyle(el).color];
}"""


def test_light_and_dark_themes(page, lab, script):
    script.add(Turn([text("Let me look at the sales."), tool_call("sales_by_region", {"year": 2024})]),
               Turn.text(ANSWER))
    nb, panel = open_panel(page, lab, "sales.ipynb", [LOAD, SALES])
    for i in (0, 1):
        nb.run_cell(i)
        nb.wait_idle(i)
    panel.wait_state("attached")
    page.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")
    # A wider panel than JupyterLab's default sidebar: drag the split handle left.
    handle = page.locator("#jp-main-split-panel > .lm-SplitPanel-handle:not(.lm-mod-hidden)").last
    box = handle.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] - 200, box["y"] + box["height"] / 2, steps=5)
    page.mouse.up()
    panel.send("Which region sold the most in 2024?")
    turn = panel.turns().first
    panel.wait_turn_done(turn)
    turn.locator("table").wait_for()
    panel.tid("cost-session").filter(has_text="cost unknown").wait_for()
    try:
        light = panel.root.evaluate(BACKGROUND)
        assert light[0] == light[1] == "rgb(255, 255, 255)", light
        panel.screenshot("panel-light")  # the docs' pictures: tests/browser/test_screenshots.py

        set_theme(page, "JupyterLab Dark", light=False)
        dark = panel.root.evaluate(BACKGROUND)
        assert dark[0] == dark[1] and dark[0] != light[0], dark
        assert dark[2] != light[2], "the text colour follows the theme too"
        tool = turn.locator("[data-testid=tool]")
        assert tool.evaluate("(el) => getComputedStyle(el).borderColor") != "rgb(224, 224, 224)"
        panel.screenshot("panel-dark")
    finally:
        set_theme(page, "JupyterLab Light", light=True)
    assert not page.forge_errors
