"""Regenerate the README's screenshots with headless Chromium (Selenium), from the repository root:

    .venv/bin/python docs/screenshots/make.py [RUN_DIR]

* ``summary.png``: the top of the committed ``reports/quick/report.html`` (the "At a glance" summary);
* ``explore-korean.png``: ``tokbench explore RUN_DIR`` (default ``runs/quick``, as ``tokbench run`` writes it: the
  explorer needs the run's tokenizers, which the committed report folder does not hold) with Korean text typed
  in, the run's Korean tokenizers and the production rows chosen, cl100k compared with the Korean byte-bpe.

The Pareto plot the README shows is the report's own PNG (``reports/downstream/plots/``), not a screenshot.
Needs Debian's ``chromium``, ``chromium-driver`` and ``fonts-noto-cjk`` (Hangul as glyphs, not boxes) and the
``test`` extra (selenium, Pillow).  Each PNG is reduced to 256 colours to stay small (under ~300 KB).
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # tests.browser: how the tests start Chromium (flags, driver)

from tests.browser import browser_missing, start_browser  # noqa: E402

OUT = Path(__file__).resolve().parent
KOREAN = "안녕하세요, 한국어 형태소 분석을 합니다. 대한민국의 수도는 서울이다."
CORPUS = "embedded-kor"
WAIT_SECONDS = 60


def save_small(png: bytes, path: Path, crop_height: int | None = None) -> None:
    """The screenshot as a 256-colour PNG, cut to ``crop_height`` pixels when given."""
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    if crop_height is not None:
        image = image.crop((0, 0, image.width, min(crop_height, image.height)))
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(path, optimize=True)
    print(f"{path.relative_to(REPO)}: {image.width}x{image.height}, {path.stat().st_size / 1024:.0f} KB")


def summary(driver: Any) -> None:
    driver.set_window_size(1280, 900)
    driver.get((REPO / "reports" / "quick" / "report.html").as_uri())
    driver.execute_script("window.scrollTo(0, 0);")
    save_small(driver.get_screenshot_as_png(), OUT / "summary.png")


def explore(driver: Any, run_dir: Path) -> None:
    from selenium.webdriver.support.ui import Select, WebDriverWait

    command = [sys.executable, "-m", "benchmarks.cli", "explore", str(run_dir)]
    server = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True, encoding="utf-8")
    try:
        line = server.stdout.readline()  # type: ignore[union-attr]
        found = re.search(r"(http://\S+/)", line)
        if not found:
            raise SystemExit(f"tokbench explore did not start: {line!r}")
        driver.set_window_size(1280, 1400)
        driver.get(found[1])
        wait = WebDriverWait(driver, WAIT_SECONDS)
        wait.until(lambda d: d.find_elements("css selector", '[data-role="tokenizers"] option'))
        # the production rows and the rows trained on the Korean corpus
        driver.execute_script(
            "var select = arguments[0], corpus = arguments[1];"
            "Array.prototype.forEach.call(select.options, function (o) {"
            "  o.selected = o.value.indexOf('/') < 0 || o.value.indexOf(corpus + '/') === 0; });"
            "select.dispatchEvent(new Event('change'));",
            driver.find_element("css selector", '[data-role="tokenizers"]'), CORPUS)  # fmt: skip
        driver.find_element("css selector", '[data-role="input"]').send_keys(KOREAN)
        Select(driver.find_element("css selector", '[data-role="diff-b"]')).select_by_value(f"{CORPUS}/byte-bpe")
        wait.until(lambda d: d.find_element("css selector", '[data-role="status"]').get_attribute("data-state")
                   == "ready" and d.find_elements("css selector", '[data-role="diff-words"] tr'))  # fmt: skip
        height = driver.execute_script("return document.body.scrollHeight;")
        driver.set_window_size(1280, min(int(height) + 40, 2400))
        save_small(driver.get_screenshot_as_png(), OUT / "explore-korean.png")
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(WAIT_SECONDS)


def main(argv: list[str]) -> int:
    missing = browser_missing()
    if missing:
        raise SystemExit(f"no browser: {missing}")
    run_dir = Path(argv[0]) if argv else REPO / "runs" / "quick"
    if not (run_dir / "tokenizers").is_dir():
        raise SystemExit(f"{run_dir}: no tokenizers/ (run `tokbench run` first, or give a run folder)")
    profile = Path(tempfile.mkdtemp(prefix="tokbench-screenshots-"))
    driver = start_browser(profile)
    try:
        summary(driver)
        explore(driver, run_dir)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
