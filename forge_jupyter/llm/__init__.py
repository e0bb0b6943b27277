"""The litellm adapter: system + messages + tool table in, typed stream events out.

``request``: the session's Messages in litellm's format, and one call's arguments ·
``call``: the streamed call (``stream``) and a silent server's timeout · ``chunks``: litellm
chunks → stream events · ``events``: those events · ``usage``: tokens, local counts and cost ·
``loading``: litellm itself, imported on first use (never at ``import forge_jupyter``).
"""

from .call import model_output, stream, timed_out, timeout_error, unfinished_step
from .chunks import ChunkNormalizer, finish_name
from .events import (
    Citation,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    ServerToolCall,
    ServerToolResult,
    StepFinish,
    StreamEvent,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCall,
    ToolInputStart,
)
from .loading import counting, litellm
from .request import LLMRequest, provider_of, to_model_messages
from .request_images import ImageSending
from .usage import (
    CHARS_PER_TOKEN,
    approx_tokens,
    context_window,
    count_tokens,
    estimated_usage,
    input_price,
    output_price,
    step_cost,
    tokens_from_usage,
)

__all__ = [
    "CHARS_PER_TOKEN", "ChunkNormalizer", "Citation", "ImageSending", "LLMRequest", "ReasoningDelta", "ReasoningEnd",
    "ServerToolCall", "ServerToolResult",
    "ReasoningStart", "StepFinish", "StreamEvent", "TextDelta", "TextEnd", "TextStart", "ToolCall",
    "ToolInputStart", "approx_tokens", "context_window", "count_tokens", "counting", "estimated_usage",
    "finish_name", "input_price", "litellm", "model_output", "output_price", "provider_of", "step_cost", "stream",
    "timed_out", "timeout_error", "to_model_messages", "tokens_from_usage", "unfinished_step",
]
