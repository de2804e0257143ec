"""The verify driver protocol's loop, for drivers written in Python (docs/verify.md, "Drivers").

`redis-atomic verify --driver CMD` starts CMD once per worker and speaks to it in JSON lines:
a `hello` (where the server is, the row, its namespace, the fault injected meanwhile), then one
request at a time — `{"op": "lock.acquire", "args": {...}}` — each answered with one line:
`{"outcome": word, ...}` or `{"error": code}`, words and codes of conformance/vocabulary.json.
A driver's own bug is not an answer: the exception propagates, the process exits with its
traceback on stderr, and the harness reports the row as an error quoting it.

A handler gives `hello(msg) -> dict` and `run(op, args) -> dict` (a coroutine for `serve_async`);
`codes` maps the exceptions its client raises to error codes (None: not a client error, re-raise).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, Awaitable, Callable, Optional, Protocol

Message = dict[str, Any]
Codes = Callable[[BaseException], Optional[str]]


class Handler(Protocol):
    def hello(self, msg: Message) -> Message: ...

    def run(self, op: str, args: Message) -> Message: ...


class AsyncHandler(Protocol):
    async def hello(self, msg: Message) -> Message: ...

    async def run(self, op: str, args: Message) -> Message: ...


def _answer(call: Callable[[], Message], codes: Codes) -> Message:
    try:
        return call()
    except Exception as e:  # noqa: BLE001 (classified, or re-raised)
        code = codes(e)
        if code is None:
            raise
        return {"error": code}


def serve(handler: Handler, codes: Codes) -> None:
    """Answers the harness until stdin closes."""
    for line in sys.stdin:
        msg: Message = json.loads(line)
        if msg["op"] == "hello":
            answer = handler.hello(msg)
        else:
            op, args = msg["op"], msg.get("args", {})
            answer = _answer(lambda: handler.run(op, args), codes)
        print(json.dumps(answer), flush=True)


def serve_async(handler: AsyncHandler, codes: Codes) -> None:
    """`serve` for an asyncio client: every request on one event loop."""
    loop = asyncio.new_event_loop()

    def wait(coro: Awaitable[Message]) -> Message:
        return loop.run_until_complete(coro)

    for line in sys.stdin:
        msg: Message = json.loads(line)
        if msg["op"] == "hello":
            answer = wait(handler.hello(msg))
        else:
            op, args = msg["op"], msg.get("args", {})
            answer = _answer(lambda: wait(handler.run(op, args)), codes)
        print(json.dumps(answer), flush=True)
    loop.close()
