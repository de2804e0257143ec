"""Unions of the result values each operation may return (for annotations and ``match``)."""

from __future__ import annotations

from typing import Union

from ._native import Allowed, Applied, Kept, Limited, Raised, Refused, Stale, Written

Decision = Union[Allowed, Limited]
"""A rate-limit decision: ``Allowed(remaining, reset_after)`` or ``Limited(retry_after,
reset_after)``. Truthy exactly when allowed."""

BoundedAdd = Union[Applied, Refused]
"""A bounded add: ``Applied(value)`` or ``Refused(value)``."""

RaiseResult = Union[Raised, Kept]
"""A monotonic max: ``Raised(value)`` or ``Kept(value)``."""

FencedResult = Union[Written, Stale]
"""A fenced write: ``Written(fence, writes)`` or ``Stale(highest)``."""
