"""``%%forge --compare m1,m2,…``: the cell's prompt to each model, answers side by side.

Run All replays a compared cell like any other (docs/replay.md): the latest comparison this
cell ran of the same prompt with the same models is shown again from the store, every column,
asking no model; ``--live`` asks them again, ``--replay`` fails when there is nothing to
replay. The cell's value is the comparison's DataFrame; its view's "Continue here" (or
``%forge use``) makes a fork the notebook's current session.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError
from IPython.display import clear_output, display

from ..errors import ForgeError
from .cell_options import CELL_USAGE
from .mentions.grammar import MentionError, Parsed


async def run_compare(controller: Any, opts: argparse.Namespace, text: str,
                      session_of: Callable[[], tuple[Any, Any]], pointed: Parsed) -> Any:
    from ..comparison import comparison_of
    from ..session.compare import check_models, compare_async, recorded
    from ..tools.notebook_read import FLAG as NOTEBOOK_FLAG
    from .compare_view import CompareView

    if opts.background or opts.panel or opts.model or opts.tools:
        raise UsageError("--compare names the models itself and runs in the cell: leave out "
                         f"--async, --panel, -m and --tools\nusage: {CELL_USAGE}")
    try:
        models = check_models(opts.compare)
    except ForgeError as exc:
        raise UsageError(str(exc)) from None
    if controller.warmup is not None:
        await controller.warmup.core()
    session, forge = session_of()
    forge.flags = forge.flags | {NOTEBOOK_FLAG}  # reading the notebook changes nothing
    origin = controller.origin()
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
        display({"text/plain": f"Asking {len(models)} models side by side: "
                 f"{', '.join(models)} …"}, raw=True)
        try:  # what the prompt points at, read once for every model (pointing.py)
            attached = (await controller.attachments(session, pointed.mentions)
                        if pointed.mentions else [])
            columns = await compare_async(session, text, models, agent=opts.agent,
                                          budget=opts.budget, max_tokens=opts.max_tokens,
                                          origin=origin, context=controller.context_note(origin),
                                          attachments=attached)
        except (ForgeError, MentionError) as exc:
            raise UsageError(str(exc)) from None
        finally:
            clear_output(wait=True)  # the comparison, when it shows, says the rest

    def use(session_id: str) -> None:  # the button then reads "Continuing here"
        controller.use(controller.find(session_id))

    frame = comparison_of(columns, on_use=controller.use)
    if controller.config.widget != "off":
        frame.view = CompareView(frame, use)
    return frame
