"""The builtin, notebook-native tools (one file each in this folder)."""

from __future__ import annotations

from .base import Tool


def builtin_tools() -> list[Tool]:
    from .apply_patch import apply_patch_tool
    from .edit import edit_tool
    from .glob import glob_tool
    from .grep import grep_tool
    from .history import history_tool
    from .list import list_tool
    from .notebook_edit import notebook_edit_tools
    from .notebook_read import notebook_read_tool
    from .notebook_run import notebook_run_tool
    from .python import python_tool
    from .question import question_tool
    from .read import read_tool
    from .sql import sql_tool
    from .task import task_tool
    from .variables import variables_tool
    from .webfetch import webfetch_tool
    from .write import write_tool

    return [python_tool(), variables_tool(), sql_tool(), read_tool(), list_tool(), glob_tool(),
            grep_tool(), write_tool(), edit_tool(), apply_patch_tool(), history_tool(), task_tool(),
            webfetch_tool(), question_tool(), notebook_read_tool(), *notebook_edit_tools(),
            notebook_run_tool()]
