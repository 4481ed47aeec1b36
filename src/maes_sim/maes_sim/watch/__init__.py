"""A page to watch a run in a web browser (docs/watching.md), served by the run itself.

No ROS here: the page server (:class:`PageServer`) serves a feed, a running simulation's
samples (:class:`LiveFeed`, taken on the run's thread only while a page looks) or a finished
run's frames (``maes_bringup.replay.serve``). The page is plain HTML, JavaScript and a canvas,
shipped in ``static/``: nothing to install, nothing fetched from the internet.
"""

from .foxglove_relay import SUBPROTOCOLS, chosen_subprotocol
from .headless import CHROMIUM_ARGS, INSTALL_HINT, chromium_path, open_page
from .live_feed import LiveFeed, bad_query, query_int
from .scene import MAP_COLOURS, hex_colour, map_scene, robot_state_fields
from .server import STATIC, Feed, PageServer
from .wire import dumps, packed

__all__ = [
    "CHROMIUM_ARGS",
    "INSTALL_HINT",
    "MAP_COLOURS",
    "STATIC",
    "SUBPROTOCOLS",
    "Feed",
    "LiveFeed",
    "PageServer",
    "bad_query",
    "chosen_subprotocol",
    "chromium_path",
    "dumps",
    "hex_colour",
    "map_scene",
    "open_page",
    "packed",
    "query_int",
    "robot_state_fields",
]
