"""Shared fixtures. Every test gets its own parse cache folder (tests never touch the user's
cache, and never see each other's)."""
from __future__ import annotations

from functools import lru_cache

import orjson
import pytest

from resolver.haystack import BUNDLED, bundled_path


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("FACTRES_CACHE", str(tmp_path_factory.mktemp("factres-cache")))


@lru_cache(maxsize=None)
def bundled_context(size: str) -> str:
    """The context text of a bundled size ("6k", "32k", "64k", "262k")."""
    path = bundled_path(BUNDLED[size])
    if path.suffix == ".json":
        return orjson.loads(path.read_bytes())["data"][0]["context"]
    return path.read_text("utf-8")


@pytest.fixture
def context():
    return bundled_context
