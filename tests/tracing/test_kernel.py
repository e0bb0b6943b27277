"""In a real kernel (nbclient, cells with ids): with tracing off neither %load_ext nor a turn
imports OpenTelemetry; %config Forge.tracing = "otlp" makes the next %%forge cell's turn a
trace whose agent span names its notebook cell."""

from __future__ import annotations

import json

import nbformat
import pytest

from forge_jupyter.testing import Turn
from tests.notebook.replay_nb import notebook, run, shown
from tests.tracing.receiver import Receiver

OTEL_MODULES = "import sys, json\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith('opentelemetry'))))"


@pytest.mark.slow
def test_a_forge_cell_with_tracing_on_exports_spans_naming_the_cell(server, tmp_path):
    server.add(Turn.text("untraced answer"), Turn.text("traced answer"))
    nb = notebook(OTEL_MODULES,
                  "%%forge\nfirst question",
                  OTEL_MODULES,
                  '%config Forge.tracing = "otlp"',
                  "%%forge\nsecond question",
                  "import forge_jupyter\nforge_jupyter.current().services.tracer.provider.force_flush()")
    nbformat.write(nb, str(tmp_path / "analysis.ipynb"))  # saved: its cells have their ids
    with Receiver() as receiver:
        done = run(nb, tmp_path, server.openai_base,
                   env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
                        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": None})
        spans = receiver.wait_for("invoke_agent")
    cells = done.cells
    assert json.loads(shown(cells[1])) == [], "%load_ext imported OpenTelemetry"
    assert "untraced answer" in shown(cells[2])
    assert json.loads(shown(cells[3])) == [], "a turn with tracing off imported OpenTelemetry"
    assert "traced answer" in shown(cells[5])
    [agent] = [s for s in spans if s.name.startswith("invoke_agent")]
    assert agent.attributes["forge.notebook.cell_id"] == cells[5].id
    assert agent.attributes["forge.notebook.path"].endswith("analysis.ipynb")
    assert isinstance(agent.attributes["forge.notebook.execution_count"], int)
    [chat] = [s for s in spans if s.name.startswith("chat")]
    assert chat.parent_id == agent.span_id
    assert agent.attributes["gen_ai.conversation.id"] == chat.attributes["gen_ai.conversation.id"]
