"""A real browser for the tests of HTML output: headless Chromium driven by Selenium.

Debian's ``chromium`` and ``chromium-driver`` packages (``.ci/run`` installs them) and the ``selenium``
package (the ``test`` extra).  The fixture ``browser`` gives one headless Chrome WebDriver per test module,
started with a fresh profile in a temporary folder and with every console message recorded
(``goog:loggingPrefs``), so a test can open a page with ``browser.get(path.as_uri())`` and then assert
``console_errors(browser) == []``.

Without a browser, driver or selenium the tests that use it skip with the reason; on a CI machine (the ``CI``
environment variable set) they fail instead, so CI never passes by skipping them.

The flags keep the browser off the network and quiet: no QUIC, no first-run screens, no background
networking, component updates or sync (a page under test opens from ``file://`` and needs none of them).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
#: how long a test waits for the page to do something (find an element, run a script)
WAIT_SECONDS = 10


def browser_missing() -> str | None:
    """Why no browser test can run here, or None when Chromium, its driver and selenium are installed."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not path.is_file() or not os.access(path, os.X_OK):
            return f"{path} not installed (apt-get install {package})"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium not installed (pip install 'tokbench[test]')"
    return None


def require_browser() -> None:
    """Skip the calling test when no browser is installed, stating why; fail instead on CI (``CI`` set)."""
    missing = browser_missing()
    if missing is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"browser tests cannot run on CI: {missing}")
    pytest.skip(f"no browser: {missing}")


def start_browser(profile: Path) -> Any:
    """A headless Chrome WebDriver with a fresh profile in ``profile`` that records console messages."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument("--window-size=1280,1024")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_script_timeout(WAIT_SECONDS)
    return driver


def console_errors(driver: Any) -> list[str]:
    """The console messages of level SEVERE (errors, uncaught exceptions, failed loads) since the last call."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium WebDriver per test module (see the module docstring)."""
    require_browser()
    profile = Path(tempfile.mkdtemp(prefix="tokbench-chromium-"))
    driver = start_browser(profile)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
