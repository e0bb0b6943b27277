"""``%forge memory …`` and ``%config Forge.memory_*`` in a real kernel (issue 15)."""

from __future__ import annotations

import pytest

from tests.notebook.nb_kernel import forge_kernel, usage_error


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("nb")


@pytest.fixture(scope="module")
def kernel(model_server, root):
    k = forge_kernel(model_server.openai_base, root,
                     {"OPENAI_API_KEY": "", "GEMINI_API_KEY": "", "FORGE_MEMORY_DIR": ""})
    yield k
    k.close()


def test_the_folder_is_beside_the_notebook_and_searched_as_a_dataframe(kernel, root):
    r = kernel.run("%forge memory path")
    assert r.stdout.strip() == str(root / ".forge" / "memory")
    folder = root / ".forge" / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("# Facts\n\nAna Ortiz owns the churn model.\n")
    r = kernel.run("_m = %forge memory search who owns the churn model -k 3\n"
                   "print(list(_m.columns), [str(t) for t in _m.dtypes[1:4]])\n"
                   "print(_m.file[0], _m.start_line[0], _m.end_line[0])")
    assert r.status == "ok", r.text
    assert "Keyword-only search: no embedding model is configured for the server at api_base" in r.stdout
    assert "['file', 'start_line', 'end_line', 'score', 'snippet'] ['int64', 'int64', 'float64']" in r.stdout
    assert "MEMORY.md 1 3" in r.stdout
    r = kernel.run("%forge memory get MEMORY.md 3")
    assert r.stdout == "     3\tAna Ortiz owns the churn model.\n"


def test_config_moves_the_folder_and_turns_vectors_on(kernel, root, model_server):
    other = root / "team-memory"
    other.mkdir()
    (other / "notes.md").write_text("The deploy runs make release.\n")
    kernel.run("%config Forge.memory_dir = 'team-memory'\n"
               "%config Forge.memory_embedding_model = 'openai/fake-embedding'")
    r = kernel.run("%forge memory path\n_m = %forge memory search deploy release\n"
                   "print(_m.attrs['mode'], _m.file.tolist())")
    assert r.status == "ok", r.text
    assert str(other) in r.stdout and "hybrid ['notes.md']" in r.stdout
    assert model_server.embedding_requests[-1]["input"] == ["deploy release"]
    assert (other / "MEMORY.md").exists()  # created from the template on first use
    r = kernel.run("%forge memory sync")
    assert "0 file(s) indexed" in r.stdout and "2 unchanged" in r.stdout
    kernel.run("%config Forge.memory_dir = ''\n%config Forge.memory_embedding_model = ''")


@pytest.mark.parametrize("line", ["memory get ../forge.duckdb", "memory get /etc/passwd",
                                  "memory bogus", "memory", "memory search", "memory search x -k y"])
def test_bad_memory_commands_are_usage_messages(kernel, line):
    r = kernel.run(f"%forge {line}")
    assert r.status == "error" and usage_error(r), r.text
    assert "Traceback" not in r.stderr


def test_memory_can_be_turned_off_from_config(kernel):
    kernel.run("%config Forge.memory_long_term = False")
    r = kernel.run("%forge memory path")
    assert r.status == "error" and usage_error(r) and "Forge.memory_long_term" in r.stderr
    kernel.run("%config Forge.memory_long_term = True")
    assert kernel.run("%forge memory path").status == "ok"
