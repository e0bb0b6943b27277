"""Kept images travel with an exported session and come back on import elsewhere — and an
imported file's image name can reach no file but its own (issue 27, item 3): real Forges,
real DuckDB files, the real outputs folders, a vision model on the fake server."""

from __future__ import annotations

import base64
import io
import json
import os
from pathlib import Path

import pytest

from forge_jupyter import image_files
from forge_jupyter.export import ImportFailed
from forge_jupyter.message import FilePart
from forge_jupyter.testing import Turn, tool_call

Image = pytest.importorskip("PIL.Image")


class Picture:
    def __init__(self, colour: str):
        self.colour = colour

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        Image.new("RGB", (40, 30), self.colour).save(buf, "PNG")
        return buf.getvalue()


def _forge(make_forge, tmp_path: Path, name: str, **kw):
    return make_forge(db=str(tmp_path / f"{name}.duckdb"), model="openai/gpt-4o",
                      builtin_tools=True, permissions=["python:*=allow"],
                      output_root=tmp_path / f"{name}-outputs", **kw)


def _urls(messages: list[dict]) -> list[str]:
    return [c["image_url"]["url"] for m in messages if isinstance(m.get("content"), list)
            for c in m["content"] if c.get("type") == "image_url"]


@pytest.fixture
def exported(make_forge, fake_model_server, tmp_path):
    """A session whose python call showed a picture, exported to JSON."""
    fake_model_server.add(Turn([tool_call("python", {"code": "picture"})]), Turn.text("Red."))
    source = _forge(make_forge, tmp_path, "here", namespace={"picture": Picture("red")})
    session = source.session("drawn")
    session.prompt("show it")
    path = source.export_session(session, tmp_path / "drawn.json")
    [file] = [p for p in session.messages()[1].parts if isinstance(p, FilePart)]
    return path, file, image_files.load(source.output_dir(session.id), file.image.sha256, file.mime)


@pytest.mark.parametrize("new_ids", [False, True])
def test_an_imported_session_still_has_its_image(make_forge, fake_model_server, tmp_path, exported, new_ids):
    path, file, data = exported
    doc = json.loads(path.read_text())
    assert doc["images"] == {file.image.sha256: base64.b64encode(data).decode()}
    there = _forge(make_forge, tmp_path, "there")
    imported = there.import_session(path, new_ids=new_ids)
    [kept] = [p for p in imported.messages()[1].parts if isinstance(p, FilePart)]
    assert kept.image.sha256 == file.image.sha256 and kept.session_id == imported.id
    assert image_files.load(there.output_dir(imported.id), kept.image.sha256, kept.mime) == data
    # and a vision model continuing the imported session is sent it
    fake_model_server.add(Turn.text("Still red."))
    imported.prompt("what colour was it?")
    assert _urls(fake_model_server.requests[-1].body["messages"]) == [
        "data:image/png;base64," + base64.b64encode(data).decode()]


def test_notebook_turns_carry_their_images(make_forge, fake_model_server, tmp_path):
    fake_model_server.add(Turn([tool_call("python", {"code": "picture"})]), Turn.text("Blue."))
    here = _forge(make_forge, tmp_path, "here", namespace={"picture": Picture("blue")})
    notebook = tmp_path / "analysis.ipynb"
    session = here.session("nb")
    session.prompt("show it", origin={"notebook": str(notebook), "cell_id": "c1",
                                      "execution_count": 1})
    path = here.export_notebook_turns(notebook, tmp_path / "turns.json")
    there = _forge(make_forge, tmp_path, "there")
    report = there.import_notebook_turns(path, tmp_path / "elsewhere" / "analysis.ipynb")
    [sid] = report.sessions
    [file] = [p for m in there.session(sid).messages() for p in m.parts if isinstance(p, FilePart)]
    assert image_files.load(there.output_dir(sid), file.image.sha256, file.mime) is not None


BAD_NAMES = ["../../../etc/passwd", "/etc/passwd", "..", "a" * 63, "A" * 64, "a" * 65,
             "a" * 60 + "/../", "..\\..\\x" + "a" * 58, "a" * 64 + "\n", " " + "a" * 63,
             "%2e%2e%2f" + "a" * 55, "ａ" * 64]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_an_imported_image_name_that_is_not_a_hash_imports_nothing(make_forge, tmp_path,
                                                                   exported, name):
    path, file, _ = exported
    doc = json.loads(path.read_text())
    for m in doc["messages"]:
        for p in m["parts"]:
            if p["type"] == "file":
                p["image"]["sha256"] = name
    doc["images"] = {name: base64.b64encode(b"not an image").decode()}
    path.write_text(json.dumps(doc))
    there = _forge(make_forge, tmp_path, "there")
    with pytest.raises(ImportFailed, match="is not an image hash"):
        there.import_session(path)
    assert not any((tmp_path / "there-outputs").rglob("*.png"))


@pytest.mark.parametrize("mime", ["image/svg+xml", "text/html", "../png", ""])
def test_an_imported_image_of_another_type_imports_nothing(make_forge, tmp_path, exported, mime):
    path, *_ = exported
    doc = json.loads(path.read_text())
    for m in doc["messages"]:
        for p in m["parts"]:
            if p["type"] == "file":
                p["mime"] = mime
    path.write_text(json.dumps(doc))
    with pytest.raises(ImportFailed, match="is not a kept image type"):
        _forge(make_forge, tmp_path, "there").import_session(path)


def test_imported_bytes_that_are_not_the_named_image_are_not_kept(make_forge, tmp_path, exported):
    path, file, _ = exported
    doc = json.loads(path.read_text())
    doc["images"] = {file.image.sha256: base64.b64encode(b"something else").decode()}
    path.write_text(json.dumps(doc))
    there = _forge(make_forge, tmp_path, "there")
    imported = there.import_session(path)  # the session comes in; the image does not
    assert image_files.load(there.output_dir(imported.id), file.image.sha256, file.mime) is None
    assert not any((tmp_path / "there-outputs").rglob("*.png"))


def test_a_symlink_is_never_followed_to_an_image(tmp_path):
    outputs = tmp_path / "ses"
    data = b"\x89PNG fake bytes"
    sha = image_files.digest(data)
    secret = tmp_path / "secret.png"
    secret.write_bytes(data)
    (outputs / "images").mkdir(parents=True)
    os.symlink(secret, outputs / "images" / f"{sha}.png")  # the file a link
    assert image_files.load(outputs, sha, "image/png") is None
    assert image_files.save(outputs, data, "image/png") == sha  # replaced by a real file
    assert not (outputs / "images" / f"{sha}.png").is_symlink() and secret.read_bytes() == data
    linked = tmp_path / "linked"
    linked.mkdir()
    os.symlink(outputs / "images", linked / "images")  # the folder a link
    assert image_files.load(linked, sha, "image/png") is None
    with pytest.raises(image_files.BadImageName, match="symbolic link"):
        image_files.save(linked, data, "image/png")


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_stored_image_name_that_is_not_a_hash_is_refused_at_read(tmp_path, name):
    with pytest.raises(image_files.BadImageName):
        image_files.load(tmp_path, name, "image/png")
