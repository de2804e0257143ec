"""One native ``Sink`` per asyncio event loop: where finished calls wait for the loop's thread
to set their results (see ``src/sink.rs``). Registered with ``loop.add_reader`` on first use."""

from __future__ import annotations

import asyncio
import weakref
from typing import Tuple

from ._native import Sink

_SINKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Sink] = weakref.WeakKeyDictionary()


def sink() -> Tuple[asyncio.AbstractEventLoop, Sink]:
    """The running loop and its sink, created and registered on first use."""
    loop = asyncio.get_running_loop()
    found = _SINKS.get(loop)
    if found is None:
        found = Sink()
        loop.add_reader(found.fileno(), found.drain)
        _SINKS[loop] = found
    return loop, found
