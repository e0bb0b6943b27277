"""``notebook_read``: the notebook the agent lives in — its cells, their sources and outputs,
what ran in which order — read by position, range, id, execution count or a search.

The reading is the notebook layer's (``notebook/cells/``): it knows the page, the saved file
and the kernel's history. The tool only names the arguments and asks the run's
``NotebookReader``; outside a notebook there is none, and the tool is not offered (its flag,
``notebook``, is set by each ``%%forge`` cell).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import ToolError
from .base import ShownImage, Tool, ToolContext, ToolResult

FLAG = "notebook"


@dataclass(frozen=True)
class NotebookReading:
    """What one read returns: the text, its title, and the images of the outputs it shows."""

    text: str
    title: str
    images: list[ShownImage] = field(default_factory=list)


class NotebookReader(Protocol):
    """Reads the current notebook for one call (``notebook.cells.reader.CellReader`` is it)."""

    async def read(self, args: dict[str, Any]) -> NotebookReading: ...


async def run_notebook_read(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    if ctx.notebook is None:
        raise ToolError("There is no notebook here: notebook_read works in a Jupyter kernel "
                        "with %load_ext forge_jupyter.")
    reading = await ctx.notebook.read(args)
    return ToolResult(reading.text, title=reading.title, images=reading.images)


def notebook_read_tool() -> Tool:
    count = {"type": "integer", "minimum": 0}
    return Tool(
        name="notebook_read",
        description=(
            "Read the notebook you run in: with no arguments, list its cells (position #, type, "
            "id, In [N], whether and when it ran, failed or not, first line); else read cells "
            "with their source and outputs (text, tables as text, HTML as text, images noted "
            "and, for a model that takes images, sent with the result, "
            "errors with their traceback), chosen by `index`, a `start`–`end` range, `id`, "
            "`execution_count` (In [N]) or `search` (text in sources and outputs). Says whether "
            "it read the live page or the saved file, and where a length budget cut something. "
            "Read-only."
        ),
        parameters={
            "type": "object",
            "properties": {
                "index": {**count, "description": "one cell by its position, from 0"},
                "start": {**count, "description": "first position of a range"},
                "end": {**count, "description": "last position of a range (inclusive)"},
                "id": {"type": "string", "maxLength": 200, "description": "a cell id"},
                "execution_count": {"type": "integer", "minimum": 1,
                                    "description": "the cell that ran as In [N]"},
                "search": {"type": "string", "maxLength": 500,
                           "description": "text to find in sources and outputs (any case)"},
                "outputs": {"type": "boolean", "default": True,
                            "description": "include outputs (default true)"},
            },
            "additionalProperties": False,
        },
        execute=run_notebook_read,
        flag=FLAG,
        argument="name",
    )
