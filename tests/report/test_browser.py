"""The HTML report in a real browser: headless Chromium screenshots it and logs no errors.

Chromium runs with a fresh profile, no network services and no GPU. Console messages go to
stderr with ``--enable-logging=stderr``; a page error (an uncaught exception, a blocked script,
a CSP violation) appears there as ``CONSOLE`` / ``Uncaught`` lines, which fail the test.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from report_claims import HOSTILE
from report_tools import require_tool

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1280, 1800
_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
          "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--hide-scrollbars",
          "--enable-logging=stderr", "--v=0"]


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    exe = require_tool("chromium", "chromium-browser", "google-chrome")
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run([exe, *_FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True,
                          timeout=120, check=False)


def _page_errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines()
            if re.search(r"CONSOLE|Uncaught|Content Security Policy|Refused to", line)]


@pytest.mark.parametrize("name", ["superiority", "hostile"])
def test_screenshot_is_a_non_blank_image_of_the_window_size(rendered: dict, tmp_path: Path, name: str) -> None:
    from PIL import Image

    shot = tmp_path / "shot.png"
    proc = _chromium(tmp_path, f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}",
                     rendered[name]["html"].as_uri())
    assert shot.exists(), f"chromium wrote no screenshot (exit {proc.returncode}):\n{proc.stderr[-2000:]}"
    assert _page_errors(proc.stderr) == []
    with Image.open(shot) as img:
        assert img.size == (WIDTH, HEIGHT)
        grey = img.convert("L")
        hist = grey.histogram()
        ink = sum(hist[:160])
        assert ink > 0.005 * WIDTH * HEIGHT, "screenshot is (nearly) blank"
        assert hist[255] > 0.3 * WIDTH * HEIGHT, "screenshot has no page background"
        # the verdict band and the boxes are drawn: more than two distinct tones
        assert len([h for h in hist if h > 500]) >= 5


def test_dom_keeps_hostile_text_as_text(rendered: dict, tmp_path: Path) -> None:
    proc = _chromium(tmp_path, "--dump-dom", rendered["hostile"]["html"].as_uri())
    dom = proc.stdout
    assert "</html>" in dom, proc.stderr[-2000:]
    assert _page_errors(proc.stderr) == []
    assert "<script" not in dom.lower().replace("&lt;script", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert HOSTILE[1] in dom


def test_error_detector_catches_a_script_the_csp_blocks(rendered: dict, tmp_path: Path) -> None:
    """Negative control: the same report with a script injected by hand logs a CSP violation."""
    evil = tmp_path / "evil.html"
    html = rendered["superiority"]["html"].read_text(encoding="utf-8")
    evil.write_text(html.replace("</main>", "<script>undefinedFunction();</script></main>"), encoding="utf-8")
    proc = _chromium(tmp_path, "--dump-dom", evil.as_uri())
    assert any("Content Security Policy" in line for line in _page_errors(proc.stderr)), proc.stderr[-2000:]
