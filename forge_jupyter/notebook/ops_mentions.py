"""The side panel's messages for pointing at things (notebook/mentions/), part of the protocol
``ops.py`` declares (its unions name them): the box's ``complete`` after an ``@``, the kernel's
``completions`` answer, and a pasted ``image`` sent ahead of the prompt naming it."""

from typing import Literal

# typing_extensions' TypedDict: pydantic reads it on Python 3.11 (typing's only from 3.12).
from typing_extensions import TypedDict


class Completion(TypedDict):
    insert: str  # what follows the @ in the box once the entry is taken
    detail: str


class Completions(TypedDict):  # the kernel's answer to complete (notebook/mentions/complete.py)
    kind: Literal["completions"]
    request_id: str
    query: str
    items: list[Completion]


class Complete(TypedDict):  # what the box may offer after the @ the person types (query)
    type: Literal["complete"]
    request_id: str
    query: str


class PanelImage(TypedDict):
    """A pasted image, sent ahead of the prompt naming it (``--image <image_id>``)."""
    type: Literal["image"]
    image_id: str
    mime: str
    data: str
