"""The browser fixture itself: it records console errors, and it refuses to skip on CI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests import browser as browser_module
from tests.browser import console_errors


def test_console_errors_are_recorded(browser: Any, tmp_path: Path) -> None:
    clean = tmp_path / "clean.html"
    clean.write_text("<!doctype html><title>ok</title><p id=x>ok</p><script>console.log('fine')</script>")
    browser.get(clean.as_uri())
    assert browser.find_element("id", "x").text == "ok"
    assert console_errors(browser) == []

    broken = tmp_path / "broken.html"
    broken.write_text("<!doctype html><title>bad</title><script>console.error('boom'); undefinedName();</script>")
    browser.get(broken.as_uri())
    errors = console_errors(browser)
    assert any("boom" in message for message in errors)
    assert any("undefinedName" in message for message in errors)


def test_missing_browser_skips_locally_and_fails_on_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser_module, "browser_missing", lambda: "/usr/bin/chromium not installed")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="/usr/bin/chromium not installed"):  # the reason is stated
        browser_module.require_browser()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="/usr/bin/chromium not installed"):
        browser_module.require_browser()
