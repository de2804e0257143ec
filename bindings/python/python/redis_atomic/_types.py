"""Type aliases shared by the package's signatures.

Durations: every duration argument takes a ``datetime.timedelta`` or a number of seconds
(``int`` or ``float``); every duration that comes back is ``float`` seconds.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Literal, Union

Seconds = Union[float, int, timedelta]
"""A duration argument: seconds, or a ``timedelta``."""

Delivery = Literal["evalsha", "functions"]
"""How scripts reach the server: ``EVALSHA`` or ``FCALL`` of a Function library."""
