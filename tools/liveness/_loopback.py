"""Shared by the Python liveness test servers in this folder (tools/liveness/*.py): binds a
listener on 127.0.0.1, prints its port alone on the first line of stdout (flushed), and serves
an ASGI app with uvicorn until SIGTERM or SIGINT, or until stdin reaches end of file, so a test
that drops the child's stdin pipe (or dies) never leaves a server behind.

Tests must therefore start these servers with stdin piped and keep the pipe open while they
probe: a server started with stdin on /dev/null exits at once."""

import asyncio
import socket
import sys
import threading

import uvicorn


def listen(port: int = 0) -> socket.socket:
    """A socket listening on 127.0.0.1 (port 0: any free port)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    # Listening before the port is printed: a client that connects at once is queued until
    # uvicorn accepts, never refused.
    listener.listen(128)
    return listener


def port_of(listener: socket.socket) -> int:
    return listener.getsockname()[1]


def serve(app, listener: socket.socket) -> None:
    """Prints the port, then serves `app` on `listener` until a signal or stdin's end."""
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
    )

    def exit_at_end_of_stdin() -> None:
        try:
            while sys.stdin.buffer.read1(65536):
                pass
        except (OSError, ValueError, AttributeError):
            pass
        server.should_exit = True

    print(port_of(listener), flush=True)
    threading.Thread(target=exit_at_end_of_stdin, daemon=True).start()
    asyncio.run(server.serve(sockets=[listener]))
