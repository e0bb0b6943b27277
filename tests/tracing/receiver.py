"""An OTLP/HTTP trace receiver on loopback for the tracing tests: it decodes each
ExportTraceServiceRequest with OpenTelemetry's own proto classes and keeps the spans, flat."""

from __future__ import annotations

import gzip
import threading
import time
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


def _attributes(kvs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in kvs}


@dataclass
class Span:
    name: str
    span_id: str
    parent_id: str  # "" for a root
    trace_id: str
    kind: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    status: int  # 0 unset, 1 ok, 2 error
    start: int
    end: int
    resource: dict[str, Any] = field(default_factory=dict)
    scope: str = ""


class Receiver:
    """``with Receiver() as r:`` … ``r.endpoint`` for OTEL_EXPORTER_OTLP_ENDPOINT; ``r.spans``."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.requests = 0
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 — http.server's spelling
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                encoding = self.headers.get("Content-Encoding", "")
                if encoding == "gzip":
                    body = gzip.decompress(body)
                elif encoding == "deflate":
                    body = zlib.decompress(body)
                if self.path != "/v1/traces":
                    self.send_error(404)
                    return
                receiver.take(ExportTraceServiceRequest.FromString(body))
                out = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def take(self, request: ExportTraceServiceRequest) -> None:
        with self._lock:
            self.requests += 1
            for rs in request.resource_spans:
                resource = _attributes(rs.resource.attributes)
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        self.spans.append(Span(
                            s.name, s.span_id.hex(), s.parent_span_id.hex(), s.trace_id.hex(),
                            s.kind, _attributes(s.attributes),
                            [(e.name, _attributes(e.attributes)) for e in s.events],
                            s.status.code, s.start_time_unix_nano, s.end_time_unix_nano,
                            resource, ss.scope.name))

    def clear(self) -> None:
        with self._lock:
            self.spans.clear()

    def wait_for(self, name: str, count: int = 1, timeout: float = 20.0) -> list[Span]:
        """The spans received so far once ``count`` spans named ``name`` (its first word)
        are among them."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if sum(s.name.split(" ")[0] == name for s in self.spans) >= count:
                    return list(self.spans)
            time.sleep(0.02)
        raise AssertionError(f"no {count} {name!r} span(s) within {timeout}s: got "
                             f"{[s.name for s in self.spans]}")

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
