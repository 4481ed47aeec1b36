"""Replay a run as pictures: an animated GIF (or MP4 where ffmpeg exists) of the map being
explored, the robots with their trails, broadcasts and tags.

Two sources, one picture: a recording (an MCAP file in rosbag2's format, :func:`read_mcap`) or
a direct-mode run (:class:`ReplayRecorder` as the run's ``progress`` callback). The command
line is ``maes-replay`` (:mod:`maes_bringup.replay.cli`).

>>> from maes_bringup.replay import ReplayRecorder, write_animation  # doctest: +SKIP
>>> from maes_bringup.runners.direct import run  # doctest: +SKIP
>>> recorder = ReplayRecorder()  # doctest: +SKIP
>>> explorer = "maes_controller.algorithms.frontier_explorer:logic"
>>> result = run("maes_config.yaml", explorer,  # doctest: +SKIP
...              progress=recorder)
>>> write_animation(recorder.replay(result.sim), "run.gif")  # doctest: +SKIP
"""

from .mcap_source import read_mcap
from .model import Replay, ReplayFrame, ReplayRecorder
from .render import write_animation

__all__ = ["Replay", "ReplayFrame", "ReplayRecorder", "read_mcap", "write_animation"]
