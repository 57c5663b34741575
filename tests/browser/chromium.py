"""Drive Debian's headless ``chromium`` offline: dump the DOM after scripted key presses, screenshots.

No DevTools client is needed: the page under test gets a small script appended (after the
viewer's own script) that dispatches ``keydown`` events through the page's real handler once the
page has loaded, and writes what it observed into ``data-test-*`` attributes of ``<body>``;
``chromium --dump-dom`` then prints the DOM. Waiting is chromium's ``--virtual-time-budget``
(virtual time: no sleeps, no clock).

Set-up (Debian 12): ``apt-get update && apt-get install -y chromium``.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

__all__ = ["FLAGS", "find_chromium", "dump_dom", "screenshot", "with_keys", "body_attributes"]

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
)


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _run(args: list[str], *, profile: Path, timeout: float) -> subprocess.CompletedProcess:
    exe = find_chromium()
    if exe is None:
        raise RuntimeError("chromium is not installed: apt-get update && apt-get install -y chromium")
    cmd = [exe, *FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def dump_dom(page: Path, *, profile: Path, fragment: str = "", budget_ms: int = 3000, window: str = "1280,900",
             timeout: float = 60) -> str:
    """The DOM of ``page`` (opened at ``#fragment`` if given) after load and ``budget_ms`` of virtual time."""
    uri = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    result = _run([f"--window-size={window}", f"--virtual-time-budget={budget_ms}", "--dump-dom", uri],
                  profile=profile, timeout=timeout)
    if "<body" not in result.stdout:
        raise RuntimeError(f"chromium printed no DOM (exit {result.returncode}): {result.stderr[-2000:]}")
    return result.stdout


def screenshot(page: Path, png: Path, *, profile: Path, budget_ms: int = 2000, window: str = "1280,900", timeout: float = 60) -> Path:
    """A PNG of ``page`` as a ``window``-sized browser shows it after load."""
    _run([f"--window-size={window}", f"--virtual-time-budget={budget_ms}", f"--screenshot={png}", page.resolve().as_uri()],
         profile=profile, timeout=timeout)
    if not png.exists() or png.stat().st_size == 0:
        raise RuntimeError("chromium wrote no screenshot")
    return png


_PROBE = """
<script>
window.addEventListener('load', function () {
  var body = document.body;
  var box = document.getElementById('cards');
  function shown(el) {
    if (!el) return 'none';
    var r = el.getBoundingClientRect(), b = box.getBoundingClientRect();
    var top = Math.max(r.top, b.top), bottom = Math.min(r.bottom, b.bottom);
    return (bottom - top >= Math.min(60, r.height) && r.top >= b.top - 1) ? 'yes' : 'no';
  }
  body.setAttribute('data-test-initial', body.getAttribute('data-current'));
  body.setAttribute('data-test-fail-visible', shown(document.querySelector('article.step.fail')));
  var trail = [];
  KEYS.forEach(function (k) {
    document.dispatchEvent(new KeyboardEvent('keydown', {key: k, bubbles: true, cancelable: true}));
    trail.push(body.getAttribute('data-current'));
  });
  body.setAttribute('data-test-trail', trail.join(','));
  body.setAttribute('data-test-current-visible', shown(document.querySelector('article.step.current')));
  body.setAttribute('data-test-current-cards', String(document.querySelectorAll('article.step.current').length));
  body.setAttribute('data-test-hash', location.hash);
});
</script>
"""


def with_keys(page_html: str, keys) -> str:
    """The page with the probe script appended: it presses ``keys`` after load (see the module docstring)."""
    probe = _PROBE.replace("KEYS", json.dumps(list(keys)))
    assert "</body>" in page_html
    return page_html.replace("</body>", probe + "</body>", 1)


def body_attributes(dom: str) -> dict[str, str]:
    """The attributes of ``<body>`` in a dumped DOM."""
    match = re.search(r"<body([^>]*)>", dom)
    if not match:
        raise AssertionError("no <body> in the DOM")
    return {k: html.unescape(v) for k, v in re.findall(r'([\w-]+)="([^"]*)"', match.group(1))}
