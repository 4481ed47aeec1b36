"""Foxglove apps on the page's port, with either name of Foxglove's WebSocket protocol.

``foxglove-sdk``'s server (the live view, :mod:`maes_sim.ros.live`) accepts only the subprotocol
``foxglove.sdk.v1``. Foxglove's WebSocket protocol was called ``foxglove.websocket.v1`` before,
and Lichtblick before December 2025, PlotJuggler and other clients still ask for that name; the
protocol itself is the same. So the page's server takes a client's WebSocket handshake,
hands it to the sdk's server (on a loopback port of its own) asking for ``foxglove.sdk.v1``,
answers the client with the name the client asked for, and from then on copies bytes both
ways: the frames are the sdk server's, untouched.
"""

from __future__ import annotations

import contextlib
import socket
import threading

__all__ = ["SUBPROTOCOLS", "chosen_subprotocol", "relay"]

#: The names of Foxglove's WebSocket protocol the page's server takes, the current one first.
SUBPROTOCOLS = ("foxglove.sdk.v1", "foxglove.websocket.v1")
#: The name foxglove-sdk's server speaks.
SDK_SUBPROTOCOL = SUBPROTOCOLS[0]
#: Bytes of the sdk server's handshake answer read at most.
MAX_ANSWER = 64 * 1024
#: Seconds the sdk server has to answer the handshake.
ANSWER_TIMEOUT_S = 10.0


def chosen_subprotocol(offered: str | None) -> str | None:
    """The subprotocol to answer a client offering ``offered`` (the header's comma-separated
    list), or None when it offers neither name: the current name when offered, else the old one.

    Examples
    --------
    >>> chosen_subprotocol("foxglove.websocket.v1")
    'foxglove.websocket.v1'
    >>> chosen_subprotocol("foxglove.websocket.v1, foxglove.sdk.v1")
    'foxglove.sdk.v1'
    >>> chosen_subprotocol("graphql-ws") is None
    True
    """
    names = {part.strip() for part in (offered or "").split(",")}
    return next((name for name in SUBPROTOCOLS if name in names), None)


def _handshake(path: str, headers: list[tuple[str, str]]) -> bytes:
    """The client's upgrade request, asking the sdk server for its own subprotocol name."""
    lines = [f"GET {path} HTTP/1.1"]
    for name, value in headers:
        if name.lower() == "sec-websocket-protocol":
            value = SDK_SUBPROTOCOL
        lines.append(f"{name}: {value}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _read_answer(backend: socket.socket) -> tuple[bytes, bytes]:
    """The sdk server's handshake answer (status line and headers) and any bytes after it."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = backend.recv(4096)
        if not chunk:
            raise ConnectionError("the live view's server closed the connection in the handshake")
        data += chunk
        if len(data) > MAX_ANSWER:
            raise ConnectionError("the live view's server answered the handshake with too much")
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _rename(head: bytes, subprotocol: str) -> bytes:
    """The answer's headers with the subprotocol the client asked for."""
    lines = head.decode("latin-1").split("\r\n")
    out = [
        f"Sec-WebSocket-Protocol: {subprotocol}"
        if line.lower().startswith("sec-websocket-protocol:")
        else line
        for line in lines
    ]
    return ("\r\n".join(out) + "\r\n\r\n").encode("latin-1")


def _pump(read, write, done: threading.Event) -> None:
    """Copy until either side ends."""
    try:
        while not done.is_set():
            data = read(65536)
            if not data:
                break
            write(data)
    except (OSError, ValueError):
        pass
    finally:
        done.set()


def relay(
    client: socket.socket,
    client_reader,
    path: str,
    headers: list[tuple[str, str]],
    subprotocol: str,
    backend_port: int,
    opened: set,
) -> None:
    """Serve one Foxglove client through the sdk server on ``127.0.0.1:backend_port``.

    Parameters
    ----------
    client : socket
        The client's connection (its handshake request already read).
    client_reader : binary file
        The buffered reader the request was read from (bytes the client sent after it are there).
    path, headers
        The request's path and headers, in order.
    subprotocol : str
        The name to answer the client with (:func:`chosen_subprotocol`).
    backend_port : int
    opened : set
        Where the open sockets are kept while the relay runs (closed by the server's ``close``).
    """
    backend = socket.create_connection(("127.0.0.1", backend_port), timeout=ANSWER_TIMEOUT_S)
    opened.add(backend)
    try:
        backend.sendall(_handshake(path, headers))
        head, rest = _read_answer(backend)
        if head.split(b"\r\n", 1)[0].split()[1:2] != [b"101"]:
            client.sendall(head + b"\r\n\r\n" + rest)  # the sdk server's refusal, as it is
            return
        backend.settimeout(None)
        client.sendall(_rename(head, subprotocol) + rest)
        done = threading.Event()
        up = threading.Thread(
            target=_pump,
            args=(client_reader.read1, backend.sendall, done),
            name="maes-foxglove-up",
            daemon=True,
        )
        up.start()
        _pump(backend.recv, client.sendall, done)
        for sock in (client, backend):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        up.join(timeout=5.0)
    finally:
        opened.discard(backend)
        backend.close()
