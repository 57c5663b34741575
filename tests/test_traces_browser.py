"""The HTML trace viewer in a real headless Chromium: it renders, opens at the failing step, keys move.

Chromium is driven offline through ``--dump-dom`` with a probe script appended to the page that
presses keys through the page's own handler after load (``tests/browser/chromium.py``); waits
are chromium's virtual time budget, never sleeps. Without a ``chromium`` on the PATH these
tests are skipped (set ``REBALPROOF_REQUIRE_BROWSER=1`` to make that a failure instead);
set-up on Debian: ``apt-get update && apt-get install -y chromium``.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from browser.chromium import body_attributes, dump_dom, find_chromium, screenshot, with_keys
from browser.examples import counterexamples

from rebalproof.cli.main import main
from rebalproof.traces.format import decode_trace
from rebalproof.traces.make_seeds import golden_path
from rebalproof.traces.render_html import render_html
from rebalproof.traces.replay import load_trace


@pytest.fixture(scope="module")
def found() -> dict:
    return counterexamples()


@pytest.fixture
def browser(tmp_path):
    if find_chromium() is None:
        if os.environ.get("REBALPROOF_REQUIRE_BROWSER") == "1":
            pytest.fail("chromium is not installed: apt-get update && apt-get install -y chromium")
        pytest.skip("chromium is not installed (apt-get update && apt-get install -y chromium)")
    return tmp_path / "profile"


def _page(tmp_path, trace, keys=(), name="page.html"):
    page = tmp_path / name
    page.write_text(with_keys(render_html(decode_trace(trace) if isinstance(trace, dict) else trace), keys), encoding="utf-8")
    return page


def test_the_page_is_self_contained_and_deterministic(found):
    page = render_html(decode_trace(found["single-owner"]))
    assert page == render_html(decode_trace(found["single-owner"]))
    assert "<link" not in page and " src=" not in page
    assert not re.search(r"""(href|src)=["']?https?:""", page)
    assert "@import" not in page and "url(" not in page
    assert page.count('<article class="step') == len(found["single-owner"]["steps"])


def test_counterexample_opens_at_the_failing_step_and_keys_move_the_current_step(tmp_path, browser, found):
    trace = found["single-owner"]
    fail = trace["fail_step"]
    assert fail >= 3
    keys = ["k", "k", "ArrowUp", "j", "ArrowRight", "ArrowDown", "Home", "ArrowLeft", "End", "f", "ArrowLeft"]
    dom = dump_dom(_page(tmp_path, trace, keys), profile=browser)
    body = body_attributes(dom)
    assert body["data-test-initial"] == str(fail)
    assert body["data-test-fail-visible"] == "yes"
    expected = [fail - 1, fail - 2, fail - 3, fail - 2, fail - 1, fail, 0, 0, fail, fail, fail - 1]
    assert body["data-test-trail"] == ",".join(map(str, expected))
    assert body["data-current"] == str(fail - 1)
    assert body["data-test-current-cards"] == "1"
    assert body["data-test-current-visible"] == "yes"
    assert body["data-test-hash"] == f"#step-{fail - 1}"
    assert f"{trace['property']} fails here" in dom


def test_lasso_cycle_is_marked_and_a_link_opens_a_given_step(tmp_path, browser, found):
    trace = found["no-shuffle-cycle"]
    start = trace["cycle_start"]
    page = _page(tmp_path, trace, ["j"])
    dom = dump_dom(page, profile=browser)
    in_cycle = len(trace["steps"]) - start - 1
    assert len(re.findall(r'<article class="step[^"]*\bcycle\b', dom)) == in_cycle
    assert "The cycle starts after this step" in dom
    assert f"the cycle closes here (this state is the state of step {start})" in dom
    body = body_attributes(dom)
    assert body["data-cycle-start"] == str(start)
    last = len(trace["steps"]) - 1
    assert body["data-test-trail"] == str(last)  # already at the failing (last) step: j stays there
    # a #step-N link opens that step
    linked = body_attributes(dump_dom(page, profile=browser, fragment="step-2"))
    assert linked["data-test-initial"] == "2"
    assert linked["data-test-trail"] == "3"


def test_seed_trace_page_shows_rebalances_with_changes_highlighted(tmp_path, browser):
    dom = dump_dom(_page(tmp_path, load_trace(golden_path("kip429-scale-up")), ["j", "j", "j"]), profile=browser)
    body = body_attributes(dom)
    assert body["data-test-initial"] == "0"
    assert body["data-test-trail"] == "1,2,3"
    assert "data-fail" not in body
    assert "S1 performs task assignments:" in dom
    assert 'class="changed"' in dom
    assert "S1(assigned: [T2], revoked: [T1], learning: [])" in dom


def test_screenshot_of_a_counterexample(tmp_path, browser, found, capsys):
    trace_path = tmp_path / "single-owner.json"
    trace_path.write_text(json.dumps(found["single-owner"]), encoding="utf-8")
    out_html = tmp_path / "viewer.html"
    assert main(["show", str(trace_path), "--html", str(out_html)]) == 0
    assert f"fails at step {found['single-owner']['fail_step']}" in capsys.readouterr().out
    png = screenshot(out_html, tmp_path / "viewer.png", profile=browser)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1280, 900)
    assert len(data) > 20_000  # a rendered page, not a blank one
