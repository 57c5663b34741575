"""The worked examples (examples/): every documented command gives its documented output.

The commands and outputs are read from ``examples/README.md`` itself (``console`` blocks: a
``$ command`` line, then what it prints; ``pycon`` blocks are run as doctests), so the README
cannot drift from what the tools do. ``...`` in an expected output stands for anything.
Node is required, not optional: without it these tests fail and say so.
"""

import doctest
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from rebalproof.model.assignors.spec import resolve
from rebalproof.model.codec import decode_assignment, decode_input, read_json
from rebalproof.oracle import check
from rebalproof.strategies import rebalance_inputs

from conftest import ROOT

EXAMPLES = ROOT / "examples"
README = EXAMPLES / "README.md"
BIN = Path(sys.executable).parent
NODE = shutil.which("node")


def require_node():
    if NODE is None:
        pytest.fail("node is not on PATH: the JavaScript examples need Node.js (v18 or newer); install it "
                    "(Debian/Ubuntu: apt-get install -y nodejs) and run the tests again")


def blocks(kind: str) -> list[str]:
    return re.findall(rf"^```{kind}\n(.*?)^```", README.read_text(), flags=re.S | re.M)


def commands() -> list[tuple[str, str]]:
    """(command, expected output) for every ``$`` line of the README's console blocks."""
    out = []
    for block in blocks("console"):
        current = None
        for line in block.splitlines():
            if line.startswith("$ "):
                if current:
                    out.append((current[0], "\n".join(current[1])))
                current = (line[2:], [])
            else:
                current[1].append(line)
        if current:
            out.append((current[0], "\n".join(current[1])))
    return out


COMMANDS = commands()


def test_the_readme_documents_every_example_command():
    said = " ".join(c for c, _ in COMMANDS)
    for needed in ("exec:node examples/ha_assignor.js", "py:examples.ha_assignor:assign", "exec:node examples/rotating_assignor.js",
                   "rebalproof oracle examples/inputs/settled.json", "rebalproof oracle --corpus", "pytest -p rebalproof.pytest_plugin",
                   'rebalproof check --assignor "exec:node examples/rotating_assignor.js"',
                   'rebalproof check --assignor "exec:node examples/ha_assignor.js"', "--trace-dir", "rebalproof show",
                   "--symmetry auto", "--symmetry off"):
        assert needed in said, needed


def test_the_readme_catches_the_rotating_assignor_and_passes_the_correct_one_with_the_same_bounds():
    checks = {c: out for c, out in COMMANDS if c.startswith("rebalproof check") and "--stateless" in c}
    rotating = next(out for c, out in checks.items() if "rotating_assignor" in c)
    correct = next(out for c, out in checks.items() if "ha_assignor" in c)
    bounds = {re.sub(r" --trace-dir \S+", "", c.split('"')[2].split(";")[0]) for c in checks}
    assert len(bounds) == 1, bounds  # the same bounds for both
    assert 'Discovered "converges" counterexample, lasso' in rotating and rotating.endswith("exit 1")
    assert correct.endswith("exit 0") and "external calls for" in correct


def _writes(path: str) -> str | None:
    """The README command that writes ``path`` with ``--trace-dir`` (so a later command may read it)."""
    for command, _ in COMMANDS:
        match = re.search(r"--trace-dir ([^\s;]+)", command)
        if match and path.startswith(match.group(1).rstrip("/") + "/") and not command.startswith("rebalproof show"):
            return command
    return None


@pytest.mark.parametrize("command, expected", COMMANDS, ids=[c[:70] for c, _ in COMMANDS])
def test_documented_command_gives_documented_output(command, expected):
    require_node()
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", COLUMNS="80")
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    for name in ("CI", "BUILD_NUMBER"):  # pytest stops truncating its summary on CI; a user's shell is not CI
        env.pop(name, None)
    for path in re.findall(r'"?(/tmp/rebalproof-examples/[^"\s]+)"?', command):
        writer = _writes(path)
        if not Path(path).exists() and writer is not None and writer != command:  # run alone: make the trace first
            subprocess.run(["bash", "-c", writer], cwd=ROOT, env=env, capture_output=True, timeout=120)
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    checker = doctest.OutputChecker()
    got = done.stdout
    if not checker.check_output(expected + "\n", got, doctest.ELLIPSIS):
        pytest.fail(
            f"examples/README.md is out of date for: $ {command}\n--- documented\n{expected}\n--- got (stderr: {done.stderr.strip()!r})\n{got}"
            "(run the command and copy its output into the README, or fix what changed)"
        )


def test_documented_python_session(monkeypatch):
    require_node()
    monkeypatch.chdir(ROOT)
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for i, block in enumerate(blocks("pycon")):
        test = parser.get_doctest(block, {}, f"README pycon block {i}", str(README), 0)
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_stored_answers_and_corpora_are_what_the_examples_answer(monkeypatch):
    require_node()
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import make_corpus

    for path, text in make_corpus.files().items():
        assert path.read_text() == text, f"{path.relative_to(ROOT)} is stale: run python examples/make_corpus.py"


@pytest.fixture(scope="module")
def twins():
    require_node()
    with resolve("py:examples.ha_assignor:assign") as py, resolve(f"exec:node {EXAMPLES / 'ha_assignor.js'}") as js:
        yield py, js


@given(rebalance_inputs())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_python_and_javascript_examples_agree_and_keep_the_rules(twins, view):
    py, js = twins
    answer = js(view)
    assert answer == py(view)
    report = check(view, answer)
    assert report.ok, [v.message for v in report.violations]


def test_the_rotating_assignor_is_right_on_a_fresh_group_and_wrong_on_a_settled_one():
    require_node()
    settled = read_json(EXAMPLES / "inputs" / "settled.json")
    fresh = dict(settled, members=[{"id": m["id"]} for m in settled["members"]], previous_members=[])
    with resolve(f"exec:node {EXAMPLES / 'rotating_assignor.js'}") as rotating:
        assert check(fresh, rotating(decode_input(fresh))).ok
        report = check(settled, rotating(decode_input(settled)))
    assert [v.property for v in report.violations] == ["fixpoint", "stable"]  # a rotation: no move was needed


def test_the_python_example_also_speaks_exec(tmp_path):
    line = json.dumps(read_json(EXAMPLES / "inputs" / "scale_out.json"))
    done = subprocess.run([sys.executable, str(EXAMPLES / "ha_assignor.py")], input=line + "\n" + line + "\n",
                          capture_output=True, text=True, timeout=30, check=True)
    first, second = done.stdout.splitlines()
    view = decode_input(json.loads(line))
    assert first == second  # one answer line per input line, the same answer to the same input
    with resolve("py:examples.ha_assignor:assign") as py:
        assert decode_assignment(json.loads(first), view) == py(view)


#: A big member (2 threads) holding three of four tasks and a new one-thread member with no
#: state: filling subtopology by subtopology planned 3, 1, 0 (I1 1.5 tasks per thread, I3 none),
#: so the example answered unbalanced with no warmup and no probing rebalance. Found by
#: ``check --assignor py:examples.ha_assignor:assign --capacities 2,1 --standbys 0`` (balanced,
#: converges), which the built-in ha passes.
UNEVEN_CAPACITIES = {
    "config": {"num_standby_replicas": 0, "acceptable_recovery_lag": 10000, "max_warmup_replicas": 2},
    "tasks": [{"id": "0_0"}, {"id": "0_1"}, {"id": "1_0"}, {"id": "1_1"}],
    "members": [
        {"id": "I1", "capacity": 2, "active": ["0_0", "0_1", "1_0"], "lags": {"0_0": 0, "0_1": 0, "1_0": 0}},
        {"id": "I2", "capacity": 1, "active": ["1_1"], "lags": {"1_1": 0}},
        {"id": "I3", "capacity": 1},
    ],
    "previous_members": ["I1", "I2"],
}


def test_the_examples_even_out_totals_per_thread_with_unequal_capacities(twins):
    py, js = twins
    view = decode_input(UNEVEN_CAPACITIES)
    answer = py(view)
    assert answer == js(view)
    assert answer.probing_rebalance and answer.of("I3").warmup == ("0_0",), answer
    report = check(view, answer)
    assert report.ok, [v.message for v in report.violations]


@pytest.mark.parametrize("bounds", [["--capacities", "2,1", "--standbys", "0"], ["--capacities", "1,2,4", "--standbys", "0", "--stateless", "2"]])
def test_the_python_example_keeps_every_promise_with_unequal_capacities(bounds, capsys):
    """The example at capacity tiers the sweep of the references found it failing (balanced and
    converges at 2,1; stable at 1,2,4 with stateless tasks, after a first fix moved an owned
    stateless task where an unowned one would do)."""
    from rebalproof.cli.main import main

    assert main(["check", "--assignor", "py:examples.ha_assignor:assign", "--quiet", *bounds]) == 0, capsys.readouterr().out
