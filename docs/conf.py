"""Sphinx configuration of forge-jupyter's documentation (MyST Markdown, the PyData theme).

Built strictly — every warning is an error, internal links and anchors are checked:
    python -m sphinx -W --keep-going -n -b html docs docs/_build/html
"""

project = "forge-jupyter"
author = "forge-jupyter contributors"
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# `[text](page.md#a-heading)` links are checked against the headings' generated anchors.
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]
# Cross-references whose target is missing are warnings (-W: errors), never silent links.
nitpicky = True
suppress_warnings: list[str] = []

html_theme = "pydata_sphinx_theme"
html_title = "forge-jupyter"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_static_path: list[str] = []
