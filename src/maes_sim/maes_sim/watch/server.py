"""The page's HTTP server: the page itself, its data, and Foxglove apps on the same port.

``GET /`` and the files beside it (``static/``: HTML, JavaScript and CSS written for this
project, nothing fetched from the internet), ``GET /api/scene`` and ``GET /api/frame`` (the
feed's JSON, :mod:`.wire`), ``POST /api/control`` (pause, resume, speed), and a WebSocket
upgrade asking for Foxglove's protocol (either name, :mod:`.foxglove_relay`) goes to the live
view's Foxglove server. Python's ``http.server`` on threads of its own: a request is served
from what the feed sampled, so a slow or stuck page never holds the run up.
"""

from __future__ import annotations

import contextlib
import json
import mimetypes
import sys
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Protocol
from urllib.parse import parse_qsl, urlsplit

from .foxglove_relay import SUBPROTOCOLS, chosen_subprotocol, relay
from .live_feed import bad_query
from .wire import dumps

__all__ = ["STATIC", "Feed", "PageServer"]

#: The page's files.
STATIC = Path(__file__).resolve().parent / "static"
#: The largest control request read (bytes).
MAX_BODY = 4096


class Feed(Protocol):
    """What the server serves: a live run's samples (:class:`.live_feed.LiveFeed`) or a
    finished run's frames (``maes_bringup.replay.serve.ReplayFeed``)."""

    def scene(self) -> dict:
        """What stays the same (map, robots)."""

    def frame(self, query: Mapping[str, str]) -> dict:
        """One moment, for a page's query; raises ``bad_query`` for a bad one."""

    def control(self, command: Mapping) -> dict:
        """Carry out (or queue) a page's command; raises ``bad_query`` for a bad one."""


class _Handler(BaseHTTPRequestHandler):
    server_version = "maes-watch"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base's name
        pass  # a request log line per frame would drown the run's output

    def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str) -> None:
        self._send(status, dumps({"error": message}))

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        owner: PageServer = self.server.owner  # type: ignore[attr-defined]
        url = urlsplit(self.path)
        if self.headers.get("Upgrade", "").lower() == "websocket":
            self._websocket(owner, url.path)
            return
        try:
            if url.path == "/api/scene":
                self._send(200, dumps(owner.feed.scene()))
            elif url.path == "/api/frame":
                self._send(200, dumps(owner.feed.frame(dict(parse_qsl(url.query)))))
            else:
                self._file(url.path)
        except bad_query as exc:
            self._error(400, str(exc))
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as exc:  # a bug serves a 500; the run goes on
            owner.report(f"web page: {self.path}: {type(exc).__name__}: {exc}")
            self._error(500, f"{type(exc).__name__}: {exc}")

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        owner: PageServer = self.server.owner  # type: ignore[attr-defined]
        if urlsplit(self.path).path != "/api/control":
            self._error(404, f"no such address: {self.path}")
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
            if not 0 < length <= MAX_BODY:
                raise bad_query(f"a control request has 1 to {MAX_BODY} bytes, got {length}")
            try:
                command = json.loads(self.rfile.read(length))
            except ValueError as exc:
                raise bad_query(f"a control request is JSON: {exc}") from None
            self._send(200, dumps(owner.feed.control(command)))
        except bad_query as exc:
            self._error(400, str(exc))

    def _file(self, path: str) -> None:
        name = "index.html" if path in ("", "/") else path.lstrip("/")
        target = (STATIC / name).resolve()
        if STATIC not in target.parents or not target.is_file():
            self._error(404, f"no such address: {path}")
            return
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind.endswith("javascript"):
            kind += "; charset=utf-8"
        self._send(200, target.read_bytes(), kind)

    def _websocket(self, owner: PageServer, path: str) -> None:
        self.close_connection = True
        subprotocol = chosen_subprotocol(self.headers.get("Sec-WebSocket-Protocol"))
        if owner.foxglove_port is None or subprotocol is None:
            wanted = " or ".join(SUBPROTOCOLS)
            why = (
                "this server has no Foxglove live view"
                if owner.foxglove_port is None
                else f"a WebSocket here speaks Foxglove's protocol: ask for {wanted}"
            )
            self._error(400, why)
            return
        try:
            relay(
                self.connection,
                self.rfile,
                path,
                list(self.headers.items()),
                subprotocol,
                owner.foxglove_port,
                owner.opened,
            )
        except OSError as exc:
            owner.report(f"web page: Foxglove client: {exc}")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False  # a port another run holds is an error, not a shared port

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a browser that closed its tab mid-request
        self.owner.report(f"web page: a request from {client_address[0]} failed")


class PageServer:
    """Serves the page for ``feed`` on ``host:port`` (0: a free port, see :attr:`port`).

    Parameters
    ----------
    feed : Feed
    host : str
        Address to bind (127.0.0.1: this machine only).
    port : int
    foxglove_port : int, optional
        The live view's Foxglove server on 127.0.0.1: WebSocket clients asking for Foxglove's
        protocol are relayed there.
    report : callable, optional
        Told a line when a request fails (the page server never raises into the run).

    Raises
    ------
    OSError
        The address cannot be bound (the port is taken, say).
    """

    def __init__(
        self,
        feed: Feed,
        host: str,
        port: int,
        foxglove_port: int | None = None,
        report=None,
    ) -> None:
        self.feed = feed
        self.host = host
        self.foxglove_port = foxglove_port
        self.report = report or (lambda text: None)
        self.opened: set = set()
        self._httpd = _Server((host, int(port)), _Handler)
        self._httpd.owner = self
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.2},
            name="maes-web-page",
            daemon=True,
        )
        self._thread.start()
        self.closed = False

    @property
    def url(self) -> str:
        """``http://host:port/``: the page."""
        return f"http://{self.host}:{self.port}/"

    @property
    def ws_url(self) -> str:
        """``ws://host:port``: for Foxglove and Lichtblick."""
        return f"ws://{self.host}:{self.port}"

    def close(self) -> None:
        """Stop serving (open Foxglove connections are cut); later calls do nothing."""
        if self.closed:
            return
        self.closed = True
        self._httpd.shutdown()
        self._httpd.server_close()
        for sock in list(self.opened):
            with contextlib.suppress(OSError):
                sock.close()
        self._thread.join(timeout=5.0)


mimetypes.add_type("text/javascript", ".js")
