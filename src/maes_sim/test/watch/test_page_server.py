"""The page's server (maes_sim.watch.PageServer) with real clients: urllib for the page and its
data, and the ``websockets`` package speaking Foxglove's protocol, through the server's relay,
to foxglove-sdk's own server, asking for either name of the protocol."""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import urllib.error
import urllib.request

import pytest

websockets = pytest.importorskip("websockets", reason="needs websockets (requirements/venv.txt)")
from websockets.exceptions import InvalidStatus  # noqa: E402

from maes_sim.core import Simulation, config_from_dict  # noqa: E402
from maes_sim.watch import STATIC, LiveFeed, PageServer  # noqa: E402


@pytest.fixture
def served():
    sim = Simulation(
        config_from_dict(
            {"number_of_robots": 2, "map": {"width_in_tiles": 16, "height_in_tiles": 16}}
        )
    )
    feed = LiveFeed()
    feed.attach(sim, controls={"pause": True, "speed": True}, apply=lambda c: None)
    server = PageServer(feed, "127.0.0.1", 0)
    yield server
    server.close()


def get(url: str, data: bytes | None = None) -> tuple[int, str, bytes]:
    headers = {"Content-Type": "application/json"} if data is not None else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data, headers), timeout=10) as r:
            return r.status, r.headers["Content-Type"], r.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers["Content-Type"], err.read()


def test_the_page_its_files_and_its_data(served):
    status, kind, body = get(served.url)
    assert status == 200 and kind.startswith("text/html")
    assert body == (STATIC / "index.html").read_bytes() and b'src="app.js"' in body
    for name, mime in (("app.js", "text/javascript"), ("style.css", "text/css")):
        status, kind, body = get(served.url + name)
        assert status == 200 and kind.startswith(mime) and body == (STATIC / name).read_bytes()
    status, _, body = get(served.url + "api/scene")
    assert status == 200 and json.loads(body)["robots"]["names"] == ["robot0", "robot1"]
    status, _, body = get(served.url + "api/frame?robot=1")
    assert status == 200 and json.loads(body)["tick"] == 0
    status, _, body = get(served.url + "api/control", b'{"op": "resume"}')
    assert status == 200 and json.loads(body) == {"ok": True, "queued": "resume"}


def test_bad_requests_get_a_reason(served):
    for path, status, why in (
        ("nowhere.html", 404, "no such address"),
        ("../live_feed.py", 404, "no such address"),
        ("api/frame?robot=7", 400, "robot must be below 2"),
        ("api/frame?seq=abc", 400, "seq must be an integer"),
    ):
        got, _, body = get(served.url + path)
        assert got == status and why in json.loads(body)["error"], path
    got, _, body = get(served.url + "api/control", b"{not json")
    assert got == 400 and "a control request is JSON" in json.loads(body)["error"]
    got, _, body = get(served.url + "api/control", b'{"op": "speed", "rtf": 1e9}')
    assert got == 400 and "rtf must be a number from 0 to 1000" in json.loads(body)["error"]


def test_a_port_in_use_is_an_error_naming_it(served):
    with pytest.raises(OSError):
        PageServer(served.feed, "127.0.0.1", served.port)


def test_a_websocket_without_a_foxglove_server_is_refused(served):

    async def attempt():
        async with websockets.connect(
            served.ws_url, subprotocols=["foxglove.sdk.v1"], open_timeout=10
        ):
            pass

    with pytest.raises(InvalidStatus, match="400"):
        asyncio.run(attempt())


def foxglove_server():
    """foxglove-sdk's own server on a free loopback port, with one channel logging JSON: the
    server, the channel and their context (which must be kept: without it nothing is served)."""
    foxglove = pytest.importorskip("foxglove", reason="needs foxglove-sdk (requirements/venv.txt)")
    from foxglove import Channel, Context, Schema

    context = Context()
    server = foxglove.start_server(host="127.0.0.1", port=0, context=context)
    schema = Schema(name="Count", encoding="jsonschema", data=b'{"type": "object"}')
    channel = Channel("/count", schema=schema, message_encoding="json", context=context)
    return server, channel, context


@pytest.mark.parametrize("subprotocol", ["foxglove.websocket.v1", "foxglove.sdk.v1"])
def test_foxglove_clients_of_either_protocol_name_reach_the_live_view(served, subprotocol):
    """Lichtblick before December 2025 and PlotJuggler ask for ``foxglove.websocket.v1``,
    foxglove_bridge 3.x and current apps for ``foxglove.sdk.v1``: both get serverInfo, the
    channels, and the messages of a channel they subscribe to, on the page's port."""
    server, channel, _context = foxglove_server()
    page = PageServer(served.feed, "127.0.0.1", 0, foxglove_port=server.port)

    async def watch():
        async with websockets.connect(
            page.ws_url, subprotocols=[subprotocol], open_timeout=10
        ) as ws:
            chosen = ws.subprotocol
            info = json.loads(await asyncio.wait_for(ws.recv(), 10))
            advert = json.loads(await asyncio.wait_for(ws.recv(), 10))
            channel_id = advert["channels"][0]["id"]
            await ws.send(
                json.dumps(
                    {"op": "subscribe", "subscriptions": [{"id": 7, "channelId": channel_id}]}
                )
            )
            for _ in range(200):  # until the server counts the subscription
                channel.log({"n": 42})
                try:
                    frame = await asyncio.wait_for(ws.recv(), 0.05)
                except TimeoutError:
                    continue
                if isinstance(frame, bytes) and frame[0] == 1:
                    sub = struct.unpack_from("<I", frame, 1)[0]
                    return chosen, info, advert, sub, json.loads(frame[13:])
            raise AssertionError("no message data came")

    try:
        chosen, info, advert, sub, payload = asyncio.run(watch())
    finally:
        page.close()
        server.stop()
    assert chosen == subprotocol
    assert info["op"] == "serverInfo"
    assert advert["op"] == "advertise" and advert["channels"][0]["topic"] == "/count"
    assert sub == 7 and payload == {"n": 42}


def test_a_client_of_another_protocol_is_told_which_to_ask_for(served):
    server, _channel, _context = foxglove_server()
    page = PageServer(served.feed, "127.0.0.1", 0, foxglove_port=server.port)

    async def attempt():
        async with websockets.connect(page.ws_url, subprotocols=["graphql-ws"], open_timeout=10):
            pass

    try:
        with pytest.raises(InvalidStatus) as err:
            asyncio.run(attempt())
    finally:
        page.close()
        server.stop()
    assert err.value.response.status_code == 400
    assert b"foxglove.sdk.v1 or foxglove.websocket.v1" in err.value.response.body


def test_closing_cuts_open_connections_and_frees_the_port(served):
    port = served.port
    served.close()
    served.close()  # twice: nothing happens
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))  # free again
