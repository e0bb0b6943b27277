"""The documentation site builds strictly, its generated pages are current, the README's links land."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_docs_build_with_every_warning_an_error(tmp_path):
    # -W: a broken internal link, a missing anchor or a page outside every toctree fails the build.
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html",
         str(ROOT / "docs"), str(tmp_path / "html")],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "html" / "security.html").exists()
    assert (tmp_path / "html" / "settings.html").exists()


def test_the_settings_reference_matches_a_fresh_generation(tmp_path):
    out = tmp_path / "settings.md"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_settings_docs.py"),
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert out.read_text() == (ROOT / "docs" / "settings.md").read_text(), (
        "docs/settings.md is stale: run python scripts/gen_settings_docs.py and commit the result")


def test_every_setting_is_in_the_reference():
    from forge_jupyter.settings import SETTINGS

    text = (ROOT / "docs" / "settings.md").read_text()
    for s in SETTINGS:
        assert f"| `{s.name}` | `{s.env}` |" in text, s.name


def test_the_readme_is_a_front_door_whose_links_land():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    targets = re.findall(r"\]\(((?!https?:)[^)#\s]+)(?:#[^)]*)?\)", text)
    assert targets, "the README links nowhere"
    for target in targets:
        assert (ROOT / target).exists(), f"the README links to {target}, which does not exist"
