"""Fixtures of maes_bringup's tests: a real headless Chromium for the web page's tests.

Without a ``chromium`` on PATH those tests skip, saying how to install it
(``scripts/setup_browser.sh``); under CI (``CI`` set) they fail instead, since ``.ci/run``
installs it first. Without playwright they fail: ``make setup`` installs it
(requirements/venv.txt), so its absence is a broken environment, not a missing browser.
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture
def browser_page():
    """A playwright page in Debian's headless Chromium (1280 x 800), closed after the test."""
    from maes_sim.watch import INSTALL_HINT, chromium_path, open_page

    if chromium_path() is None:
        why = f"the web page's tests drive a real Chromium: {INSTALL_HINT}"
        if os.environ.get("CI"):
            pytest.fail(f"{why} (.ci/run runs it before the tests)")
        pytest.skip(why)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        why = f"playwright is missing ({exc}): make setup installs it (requirements/venv.txt)"
        pytest.fail(why)
    with open_page() as page:
        yield page
