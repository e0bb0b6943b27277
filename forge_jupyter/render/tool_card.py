"""A tool call as the live widget's card, in the static record: its head (name, title,
state chip, duration), folded arguments, the output as the person reads it, who decided it,
the images it showed. Pure functions: no IPython."""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

from ..message import ToolPart, duration
from .look import element, state_style
from .markdown import SAFE_IMAGE
from .numbers import seconds
from .pieces import (
    ARGS_LIMIT,
    OUTPUT_LIMIT,
    SHORT_OUTPUT_CHARS,
    SHORT_OUTPUT_LINES,
    _clip,
    code_block,
    code_span,
    details,
    text,
)

# Who decided a tool call, and how: the words the live widget uses (labextension/src/render/view.ts,
# decisionText) for the decision a tool part keeps in ``metadata["decision"]`` — answer (once,
# session, deny), by (widget, user, forge — no one could answer —, rule, or a name), rule, reason.
ANSWER_WORDS = {"once": "Allowed once", "session": "Allowed for this session", "deny": "Denied"}
DECIDED_BY = {"widget": "you, in the widget", "panel": "you, in the side panel", "user": "you",
              "forge": "forge"}


def decision_text(decision: dict[str, Any] | None) -> str:
    """"Denied by you, in the widget — not now", "Denied by rule python:*=deny", "Allowed once
    by you, in the widget"; "" when nothing was decided."""
    if not decision:
        return ""
    answer, by = decision.get("answer"), decision.get("by")
    said = ANSWER_WORDS.get(str(answer), str(answer))
    if by == "rule":
        who = f"rule {decision['rule']}" if decision.get("rule") else "a rule"
    else:
        who = DECIDED_BY.get(str(by), str(by)) if by else ""
    reason = f" — {decision['reason']}" if decision.get("reason") else ""
    return f"{said}{f' by {who}' if who else ''}{reason}"


def tool_denied(p: ToolPart) -> bool:
    """A call the permission gate refused (a rule, a person, or no one to ask): it never ran."""
    return p.state == "error" and p.metadata.get("permission") == "denied"


def _decision(p: ToolPart) -> dict[str, Any] | None:
    decision = p.metadata.get("decision")
    return decision if isinstance(decision, dict) else None


def person_output(p: ToolPart, images_shown: bool) -> str | None:
    """A tool's output as the person reads it: the lines that stand for an image for the model
    ("[image/png 572×454, shown to the user]") left out where the image itself is shown; None
    for a call with no output. The widget does the same (labextension words.ts, displayed)."""
    if p.output is None:
        return None
    stand = p.metadata.get("displays")
    if not images_shown or not isinstance(stand, list) or not stand:
        return p.output
    said = {f"[{d}]" for d in stand}
    return "\n".join(line for line in p.output.split("\n") if line not in said).rstrip("\n")


def _input_title(p: ToolPart) -> str:
    """A call's title where its tool gave none: the first line of its first text argument
    (the widget's summarizeInput)."""
    for value in (p.input or {}).values():
        if isinstance(value, str) and value.strip():
            first = value.strip().split("\n")[0]
            return first if len(first) <= 80 else first[:79] + "…"
    return ""


def _tool_html(p: ToolPart, images: str | None = None) -> str:
    """A tool call as the widget's card: a head (name, title, state chip, duration), the
    arguments folded, the output, the decision, the images it showed."""
    denied = tool_denied(p)
    state = "denied" if denied else p.state
    card_style, chip_style = state_style(state)
    # A title that only repeats the tool's name says nothing ("variables — variables").
    title = p.title if p.title and p.title != p.tool else _input_title(p)
    # " · " between the pieces, hidden wherever styles apply (the head is a flex row there);
    # a viewer that drops styles (GitHub) reads "python · print(x) · completed · 12 ms".
    sep = element("span", "forge-sep", " · ")
    head = [element("span", "forge-tool-icon", ""),
            element("span", "forge-tool-name", text(p.tool or "(unnamed tool)")),
            (sep if title else "")
            + element("span", "forge-tool-title", text(title), title=" ".join(title.split())),
            sep + element("span", "forge-tool-state", text(state), style=chip_style)]
    if (d := duration(p)) is not None:
        head.append(sep + element("span", "forge-duration", text(seconds(d))))
    blocks = [element("div", "forge-tool-head", "".join(head))]
    if args := _args_html(p):
        blocks.append(args)
    decision = _decision(p)
    shown = person_output(p, images is not None)
    # an output that only named the images shown below it says nothing to the person
    if p.state == "completed" and shown is not None and (shown or images is None):
        out = _clip(shown or "(no output)", OUTPUT_LIMIT)
        n = shown.count("\n") + 1
        if n <= SHORT_OUTPUT_LINES and len(shown) <= SHORT_OUTPUT_CHARS:
            blocks.append(element("div", "forge-tool-output", code_block(out)))
        else:
            blocks.append(details(f"Output · {n:,} lines", code_block(out),
                                  classes="forge-tool-output"))
    if denied:
        said = text(decision_text(decision) or "Denied")
        blocks.append(element("div", "forge-tool-denied", f"<strong>{said}</strong>"))
    elif decision and decision.get("answer") in ("once", "session"):
        blocks.append(element("div", "forge-decision", f"<em>{text(decision_text(decision))}</em>"))
    if p.state == "error" and p.error:
        blocks.append(element("pre", "forge-tool-error",
                              f"<code>{escape(_clip(p.error, OUTPUT_LIMIT).rstrip(chr(10)), quote=False)}</code>"))
    if images:
        blocks.append(element("div", "forge-displays", images))
    return element("div", "forge-tool", "\n".join(blocks), style=card_style,
                   data_state=state, data_tool=p.tool or "")


def _args_html(p: ToolPart) -> str:
    if p.raw_input is not None:
        return details("Arguments (not valid JSON)", code_block(_clip(p.raw_input, ARGS_LIMIT)),
                       classes="forge-tool-args")
    if not p.input:
        return ""
    rows = []
    for key, value in p.input.items():
        name = element("span", "forge-arg-key", text(key)) + element("span", "forge-sep", ": ")
        if isinstance(value, str) and ("\n" in value or len(value) > 80):
            rows.append(element("div", "forge-arg", name + code_block(_clip(value, ARGS_LIMIT))))
        else:
            shown = json.dumps(value, ensure_ascii=False)
            rows.append(element("div", "forge-arg", name + code_span(_clip(shown, ARGS_LIMIT))))
    return details("Arguments", "\n".join(rows), classes="forge-tool-args")


def _images_html(bundles: Sequence[dict[str, Any]]) -> str | None:
    """Images a tool showed (bus-only DisplayData), kept inline so a saved notebook has them."""
    out = []
    for b in bundles:
        for mime in ("image/png", "image/jpeg", "image/gif", "image/webp"):
            data = b.get(mime)
            if not isinstance(data, str):
                continue
            src = f"data:{mime};base64,{''.join(data.split())}"
            if SAFE_IMAGE.match(src):
                alt = escape(" ".join(str(b.get("text/plain") or mime).split()))
                out.append(f'<img src="{src}" alt="{alt}">')
                break
    return "\n".join(out) or None
