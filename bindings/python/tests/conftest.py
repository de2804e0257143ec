"""Shared fixtures: clients on the plugin's private server (``redis_url``, from
``redis_atomic.testing``, registered by the package's ``pytest11`` entry point)."""

from __future__ import annotations

from typing import Iterator

import pytest

import redis_atomic as ra


@pytest.fixture
def client(redis_url: str) -> Iterator[ra.Client]:
    yield ra.connect(redis_url)
