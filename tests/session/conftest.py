"""Helpers for the context-governance tests: what the model was shown, and distinct text."""

from __future__ import annotations

import pytest

from tests.session.support import TimelineWriter


@pytest.fixture
def rows():
    return TimelineWriter


