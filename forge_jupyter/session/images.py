"""The images a tool call showed, kept for the model: fitted, stored once, named by a file part.

After a call completes, each image it showed (``ToolResult.images``) is fitted to the run's
image limits (llm/images.py: bounded, scaled, re-encoded), kept by content hash in the
session's outputs (image_files.py: two identical charts are one file) and recorded as a
``FilePart`` of the call's message naming the hash and the call — never the bytes. The request
builder (llm/request.py) sends them to a vision model from there. An image that cannot be
kept (an SVG, a decompression bomb, a damaged file) is said so in the call's output when the
run's model has vision, so it knows why it sees no picture; a model without vision reads the
call's text line as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from .. import image_files
from ..llm.images import FittedImage, RefusedImage, fit, supports_vision
from ..message import FilePart, KeptImage, Message, Part, TextPart, ToolPart
from ..tools.base import ShownImage
from .context import RunContext


def _fit_and_save(images: list[ShownImage], ctx: RunContext
                  ) -> list[tuple[ShownImage, FittedImage | RefusedImage, str | None]]:
    kept = []
    for image in images:
        fitted = fit(image.data, image.mime, ctx.images)
        sha = None
        if isinstance(fitted, FittedImage) and ctx.output_dir is not None:
            try:
                sha = image_files.save(ctx.output_dir, fitted.data, fitted.mime)
            except (OSError, image_files.BadImageName) as exc:
                fitted = RefusedImage(fitted.mime, f"it could not be kept ({exc})")
        kept.append((image, fitted, sha))
    return kept


def carry_image(ctx: RunContext, recorded: FilePart, copy: Part) -> None:
    """A replayed turn's copy of a recorded image part, its bytes kept in this session's
    outputs too (the recording may be another session's); written only if they are there."""
    if recorded.image is None or ctx.output_dir is None:
        return
    data = ctx.image_sending().read(recorded)
    if data is None:
        return
    image_files.save(ctx.output_dir, data, recorded.mime)
    ctx.writer.update_part(copy)


async def pasted_images(ctx: RunContext, user: Message, images: Sequence[tuple[bytes, str]]
                        ) -> list[Part]:
    """The images pasted with a prompt, as parts of its user message: each fitted to the run's
    limits and kept by hash like a tool's (``call_id`` ""), or a synthetic line saying why it
    is not attached. What a model without vision reads of them is request.py's."""
    if not images:
        return []
    kept = await asyncio.to_thread(
        _fit_and_save, [ShownImage(data, mime, f"pasted {mime}") for data, mime in images], ctx)
    parts: list[Part] = []
    for n, (_image, fitted, sha) in enumerate(kept, 1):
        if isinstance(fitted, FittedImage) and sha is not None:
            parts.append(FilePart(session_id=user.session_id, message_id=user.id,
                                  mime=fitted.mime, filename=f"pasted {fitted.label}",
                                  image=KeptImage(sha256=sha, call_id="", width=fitted.width,
                                                  height=fitted.height)))
        else:
            reason = fitted.reason if isinstance(fitted, RefusedImage) else "it could not be kept"
            parts.append(TextPart(session_id=user.session_id, message_id=user.id, synthetic=True,
                                  text=f"[pasted image {n} is not attached: {reason}]"))
    return parts


async def keep_images(ctx: RunContext, part: ToolPart, images: list[ShownImage]
                      ) -> tuple[list[FilePart], list[str]]:
    """Keep the images ``part``'s call showed: the file parts naming them (to be written after
    the call's row), and the lines its output gains — why an image is not sent to this run's
    vision model; none for a model without vision."""
    if not images:
        return [], []
    # decoding and scaling an image takes a while: not on the kernel's event loop
    kept = await asyncio.to_thread(_fit_and_save, images, ctx)
    files, notes = [], []
    for n, (image, fitted, sha) in enumerate(kept, 1):
        if isinstance(fitted, FittedImage) and sha is not None:
            files.append(FilePart(
                session_id=part.session_id, message_id=part.message_id, mime=fitted.mime,
                filename=fitted.label, image=KeptImage(
                    sha256=sha, call_id=part.call_id, width=fitted.width, height=fitted.height)))
        elif isinstance(fitted, RefusedImage):
            notes.append(f"[image {n} ({image.label}) is not sent to you: {fitted.reason}]")
    return files, (notes if notes and supports_vision(ctx.model) else [])
