"""Traces of every turn for the OpenTelemetry back ends teams run (docs/tracing.md).

Off by default, and then nothing here is imported: the ``tracing`` setting turns it on
(settings_apply.py). ``otlp``: spans go over OTLP/HTTP where the standard variables say
(``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``…_HEADERS``,
``OTEL_SERVICE_NAME``, …), batched by a processor in its own thread, so a turn never waits
on a collector and a collector that is down loses spans, never a turn. ``global``: the
process's own tracer provider (``opentelemetry-instrument``, Phoenix's ``register()``, …).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import InvalidOption

if TYPE_CHECKING:
    from ..bus import Bus
    from .spans import SpanRecorder

MODES = ("off", "otlp", "global")
INSTALL_HINT = "pip install 'forge-jupyter[otel]'"
# The GenAI instrumentations' own opt-in for message content, the only way content gets in.
CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
CLOSE_WAIT = 2.0  # seconds a closing Forge gives the last spans to leave; then they are lost


def content_wanted() -> bool:
    """Whether spans carry content (prompts, answers, tool arguments and results, scrubbed):
    the conventions' own variable, read when tracing starts or the setting is applied."""
    return os.environ.get(CONTENT_VARIABLE, "").strip().lower() in ("true", "1")


def _sdk() -> Any:
    try:
        from opentelemetry.sdk import trace as sdk_trace
    except ImportError:
        raise InvalidOption("tracing needs the OpenTelemetry SDK, which is not installed: "
                            f"{INSTALL_HINT}, then restart the kernel (or set tracing = "
                            "'off').") from None
    return sdk_trace


def otlp_provider() -> Any:
    """A tracer provider of its own exporting over OTLP/HTTP, configured by the standard
    ``OTEL_*`` variables; its batch processor exports in a background thread."""
    sdk_trace = _sdk()
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError:
        raise InvalidOption("tracing = 'otlp' needs the OTLP/HTTP exporter, which is not "
                            f"installed: {INSTALL_HINT}, then restart the kernel.") from None
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create()  # OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": "forge-jupyter"}))
    # No exit hook of the SDK's: it would wait out a down collector's export timeout; the
    # Forge's close gives the last spans CLOSE_WAIT seconds instead.
    provider = sdk_trace.TracerProvider(resource=resource, shutdown_on_exit=False)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


def _global_provider() -> Any:
    from opentelemetry import trace

    return trace.get_tracer_provider()


class Tracing:
    """Tracing while it is on: a span recorder on the bus, and the provider it exports by."""

    def __init__(self, bus: Bus, provider: Any, *, mode: str = "otlp", content: bool = False,
                 owned: bool = True) -> None:
        from .._version import __version__
        from .spans import EVENTS, SpanRecorder

        self.mode = mode
        self.provider = provider
        self.owned = owned  # a provider of its own is shut down with it; the global one is not
        self.recorder: SpanRecorder = SpanRecorder(
            provider.get_tracer("forge_jupyter", __version__), content=content)
        self._unsubscribe: Callable[[], None] | None = bus.subscribe(self.recorder, types=EVENTS)

    @property
    def content(self) -> bool:
        return self.recorder.content

    @content.setter
    def content(self, on: bool) -> None:
        self.recorder.content = on

    def close(self) -> None:
        """Stop recording; the last spans leave within CLOSE_WAIT seconds or are lost."""
        if self._unsubscribe is None:
            return
        self._unsubscribe()
        self._unsubscribe = None
        self.recorder.close()
        if self.owned and hasattr(self.provider, "shutdown"):
            # in a thread of its own: a collector that is down holds an export until its
            # timeout, and a Forge closing (a kernel exiting) must not wait for that
            done = threading.Thread(target=self.provider.shutdown, daemon=True,
                                    name="forge-tracing-shutdown")
            done.start()
            done.join(CLOSE_WAIT)


def start(bus: Bus, mode: str, *, content: bool = False) -> Tracing | None:
    """Tracing in ``mode`` (one of MODES) on ``bus``; None for ``off``."""
    if mode == "off":
        return None
    if mode == "otlp":
        return Tracing(bus, otlp_provider(), mode=mode, content=content)
    if mode == "global":
        _sdk()  # the API alone gives a provider that drops every span: say so now
        return Tracing(bus, _global_provider(), mode=mode, content=content, owned=False)
    raise InvalidOption(f"tracing = {mode!r} is not one of {', '.join(MODES)}: set "
                        "Forge.tracing to 'otlp' (or 'global' for the process's own provider).")


def switch(current: Tracing | None, bus: Bus, mode: str) -> Tracing | None:
    """The tracing the setting now asks for: ``current`` kept when the mode is the same (the
    content switch read again), else closed and a new one started."""
    if not isinstance(mode, str) or mode not in MODES:
        raise InvalidOption(f"tracing = {mode!r} is not one of {', '.join(MODES)}: set "
                            "Forge.tracing to 'otlp' (or 'global' for the process's own "
                            "provider).")
    content = content_wanted()
    if current is not None and current.mode == mode:
        current.content = content
        return current
    fresh = start(bus, mode, content=content)  # a refusal (no SDK) leaves the old one running
    if current is not None:
        current.close()
    return fresh
