"""The page in a headless Chromium: how the tests, the benchmark and the docs' screenshots open
it (Debian's ``chromium``, ``scripts/setup_browser.sh``, driven by playwright from PyPI, which
here never downloads a browser of its own).

Nothing in a run imports this: it is for looking at the page from a program.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["CHROMIUM_ARGS", "INSTALL_HINT", "chromium_path", "open_page"]

#: Headless Chromium on a machine with no network beyond this one, possibly as root: no
#: sandbox (root), no GPU, none of Chromium's own calls home.
CHROMIUM_ARGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
)
#: How to get the browser, in the words of a skipped test or a refused benchmark.
INSTALL_HINT = "scripts/setup_browser.sh installs Debian's chromium (sudo apt-get install chromium)"


def chromium_path() -> str | None:
    """The system's Chromium (``chromium`` on PATH), or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@contextmanager
def open_page(url: str | None = None, width: int = 1280, height: int = 800) -> Iterator:
    """A playwright page in headless Chromium (at ``url`` when given), closed on exit.

    Raises
    ------
    RuntimeError
        No Chromium here (naming :data:`INSTALL_HINT`).
    ImportError
        No playwright (``make setup`` installs it).
    """
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise RuntimeError(f"no chromium on PATH: {INSTALL_HINT}")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, args=list(CHROMIUM_ARGS), timeout=60_000)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.set_default_timeout(30_000)
            if url is not None:
                page.goto(url)
            yield page
        finally:
            browser.close()
