"""Notebook cells that define forge tools, shared by the kernel tests (tests/notebook) and the
browser tests (tests/browser): one source for each, so every suite drives the same tool."""

from __future__ import annotations

# A mutating tool (the build agent asks before each call), defined in a notebook cell.
NOTE_TOOL = '''import forge_jupyter

@forge_jupyter.tool(mutating=True)
def write_note(text: str) -> str:
    """Append a line to notes.txt."""
    with open("notes.txt", "a") as f:
        f.write(text + "\\n")
    return f"wrote {text!r}"
'''

# Two read-only tools: one says its text back, one fails with it as the reason.
ECHO_AND_FAIL_TOOLS = '''import forge_jupyter

@forge_jupyter.tool
def echo(text: str) -> str:
    """Say the text back."""
    return text

@forge_jupyter.tool
def fail(text: str) -> str:
    """Fail with the text as the reason."""
    raise ValueError(text)
'''
