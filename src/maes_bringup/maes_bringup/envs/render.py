"""Rendering an environment: the replay renderer's frame of the current tick."""

from __future__ import annotations

import os

import numpy as np

from maes_sim.core import Simulation

from ..replay.model import ReplayRecorder
from ..replay.render import render_frames
from .options import EnvOptionError

RENDER_MODES = (None, "rgb_array", "human")


class Renderer:
    """Draws frames for ``render_mode`` ``"rgb_array"`` or ``"human"`` (None: nothing).

    ``"human"`` needs a display (``DISPLAY`` or ``WAYLAND_DISPLAY``) and an interactive
    matplotlib backend; it is refused with a clear error otherwise.
    """

    def __init__(self, render_mode: str | None, width_px: int = 480) -> None:
        if render_mode not in RENDER_MODES:
            raise EnvOptionError(
                f"render_mode must be one of {list(RENDER_MODES)}, got {render_mode!r}"
            )
        if render_mode == "human" and not (
            os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
        ):
            raise EnvOptionError("render_mode 'human' needs a display (DISPLAY is not set)")
        self.mode = render_mode
        self.width_px = width_px
        self._window = None

    def reset(self) -> None:
        """A new episode started."""

    def frame(self, sim: Simulation) -> np.ndarray:
        """The (H, W, 3) uint8 picture of ``sim`` now: map, explored area, robots and paths."""
        recorder = ReplayRecorder()
        recorder(sim)
        return next(render_frames(recorder.replay(sim), width_px=self.width_px, max_frames=2))

    def render(self, sim: Simulation) -> np.ndarray | None:
        """``rgb_array``: the frame; ``human``: show it; None: nothing."""
        if self.mode is None:
            return None
        image = self.frame(sim)
        if self.mode == "rgb_array":
            return image
        import matplotlib.pyplot as plt

        if self._window is None:
            plt.ion()
            fig, ax = plt.subplots()
            ax.set_axis_off()
            self._window = (fig, ax.imshow(image))
        else:
            self._window[1].set_data(image)
        self._window[0].canvas.draw_idle()
        plt.pause(0.001)
        return None

    def close(self) -> None:
        """Close the window of ``human`` mode."""
        if self._window is not None:
            import matplotlib.pyplot as plt

            plt.close(self._window[0])
            self._window = None
