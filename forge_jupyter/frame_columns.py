"""The columns and dtypes of every DataFrame of the history API (frames.py): stable whether a
result is empty or not — timestamps ``datetime64[us, UTC]``, token counts ``int64`` (``Int64``
where they may be missing), costs ``float64``, ids and names pandas strings."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

# dtype codes of the column specs below; strings are pandas' own string dtype ("str" from
# pandas 3 on, where it is the default; "string" before, where astype(str) would write "None")
_STRING = "str" if int(pd.__version__.split(".")[0]) >= 3 else "string"
_DTYPES = {
    "str": _STRING, "int": "int64", "Int": "Int64", "float": "float64", "bool": "bool",
    "boolean": "boolean", "time": "datetime64[us, UTC]",
}


def _spec(text: str) -> dict[str, str]:
    """``"name:code name:code …"`` → {column: pandas dtype}, in order."""
    return {name: _DTYPES[code] for name, code in (item.split(":") for item in text.split())}


_TOKENS = ("tokens_input:int tokens_output:int tokens_reasoning:int tokens_cache_read:int "
           "tokens_cache_write:int")

SESSIONS = _spec(
    "session_id:str name:str title:str agent:str model:str models:str directory:str parent_id:str "
    "forked_from_session:str forked_from_message:str created_at:time updated_at:time "
    "messages:int steps:int tokens_input:int tokens_output:int cost:float"
)
MESSAGES = _spec(
    "message_id:str session_id:str role:str parent_id:str agent:str model:str provider:str "
    "status:str finish:str summary:bool error_type:str error_message:str "
    f"{_TOKENS} tokens_estimated:bool cost:float created_at:time completed_at:time "
    "duration_s:float notebook:str cell_id:str execution_count:Int replay_of:str"
)
PARTS = _spec(
    "part_id:str session_id:str message_id:str type:str text:str tool:str tool_state:str "
    "call_id:str tokens_input:Int tokens_output:Int tokens_reasoning:Int tokens_cache_read:Int "
    "tokens_cache_write:Int tokens_estimated:boolean cost:float time_start:time time_end:time "
    "created_at:time data:str"
)
TOOL_CALLS = _spec(
    "part_id:str session_id:str message_id:str call_id:str tool:str state:str agent:str "
    "model:str time_start:time time_end:time duration_s:float input:str input_bytes:Int "
    "output_bytes:Int error:str title:str created_at:time"
)
COMPACTIONS = _spec(
    "event_id:str session_id:str created_at:time actor:str reason:str auto:boolean "
    "extractive:boolean tokens_before:Int tokens_after:Int request_message_id:str "
    "summary_message_id:str tail_start:str boundary_pos:Int"
)
CONTEXT = _spec(
    "session_id:str step:int pos:int message_id:str part_id:str created_at:time agent:str "
    "model:str summarizing:bool tokens_input:int tokens_output:int tokens_cache_read:int "
    "tokens_cache_write:int cost:float compactions:int compaction_pos:Int view_start:int"
)
TURNS = _spec(
    "message_id:str session_id:str kind:str prompt:str notebook:str cell_id:str "
    "execution_count:Int started_at:time finished_at:time duration_s:float "
    f"assistant_messages:int status:str steps:int tool_calls:int tool_errors:int {_TOKENS} "
    "cost:float"
)
HISTORY = _spec(
    "pos:int message_id:str written_by:str role:str parent_id:str agent:str model:str "
    "status:str finish:str summary:bool is_boundary:bool created_at:time completed_at:time "
    "tokens_input:int tokens_output:int cost:float text:str tool_calls:int "
    "visible_to_model:bool"
)
EVENTS = _spec("event_id:str session_id:str type:str actor:str created_at:time data:str")
MEMORY_HITS = _spec("file:str start_line:int end_line:int score:float snippet:str")

_TOTALS = _spec(f"steps:int {_TOKENS} cost:float unpriced_steps:int")

# costs(by=…): the grouping columns of each key, as (SQL expression, column name, dtype code)
COST_KEYS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "session": (("c.session_id", "session_id", "str"), ("s.name", "name", "str")),
    "day": (("date_trunc('day', timezone('UTC', c.created_at))", "day", "time"),),
    "model": (("c.model", "model", "str"),),
    "agent": (("c.agent", "agent", "str"),),
    "cell": (("c.notebook", "notebook", "str"), ("c.cell_id", "cell_id", "str")),
    # a replayed turn's steps (message.replay_of set) cost $0: live and replayed side by side
    "replayed": (("c.replay_of IS NOT NULL", "replayed", "bool"),),
}


def cost_spec(by: str | Sequence[str]) -> dict[str, str]:
    """The columns and dtypes of ``costs(by=…)``: the grouping keys, then the totals."""
    keys = [by] if isinstance(by, str) else list(by)
    unknown = [k for k in keys if k not in COST_KEYS]
    if unknown or not keys:
        raise ValueError(f"costs(by=…) takes one or more of {', '.join(COST_KEYS)}; "
                         f"got {by!r}")
    return {name: _DTYPES[code] for k in keys for _, name, code in COST_KEYS[k]} | _TOTALS
