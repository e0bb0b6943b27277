"""forge_jupyter.testing — a fake model server that litellm reaches over real HTTP.

    from forge_jupyter.testing import FakeModelServer, Turn, text, tool_call
    with FakeModelServer([Turn([text("Hi"), tool_call("python", {"code": "1+1"})])]) as server:
        litellm.completion(messages=..., stream=True, **server.model_kwargs("openai"))

Standard library only; nothing here imports litellm. The server is the offline demo model's
(``forge_jupyter.demo``) with a script, faults, recorded streams and embeddings added; this
package is test support, the demo model is product code.
"""

from forge_jupyter.demo import ANNOUNCEMENT as DEMO_ANNOUNCEMENT
from forge_jupyter.testing.server import FakeModelServer, RecordedRequest
from forge_jupyter.testing.turns import (
    DEFAULT_CHUNK,
    Delay,
    Drop,
    HttpError,
    Reasoning,
    Text,
    ToolCall,
    Turn,
    Usage,
    delay,
    drop,
    http_error,
    reasoning,
    text,
    tool_call,
)

__all__ = [
    "DEFAULT_CHUNK",
    "DEMO_ANNOUNCEMENT",
    "Delay",
    "Drop",
    "FakeModelServer",
    "HttpError",
    "Reasoning",
    "RecordedRequest",
    "Text",
    "ToolCall",
    "Turn",
    "Usage",
    "delay",
    "drop",
    "http_error",
    "reasoning",
    "text",
    "tool_call",
]
