"""Type aliases shared by the package's signatures.

Durations: every duration argument takes a ``datetime.timedelta`` or a number of seconds
(``int`` or ``float``); every duration that comes back is ``float`` seconds.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Literal, Union

Seconds = Union[float, int, timedelta]
"""A duration argument: seconds, or a ``timedelta``."""

Delivery = Literal["eval", "functions", "evalsha", "fcall"]
"""How scripts reach the server: ``"eval"`` (``EVALSHA``) or ``"functions"`` (``FCALL`` of a
Function library); ``"evalsha"`` and ``"fcall"`` are accepted spellings of the same two (the
library parses them)."""
