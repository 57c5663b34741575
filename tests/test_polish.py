"""What a user reads is written for people: natural id order, right plurals, no Python reprs."""

from __future__ import annotations

import re
from pathlib import Path

from rebalproof.cli.main import main
from rebalproof.pipeline.svg import bar_chart
from rebalproof.solver.flow import Cut

SUITE = """
[suite]
name = "polish"
description = "an assignor without a rule set"

[[check]]
name = "cooperative+round-robin"
protocol = "cooperative"
assignor = "round-robin"
bounds = { instances = 2, initial = 1, events = 1, subtopologies = 1, partitions = 2 }

[rebalances]
assignors = ["sticky"]
generated = 2
"""

#: What a Python value looks like when it leaks into text meant for people ("[]" is not here: the
#: seeds' own text form writes "learning: []").
_REPRS = re.compile(r"\bNone\b|\bTrue\b|\bFalse\b|\(\)|\{'|'\}|<[a-z_.]+ object at 0x")


def test_flow_proofs_list_members_in_natural_order():
    upper = Cut(ok=False, kind="upper", tasks=4, room=3, members=("I1", "I10", "I2"))
    assert upper.say() == "4 tasks can only go to I1, I2 and I10, which can take 3"
    lower = Cut(ok=False, kind="lower", tasks=2, room=3, members=("I11", "I9"))
    assert lower.say() == "I9 and I11 must get 3 tasks, but only 2 tasks can go there"


def test_chart_units_agree_with_their_number():
    one = bar_chart([("a", 1)], title="t", unit="rebalances")
    two = bar_chart([("a", 2)], title="t", unit="rebalances")
    assert ">1 rebalance<" in one and "1 rebalances" not in one
    assert ">2 rebalances<" in two
    assert ">1 s<" in bar_chart([("a", 1)], title="t", unit="s")


def test_the_verify_report_shows_no_python_values(capsys, tmp_path: Path):
    suite = tmp_path / "polish.toml"
    suite.write_text(SUITE, encoding="utf-8")
    out = tmp_path / "out"
    code = main(["verify", str(suite), "--out", str(out), "--engine", "local"])
    printed = capsys.readouterr().out
    assert code in (0, 1), printed  # tiny bounds leave witnesses unseen: unexpected, and that is fine here
    html = (out / "report.html").read_text(encoding="utf-8")
    text = re.sub(r"<[^>]+>", " ", html.split("<body>", 1)[1])
    assert "(rules: none)" in text
    leaks = sorted(set(m.group(0) for m in _REPRS.finditer(text)))
    assert not leaks, f"report.html shows Python values: {leaks}"
    leaks = sorted(set(m.group(0) for m in _REPRS.finditer(printed)))
    assert not leaks, f"verify prints Python values: {leaks}\n{printed}"


def test_the_matrix_fits_a_laptop_and_not_promised_is_not_a_failure():
    from rebalproof.pipeline.report import _matrix

    entry = {"property": "bounded-unavailability", "status": "not promised", "outcome": "pass",
             "message": "not promised (only cooperative with the ha rules); observed: violated"}
    finding = {"property": "converges", "status": "violated", "outcome": "expected finding", "message": "never settles"}
    files = {"bounded-unavailability": {"json": "traces/a.json", "html": "traces/a.html"},
             "converges": {"json": "traces/b.json", "html": "traces/b.html"}}
    html = _matrix({"checks": [{"name": "learner+naive-any", "properties": [entry, finding], "trace_files": files}]})
    not_promised = re.search(r'<td class="np"[^>]*>(.*?)</td>', html).group(1)
    assert "<a " not in not_promised and "trace" not in not_promised
    violated = re.search(r'<td class="finding"[^>]*>(.*?)</td>', html).group(1)
    assert 'href="traces/b.html"' in violated
    assert '<td class="check">learner+naive-any</td>' in html  # checks as rows, in the sticky first column
    assert 'th class="prop"><span>converges</span>' in html  # properties as columns, names written upwards
