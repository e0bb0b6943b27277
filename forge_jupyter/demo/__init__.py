"""The offline demo model: what a notebook with no API key and no local model talks to.

``model_choice.resolve`` falls back to it: a `DemoServer` on loopback that litellm reaches like
any OpenAI-compatible server, answering by the rules of `responder.py` (find the DataFrame,
compute with one `sql` or `python` call, answer from its result) and saying so once a turn,
in its answer. It is free: `llm/usage.py` prices it at $0.

- `responder.py` — the rules: one request in, one Turn out
- `intents.py`, `plans.py`, `reading.py` — what is asked, the tool call that answers it, and
  what the conversation so far holds
- `turn.py` — a Turn: text, reasoning and tool calls, protocol-neutral
- `wire.py` — a Turn as OpenAI chunks or Anthropic message events
- `server.py` — the loopback HTTP server (``forge_jupyter.testing`` builds its fake on it)
"""

from .responder import ANNOUNCEMENT, demo_turn
from .server import DemoServer

DEMO_MODEL = "openai/forge-demo"  # the name litellm is given for it (model_choice.py)

__all__ = ["ANNOUNCEMENT", "DEMO_MODEL", "DemoServer", "demo_turn"]
