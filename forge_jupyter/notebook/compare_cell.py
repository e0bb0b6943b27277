"""``%%forge --compare m1,m2,…``: the cell's prompt to each model, answers side by side.

Run All replays a compared cell like any other (docs/replay.md): the latest comparison this
cell ran of the same prompt with the same models is shown again from the store, every column,
asking no model; ``--live`` asks them again, ``--replay`` fails when there is nothing to
replay. The cell's value is the comparison's DataFrame; its view's "Continue here" (or
``%forge use``) makes a fork the notebook's current session.
"""

from __future__ import annotations

import argparse
from typing import Any

from IPython.core.error import UsageError
from IPython.display import display

from ..errors import ForgeError


async def run_compare(controller: Any, opts: argparse.Namespace, session: Any, text: str,
                      origin: dict[str, Any], context: str | None) -> Any:
    from ..comparison import comparison_of
    from ..session.compare import check_models, compare_async, recorded
    from .compare_view import CompareView

    try:
        models = check_models(opts.compare)
    except ForgeError as exc:
        raise UsageError(str(exc)) from None
    columns = None
    if not opts.live:
        columns = recorded(session, text, models, origin)
        if columns is None and opts.replay:
            raise UsageError(
                "--replay: this cell has no recorded comparison of this prompt with "
                f"{', '.join(models)}; run it without --replay (or with --live) to ask them")
    if columns is None:
        if controller.warmup is not None:
            await controller.warmup.wait()
        shown = display(f"Asking {len(models)} models side by side: {', '.join(models)} …",
                        display_id=True)
        try:
            columns = await compare_async(session, text, models, agent=opts.agent,
                                          budget=opts.budget, max_tokens=opts.max_tokens,
                                          origin=origin, context=context)
        except ForgeError as exc:
            raise UsageError(str(exc)) from None
        finally:
            if shown is not None:
                shown.update("")  # the comparison below says the rest

    def use(session_id: str) -> None:  # the button then reads "Continuing here"
        controller.use(controller.find(session_id))

    frame = comparison_of(columns, on_use=controller.use)
    if controller.config.widget != "off":
        frame.view = CompareView(frame, use)
    return frame
