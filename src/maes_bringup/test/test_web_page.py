"""The page to watch a run (docs/watching.md), in a real headless Chromium, against real runs:
``maes_run --live`` (the embedded stack, in its own process) and ``maes-replay --serve`` (a
finished run's recording).

The page tells where it drew each robot and with which world-to-pixel transform
(``window.maesPage``); the tests compare those pixels with where the simulator says the robots
were at the same tick (its recording's ``/tf``), and read a screenshot to check that what is
drawn there is the robot's colour and the map's walls are where the map has them.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")
PIL = pytest.importorskip("PIL.Image")
pytest.importorskip("mcap_ros2", reason="the recordings are read with mcap-ros2-support")

from maes_bringup.replay import read_mcap  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
MAES_RUN = REPO / "install" / "maes_bringup" / "lib" / "maes_bringup" / "maes_run"
#: A robot drawn where the simulator had it: within this many pixels (the page draws float32
#: poses; the transform is the page's).
PIXEL_TOLERANCE = 1.0


def rgb(hex_colour: str) -> np.ndarray:
    return np.array([int(hex_colour[k : k + 2], 16) for k in (1, 3, 5)])


class Output:
    """A process's stderr read on a thread (so that it never blocks), searchable."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.append(line)

    def wait_for(self, pattern: str, seconds: float, proc) -> re.Match:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for line in list(self.lines):
                found = re.search(pattern, line)
                if found:
                    return found
            if proc.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(
            f"no line matching {pattern!r} within {seconds:g} s; output:\n"
            + "".join(self.lines)[-3000:]
        )


def wait_js(page, condition: str, what: str, seconds: float = 60.0) -> None:
    try:
        page.wait_for_function(condition, timeout=seconds * 1000)
    except Exception as exc:
        raise AssertionError(f"the page never showed {what} within {seconds:g} s: {exc}") from None


def drawn_now(page) -> dict:
    """Where the page last drew each robot, the tick, and its transform."""
    return page.evaluate(
        "({drawn: window.maesPage.drawn, transform: window.maesPage.transform,"
        " status: document.getElementById('status').textContent})"
    )


def expected_pixels(transform: dict, xy_m: np.ndarray) -> np.ndarray:
    """World metres (N, 2) -> canvas pixels, x to the right and y up (the page's transform)."""
    return np.stack(
        [
            transform["ox"] + xy_m[:, 0] * transform["scale"],
            transform["oy"] - xy_m[:, 1] * transform["scale"],
        ],
        axis=1,
    )


def check_screenshot(
    path: Path, sample: dict, xy_m, headings, colours, walls, tile, origin
) -> None:
    """The screenshot of the canvas (taken while ``sample`` was on it) is no blank picture: each
    robot's colour where it was drawn, the walls where the map has them."""
    img = np.asarray(PIL.open(path).convert("RGB")).astype(int)
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 20, "a blank screenshot"
    t = sample["transform"]
    for i, ((px, py), th) in enumerate(zip(expected_pixels(t, xy_m), headings, strict=True)):
        r = sample["drawn"]["robots"][i][2]
        # inside the disc, half a radius behind the centre (clear of the heading line)
        qx, qy = int(round(px - 0.5 * r * np.cos(th))), int(round(py + 0.5 * r * np.sin(th)))
        got = img[qy - 1 : qy + 2, qx - 1 : qx + 2].reshape(-1, 3)
        dist = np.abs(got - rgb(colours[i])).sum(axis=1).min()
        assert dist <= 30, f"robot{i}: colour {got.tolist()} at ({qx}, {qy}), not {colours[i]}"
    h, w = walls.shape
    rows, cols = np.mgrid[1 : h - 1, 1 : w - 1]  # inside the border
    centres = np.stack([origin[0] + (cols + 0.5) * tile, origin[1] + (rows + 0.5) * tile], -1)
    px = np.round(expected_pixels(t, centres.reshape(-1, 2))).astype(int)
    colour = img[px[:, 1], px[:, 0]]
    is_wall_colour = np.abs(colour - rgb("#6b6b6b")).sum(axis=1) <= 12
    inner_walls = walls[1 : h - 1, 1 : w - 1].ravel()
    assert inner_walls.any() and (~inner_walls).any()
    assert is_wall_colour[inner_walls].mean() > 0.9, "walls not drawn where the map has them"
    assert is_wall_colour[~inner_walls].mean() < 0.1, "walls drawn where the map has none"


#: A run of 3 robots on a small building map that goes until it is stopped (no pictures: the
#: tests do not look at them, and matplotlib would double the run's end).
RUN_CONFIG = (
    "number_of_robots: 3\nrandom_seeds: [5]\n"
    "end_criteria:\n  exploration_percent: null\n  tick: null\n"
    "map:\n  width_in_tiles: 24\n  height_in_tiles: 24\n  building_config: {}\n"
    "results: {pictures: false}\n"
)


@contextmanager
def live_run(tmp_path: Path, record: Path | None = None) -> Iterator[tuple[Output, str]]:
    """``maes_run --live 0`` (2x real time) in its own process: its output and the page's
    address; on exit Ctrl-C, and the run must end cleanly."""
    assert MAES_RUN.exists(), f"workspace not built: {MAES_RUN} missing (make build)"
    cfg = tmp_path / "run.yaml"
    cfg.write_text(RUN_CONFIG)
    args = [str(MAES_RUN), "--config", str(cfg), "--real-time-factor", "2", "--live", "0",
            "--results", str(tmp_path / "results")]  # fmt: skip
    if record is not None:
        args += ["--record", str(record)]
    proc = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=os.environ.copy()
    )
    out = Output(proc.stderr)
    try:
        yield out, out.wait_for(r"maes_run: watch at (http://127\.0\.0\.1:\d+/)", 40, proc).group(1)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0, "".join(out.lines)[-3000:]


def test_the_page_follows_a_real_run(tmp_path, browser_page):
    """``maes_run --live 0`` with 3 robots: the page loads and shows 3 robots, drawn where the
    simulator has them (its recording's /tf) tick after tick; paused, a screenshot of the map
    is no blank picture: each robot's colour where it is drawn, the walls where the map has
    them."""
    record = tmp_path / "run.mcap"
    page = browser_page
    samples: list[dict] = []
    with live_run(tmp_path, record) as (_, url):
        page.goto(url)
        wait_js(page, "window.maesPage.ready && window.maesPage.drawn.tick >= 3", "the run", 40)
        assert page.text_content("#title") == "building map, 3 robots, seed 5 (live)"
        samples.append(drawn_now(page))
        for _ in range(6):  # the ticks advance: each sample at least 5 ticks after the last
            after = samples[-1]["drawn"]["tick"] + 5
            wait_js(page, f"window.maesPage.drawn.tick >= {after}", f"tick {after}", 30)
            samples.append(drawn_now(page))
        page.click("#pause")
        wait_js(page, "document.getElementById('status').textContent.includes('paused')", "paused")
        still = drawn_now(page)
        shot = tmp_path / "page.png"
        page.locator("#map").screenshot(path=str(shot))
        assert drawn_now(page)["drawn"]["tick"] == still["drawn"]["tick"], "a paused run stepped"

    replay = read_mcap(record, max_frames=10_000)  # every tick the simulator published
    ticks = {int(t): k for k, t in enumerate(replay.trail_ticks)}
    h, w = replay.walls.shape
    tile = replay.tile_size
    compared = 0
    for sample in samples + [still]:
        tick, drawn = sample["drawn"]["tick"], sample["drawn"]["robots"]
        assert len(drawn) == 3 and all(d is not None for d in drawn)
        if tick not in ticks:
            continue
        xy_m = (replay.trail[:, ticks[tick]].astype(float) - [w / 2, h / 2]) * tile
        want = expected_pixels(sample["transform"], xy_m)
        got = np.array([d[:2] for d in drawn])
        assert np.abs(got - want).max() <= PIXEL_TOLERANCE, f"tick {tick}: {got} vs {want}"
        compared += 1
    seen = sorted({s["drawn"]["tick"] for s in samples})
    assert compared == len(samples) + 1 and len(seen) == 7, f"compared {compared} of ticks {seen}"
    moved = np.ptp([s["drawn"]["robots"][0][:2] for s in samples], axis=0).max()
    assert moved > 2, "robot0 never moved on the page"
    frame = next(f for f in replay.frames if f.tick == still["drawn"]["tick"])
    xy_m = (frame.positions - [w / 2, h / 2]) * tile
    check_screenshot(shot, still, xy_m, frame.headings, page_colours(url), replay.walls, tile,
                     (-w / 2 * tile, -h / 2 * tile))  # fmt: skip


def test_the_page_shows_a_clicked_robot_and_steers_the_run(tmp_path, browser_page):
    """The page's controls on a real ``maes_run --live 0``: paused, the ticks stop; a clicked
    robot shows its maes_state at the paused tick; the speed cap and Resume reach the run;
    the robot's navigation is heard from its navigate_to_pose status."""
    page = browser_page
    with live_run(tmp_path) as (_, url):
        page.goto(url)
        wait_js(page, "window.maesPage.ready && window.maesPage.drawn.tick >= 3", "the run", 40)
        page.click("#pause")
        wait_js(page, "document.getElementById('status').textContent.includes('paused')", "paused")
        held = drawn_now(page)
        time.sleep(1.0)  # nothing to wait for: a paused run must not step meanwhile
        assert drawn_now(page)["drawn"]["tick"] == held["drawn"]["tick"], "a paused run stepped"
        # robot1 clicked while it stands still: its maes_state as the run has it
        robot1 = held["drawn"]["robots"][1]
        box = page.locator("#map").bounding_box()
        page.mouse.click(box["x"] + robot1[0], box["y"] + robot1[1])
        wait_js(page, "document.getElementById('robot-info').textContent.includes('nearby_robots')",
                "robot1's maes_state")  # fmt: skip
        info = page.inner_text("#robot-info")
        assert page.text_content("#robot-heading") == "Robot: robot1"
        assert re.search(r"robot_type\s+default", info), info
        assert re.search(rf"tick, status\s+{held['drawn']['tick']}, (Idle|Moving|Stopping)", info)
        page.screenshot(path=str(tmp_path / "whole_page.png"))
        page.select_option("#speed", "5")
        wait_js(page, "document.getElementById('n-rtf').textContent.includes('cap 5×')", "cap 5×")
        page.click("#pause")  # resume
        wait_js(page, f"window.maesPage.drawn.tick > {held['drawn']['tick']}", "the run again")
        # robot1's navigation, heard from its navigate_to_pose status (the frontier explorer
        # gives every robot a goal from its first ticks)
        wait_js(page, "/goals? so far/.test(document.getElementById('robot-info').textContent)",
                "robot1's navigation", 30)  # fmt: skip
        nav = re.search(r"navigation\s+(.*)", page.inner_text("#robot-info")).group(1)
        assert re.match(r"(navigating|accepted|arrived|idle|failed|cancel)", nav), nav


def page_colours(url: str) -> list[str]:
    """The robots' colours the page used (from the scene; the run is over, so read the
    replay's, which are the same: maes_sim.core.robot_colours)."""
    from maes_sim.core import robot_colours
    from maes_sim.watch import hex_colour

    return [hex_colour(c) for c in robot_colours(3)]


@pytest.fixture
def recording(tmp_path) -> Path:
    """A direct-mode run of 3 robots recorded by the simulator node (MCAP, rosbag2's format)."""
    from maes_bringup.runners.direct import run
    from maes_sim.core import config_from_dict

    path = tmp_path / "run.mcap"
    cfg = config_from_dict(
        {
            "number_of_robots": 3,
            "random_seeds": [2],
            "map": {"width_in_tiles": 24, "height_in_tiles": 24},
            "end_criteria": {"tick": 50},
        }
    )
    run(cfg, "maes_controller.algorithms.frontier_explorer:logic", record=path)
    return path


def serve(path: Path, *extra: str) -> tuple[subprocess.Popen, Output, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "maes_bringup.replay.cli", "--serve", str(path), "--port", "0",
         *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    out = Output(proc.stderr)
    url = out.wait_for(r"maes-replay: watch at (http://127\.0\.0\.1:\d+/)", 60, proc).group(1)
    return proc, out, url


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_finished_run_in_the_browser_with_a_time_slider(tmp_path, recording, browser_page):
    """``maes-replay --serve run.mcap``: the slider chooses the moment; the robots are drawn
    where the recording has them then; Play moves on; a screenshot is no blank picture."""
    replay = read_mcap(recording, max_frames=1500)
    proc, out, url = serve(recording)
    page = browser_page
    try:
        page.goto(url)
        wait_js(page, "window.maesPage.ready", "the replay", 30)
        assert page.text_content("#title") == "recording run.mcap, 3 robots (replay)"
        assert page.get_attribute("#slider", "max") == str(len(replay.frames) - 1)
        h, w = replay.walls.shape
        tile = replay.tile_size
        for k in (0, len(replay.frames) // 2, len(replay.frames) - 1):
            page.eval_on_selector(
                "#slider", "(el, k) => { el.value = k; el.dispatchEvent(new Event('input')); }", k
            )
            wait_js(page, f"window.maesPage.drawn.index === {k}", f"frame {k}", 30)
            sample = drawn_now(page)
            frame = replay.frames[k]
            assert sample["drawn"]["tick"] == frame.tick
            xy_m = (frame.positions - [w / 2, h / 2]) * tile
            got = np.array([d[:2] for d in sample["drawn"]["robots"]])
            assert np.abs(got - expected_pixels(sample["transform"], xy_m)).max() <= PIXEL_TOLERANCE
        shot = tmp_path / "replay.png"
        page.locator("#map").screenshot(path=str(shot))
        check_screenshot(shot, sample, xy_m, frame.headings, page_colours(url), replay.walls,
                         tile, (-w / 2 * tile, -h / 2 * tile))  # fmt: skip
        page.eval_on_selector(
            "#slider", "(el) => { el.value = 0; el.dispatchEvent(new Event('input')); }"
        )
        wait_js(page, "window.maesPage.drawn.index === 0", "frame 0", 30)
        page.click("#play")
        wait_js(page, "window.maesPage.drawn.index > 3", "the replay playing", 30)
    finally:
        stop(proc)
    assert proc.returncode == 0, "".join(out.lines)


def test_serve_refuses_bad_input_in_one_line(tmp_path, recording, capsys):
    """A path that is not there, a folder with neither results nor a recording, a file that is
    not MCAP, a busy port: exit code 2 and a line saying what is wrong."""
    from maes_bringup.replay.cli import main
    from maes_sim.watch import LiveFeed, PageServer

    (tmp_path / "empty").mkdir()
    (tmp_path / "text.mcap").write_text("not a recording")
    for path, why in (
        (tmp_path / "nowhere", "does not exist"),
        (tmp_path / "empty", "is a folder without an .mcap file"),
        (tmp_path / "text.mcap", "is not an MCAP file"),
    ):
        assert main(["--serve", str(path)]) == 2
        err = capsys.readouterr().err
        assert why in err and "Traceback" not in err, err
    holder = PageServer(LiveFeed(), "127.0.0.1", 0)  # another server holds the port
    try:
        assert main(["--serve", str(recording), "--port", str(holder.port)]) == 2
    finally:
        holder.close()
    err = capsys.readouterr().err
    assert f"cannot serve on 127.0.0.1:{holder.port}" in err and "--port 0" in err, err
    with pytest.raises(SystemExit):
        main(["--serve", str(recording), "-o", "run.gif"])  # a page writes no GIF
    assert "--serve shows the run in a web browser" in capsys.readouterr().err


def test_a_results_folder_is_its_run_made_again(tmp_path):
    """``maes-replay --serve results/<run>``: the results hold no poses, so the run is made
    again in direct mode from summary.json's config and seed: the same run, to the bit."""
    from maes_bringup.replay.serve import ReplayFeed, replay_of_results
    from maes_bringup.runners.direct import run
    from maes_sim.core import config_from_dict

    cfg = config_from_dict(
        {"number_of_robots": 2, "random_seeds": [7], "end_criteria": {"tick": 40},
         "map": {"width_in_tiles": 20, "height_in_tiles": 20}}
    )  # fmt: skip
    result = run(cfg, "maes_controller.algorithms.frontier_explorer:logic")
    folder = result.write(tmp_path)
    replay = replay_of_results(folder)
    last = replay.frames[-1]
    assert last.tick == 40
    assert np.array_equal(last.positions, result.sim.grid_positions)
    assert np.allclose(last.headings, result.sim.poses[:, 2])
    feed = ReplayFeed(replay)
    scene = feed.scene()
    assert scene["mode"] == "replay" and scene["frames"]["count"] == len(replay.frames)
    assert scene["robots"]["types"] == ["default", "default"]
    frame = feed.frame({"at": str(len(replay.frames) - 1)})
    assert frame["tick"] == 40 and frame["covered"] == pytest.approx(result.sim.coverage_percent)
    from maes_sim.watch import bad_query

    with pytest.raises(bad_query, match="at must be a frame from 0"):
        feed.frame({"at": "9999"})
    (folder / "summary.json").write_text('{"controllers": "none", "config": {}}')
    with pytest.raises(ValueError, match="controllers of your own"):
        replay_of_results(folder)
