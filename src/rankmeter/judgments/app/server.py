"""Serving the rating app: uvicorn (its h11 protocol) on a socket the caller listens on, every
request bounded in time.

uvicorn bounds the size of a request's head (``h11_max_incomplete_event_size``) and the idle
time between two requests of a connection (``timeout_keep_alive``), but not the time a client
takes to send a request: a connection that sends half a request line, or nothing, would stay
open as long as the client likes, and a few hundred of them hold every file descriptor. Here a
request, from its first byte (or from the connection's opening) to its last, has
``request_timeout`` seconds; a connection that has not sent a whole request by then is closed.
That holds for a request pipelined behind another one too (its bytes arrive while the first is
answered, and h11 keeps them until the next cycle starts).

Stopping (SIGINT, SIGTERM): uvicorn waits for the requests in progress to end. A connection
whose request is not all here yet is closed at once (its handler sees the client gone and
answers nothing), and the wait is bounded by ``SHUTDOWN_TIMEOUT`` seconds in any case.
"""

from __future__ import annotations

import asyncio
import socket
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = ["MAX_HEAD_BYTES", "REQUEST_TIMEOUT", "SHUTDOWN_TIMEOUT", "serve"]

#: Seconds a client has to send a whole request (its head and its body).
REQUEST_TIMEOUT = 10.0
#: The longest request head (request line and headers) read: uvicorn answers 400 beyond it.
MAX_HEAD_BYTES = 16 * 1024
#: Seconds a stopping server waits for the requests in progress (a database write) to end.
SHUTDOWN_TIMEOUT = 5


def serve(
    app: Starlette, listener: socket.socket, *, request_timeout: float = REQUEST_TIMEOUT
) -> None:
    """Serve ``app`` on the listening socket ``listener`` until interrupted (SIGINT, SIGTERM)."""
    import uvicorn

    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        http=_bounded_protocol(request_timeout),
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        timeout_graceful_shutdown=SHUTDOWN_TIMEOUT,
    )
    uvicorn.Server(config).run(sockets=[listener])


def _bounded_protocol(request_timeout: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, with a deadline for each request to arrive whole."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    received = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR)

    class BoundedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()  # a connection that sends nothing is bounded too

        def data_received(self, data: bytes) -> None:
            if self.conn.their_state is h11.IDLE or self.conn.their_state in received:
                self._arm()  # the first bytes of a request (maybe one pipelined behind another)
            super().data_received(data)
            self._settle()

        def on_response_complete(self) -> None:
            super().on_response_complete()  # starts the next cycle: a pipelined request's turn
            self._settle()

        def shutdown(self) -> None:
            cycle = self.cycle
            if (
                cycle is not None
                and not cycle.response_complete
                and self.conn.their_state not in received
            ):
                # Its request is not all here: nothing to finish, and waiting on the client
                # would hold the server up. The handler sees a disconnect.
                self.transport.close()
                return
            super().shutdown()

        def _whole(self) -> bool:
            """Whether the request of this cycle, or the connection's next one, is all here
            (or none has begun)."""
            state = self.conn.their_state
            if state in (h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
                return True  # no request follows
            return state in (h11.IDLE, h11.DONE) and not self.conn.trailing_data[0]

        def _settle(self) -> None:
            if self._whole():
                self._disarm()
            else:
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._deadline is None:
                self._deadline = self.loop.call_later(request_timeout, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                self.transport.close()

    return BoundedH11Protocol
