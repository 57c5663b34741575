"""External assignors: every misbehaviour of an ``exec:`` program is a finding of the right kind,
with the input attached, within the timeout; ``py:`` set-up errors are usage errors.

No test sleeps: the misbehaving programs (``tests/assignors/``) hang or sleep themselves, and
our per-call timeout is what ends them.
"""

from __future__ import annotations

import os
import re
import select
import shlex
import sys
import time
from pathlib import Path

import pytest

from rebalproof.errors import AssignorError, InputError
from rebalproof.model.assignors.external import ExecAssignor
from rebalproof.model.assignors.spec import resolve
from rebalproof.model.codec import decode_input, encode_input
from rebalproof.model.view import Member, RebalanceInput, Task

PROGRAMS = Path(__file__).resolve().parent / "assignors"
TIMEOUT = 0.5


def program(name: str, *args: str) -> str:
    """The command line running one of the test assignor programs with this Python."""
    return shlex.join([sys.executable, str(PROGRAMS / name), *args])


def make_view(tasks: int = 4, members: int = 2) -> RebalanceInput:
    return RebalanceInput(
        tasks=tuple(Task(id=f"0_{i}") for i in range(tasks)),
        members=tuple(Member(id=f"I{i + 1}") for i in range(members)),
    )


def children_state() -> dict[int, str]:
    """pid -> state letter of every child process of this test process (from /proc)."""
    me, out = os.getpid(), {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == me:
            out[int(entry)] = fields[0]
    return out


def gone(pid: int, *, within: float = 2.0) -> bool:
    """True when ``pid`` has exited (or exits within ``within`` s: SIGKILL is delivered asynchronously).

    Waits on a pidfd, which becomes readable when the process exits: no polling, no sleep.
    """
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], within)
        return bool(readable)
    finally:
        os.close(fd)


@pytest.fixture(autouse=True)
def no_leftover_children():
    before = set(children_state())
    yield
    left = {pid: s for pid, s in children_state().items() if pid not in before}
    assert not left, f"child processes left behind (pid: state): {left}"


@pytest.fixture
def starts_file(tmp_path, monkeypatch):
    path = tmp_path / "starts"
    monkeypatch.setenv("REBALPROOF_TEST_STARTS", str(path))
    return path


def finding(assignor, view) -> tuple[AssignorError, float]:
    started = time.monotonic()
    with pytest.raises(AssignorError) as info:
        assignor(view)
    return info.value, time.monotonic() - started


# ------------------------------------------------------------------------------- exec: works


def test_one_process_answers_every_call(starts_file):
    view = make_view()
    with resolve(f"exec:{program('correct.py')}", timeout=5) as assignor:
        answers = [assignor(make_view(tasks=n)) for n in range(1, 6)]
        pid = assignor.backend.pid
        assert assignor.calls == 5 and assignor.starts == 1 and assignor.rules is None
    assert [len(a.of("I1").active) + len(a.of("I2").active) for a in answers] == [1, 2, 3, 4, 5]
    assert starts_file.read_text().split() == [str(pid)]
    assert gone(pid)
    assert view.member_ids == ("I1", "I2")


def test_close_kills_and_the_next_call_starts_again(starts_file):
    assignor = ExecAssignor(program("correct.py"), timeout=5)
    assignor(make_view())
    first = assignor.pid
    assignor.close()
    assert assignor.pid is None and gone(first)
    assignor(make_view())
    assert assignor.starts == 2 and assignor.pid != first
    assignor.close()
    assignor.close()  # twice is fine
    assert len(starts_file.read_text().split()) == 2


def test_slow_start_within_the_timeout_is_no_finding():
    with ExecAssignor(program("slow_start.py", "0.2"), timeout=3) as assignor:
        assert assignor(make_view()).of("I1").active == ("0_0", "0_2")
        assert assignor(make_view()).of("I2").active == ("0_1", "0_3")


def test_start_timeout_gives_the_first_call_more_time():
    with ExecAssignor(program("slow_start.py", "0.6"), timeout=0.3, start_timeout=2) as assignor:
        assignor(make_view())
        started = time.monotonic()
        assignor(make_view())  # later calls are fast
        assert time.monotonic() - started < 0.3


def test_slow_start_past_the_timeout_is_a_timeout():
    with ExecAssignor(program("slow_start.py", "5"), timeout=TIMEOUT) as assignor:
        error, took = finding(assignor, make_view())
    assert error.kind == "timeout" and took < TIMEOUT + 1.5


def test_big_input_and_a_flood_on_stderr_do_not_deadlock():
    flood = (
        f"import sys; sys.path.insert(0, {str(PROGRAMS)!r}); import _common; "
        "sys.stderr.write('x' * (1 << 20) + '\\nlast words\\n'); sys.stderr.flush(); _common.serve()"
    )
    view = make_view(tasks=3000, members=3)  # about 100 KB of JSON: more than a pipe holds
    with ExecAssignor(shlex.join([sys.executable, "-c", flood]), timeout=10) as assignor:
        assert len(assignor(view).of("I3").active) == 1000


def test_a_program_that_never_reads_times_out_on_a_big_input():
    view = make_view(tasks=3000)
    with ExecAssignor(shlex.join([sys.executable, "-c", "import time; time.sleep(3600)"]), timeout=TIMEOUT) as assignor:
        error, took = finding(assignor, view)
    assert error.kind == "timeout" and took < TIMEOUT + 1.5


# -------------------------------------------------------------------------- exec: findings


def test_crash_is_a_finding_with_exit_code_stderr_and_input():
    view = make_view()
    with ExecAssignor(program("crash.py"), timeout=5) as assignor:
        error, took = finding(assignor, view)
    assert error.kind == "crash" and error.assignor.startswith("exec:")
    assert "crashed on the input below" in str(error)
    assert "exit code 3" in str(error) and "boom: cannot assign" in str(error)
    assert decode_input(error.input_json) == view
    assert took < 2


def test_after_a_finding_the_process_is_restarted(starts_file):
    with ExecAssignor(program("crash.py", "1"), timeout=5) as assignor:
        assignor(make_view())
        first = assignor.pid
        error, _ = finding(assignor, make_view(tasks=2))
        assert error.kind == "crash" and decode_input(error.input_json) == make_view(tasks=2)
        assert assignor.pid is None and gone(first)
        assignor(make_view())
        assert assignor.starts == 2 and assignor.calls == 3
    assert len(starts_file.read_text().split()) == 2


@pytest.mark.parametrize("mode", ["read", "sleep"])
def test_hang_is_a_timeout_and_the_process_is_killed(mode):
    view = make_view()
    with ExecAssignor(program("hang.py", mode), timeout=TIMEOUT) as assignor:
        assignor.calls  # noqa: B018 - nothing started yet
        assert assignor.pid is None
        started = time.monotonic()
        with pytest.raises(AssignorError) as info:
            assignor(view)
        took = time.monotonic() - started
        assert assignor.pid is None
    error = info.value
    assert error.kind == "timeout" and TIMEOUT <= took < TIMEOUT + 1.5
    assert f"no answer within {TIMEOUT:g} s" in str(error) and f"mode {mode}" in str(error)
    assert decode_input(error.input_json) == view


def test_timeout_kills_the_whole_process_group():
    with ExecAssignor(program("hang.py", "child"), timeout=TIMEOUT) as assignor:
        error, _ = finding(assignor, make_view())
    grandchild = int(re.search(r"grandchild (\d+)", str(error)).group(1))
    assert error.kind == "timeout" and gone(grandchild)


@pytest.mark.parametrize(
    "mode, kind, says",
    [
        ("text", "malformed", "not JSON"),
        ("list", "malformed", "must be a JSON object"),
        ("empty", "malformed", "empty line"),
        ("unknown-task", "invalid", "unknown task '9_9'"),
        ("missing-member", "invalid", "member 'I2' of the input is missing"),
    ],
)
def test_wrong_answers_are_findings(mode, kind, says, starts_file):
    view = make_view()
    with ExecAssignor(program("garbage.py", mode), timeout=5) as assignor:
        for _ in range(2):
            error, took = finding(assignor, view)
            assert error.kind == kind and says in str(error) and took < 2
            assert error.input_json == encode_input(view)
        assert assignor.pid is None  # killed after each finding
    assert len(starts_file.read_text().split()) == 2


@pytest.mark.parametrize("mode, kind, says", [
    ("wait", "timeout", "it wrote 170 bytes with no end of line: '{\"assignment\": {\"I1\": {\"active\": [\"0_0\""),
    ("exit", "crash", "it wrote 20 bytes with no end of line: '{\"assignment\": {\"I1\"'"),
])
def test_an_answer_without_its_end_of_line_says_what_arrived(mode, kind, says):
    """Red team 10: a whole answer left without a newline (``print(..., end="")``, no flush of the
    line) was only 'no answer within 0.5 s'."""
    with ExecAssignor(program("unterminated.py", mode), timeout=TIMEOUT) as assignor:
        error, _ = finding(assignor, make_view())
    assert error.kind == kind and says in str(error), str(error)
    assert "end each answer with a newline and flush" in str(error)


def test_a_crash_keeps_the_error_line_before_its_stack_frames():
    """Red team 10: Node.js (and the JVM) write the error before the frames, and the last eight
    lines of stderr were frames only."""
    with ExecAssignor(program("unterminated.py", "stack"), timeout=5) as assignor:
        error, _ = finding(assignor, make_view())
    text = str(error)
    assert error.kind == "crash" and "stderr: TypeError: Cannot read properties of undefined (reading 'slice') | ... |" in text, text
    assert text.count("at frame") == 8 and "frame9" in text and "frame1 " not in text


def test_two_lines_for_one_input_is_malformed():
    with ExecAssignor(program("wrong_lines.py"), timeout=5) as assignor:
        error, _ = finding(assignor, make_view())
    assert error.kind == "malformed" and "more than one line for one input" in str(error)


# ---------------------------------------------------------------------- exec: set-up errors


def test_command_not_found_is_a_usage_error():
    with pytest.raises(InputError, match=r"exec: 'no-such-assignor' not found; give a command on PATH or a path"):
        resolve("exec:no-such-assignor --fast")
    with pytest.raises(InputError, match="not found"):
        resolve("exec:./nowhere/assignor")


def test_not_executable_and_empty_commands_are_usage_errors():
    with pytest.raises(InputError, match="not an executable file; chmod"):
        resolve(f"exec:{PROGRAMS / 'correct.py'}")
    with pytest.raises(InputError, match="give a command after 'exec:'"):
        resolve("exec:  ")
    with pytest.raises(InputError, match="check its quotes"):
        resolve("exec:python 'unclosed")
    with pytest.raises(InputError, match="more than 0 seconds"):
        resolve(f"exec:{program('correct.py')}", timeout=0)


# ------------------------------------------------------------------------------------- py:


@pytest.fixture
def pyassignors(monkeypatch):
    monkeypatch.syspath_prepend(str(PROGRAMS))


def test_py_function_gets_the_dict_and_answers_a_dict(pyassignors):
    with resolve("py:pyassignors:good") as assignor:
        answer = assignor(make_view())
        assert answer.of("I1").active == ("0_0", "0_2") and assignor.calls == 1 and assignor.kind == "py"


@pytest.mark.parametrize(
    "function, kind, says",
    [
        ("raises", "crash", "ZeroDivisionError: integer division or modulo by zero at pyassignors.py:"),
        ("returns_none", "malformed", "returned a NoneType, not a dict"),
        ("bad_shape", "malformed", "must be a list of ids"),
        ("unknown_member", "invalid", "unknown member 'ghost'"),
    ],
)
def test_py_misbehaviour_is_a_finding(pyassignors, function, kind, says):
    view = make_view()
    with resolve(f"py:pyassignors:{function}") as assignor:
        with pytest.raises(AssignorError) as info:
            assignor(view)
    assert info.value.kind == kind and says in str(info.value)
    assert info.value.input_json == encode_input(view)


@pytest.mark.parametrize(
    "spec, says",
    [
        ("py:no_such_module_xyz:assign", "cannot import module 'no_such_module_xyz'"),
        ("py:pyassignors:nothing", "has no 'nothing'; its functions are"),
        ("py:pyassignors:NOT_A_FUNCTION", "is a int, not a function"),
        ("py:pyassignors", "write py:package.module:function"),
    ],
)
def test_py_set_up_errors_are_usage_errors(pyassignors, spec, says):
    with pytest.raises(InputError, match=re.escape(says)):
        resolve(spec)


# ------------------------------------------------------------------------------- built-ins


def test_unknown_spec_lists_built_ins_and_prefixes():
    with pytest.raises(InputError) as info:
        resolve("fastest")
    message = str(info.value)
    assert "unknown assignor 'fastest'" in message
    assert "py:package.module:function" in message and "exec:COMMAND" in message
    assert "ha" in message and "sticky" in message


def test_built_in_with_options_resolves():
    with resolve("learner:version=1") as assignor:
        assert assignor.kind == "builtin" and assignor.rules
        answer = assignor(make_view())
        assert sorted(t for _, a in answer.members for t in a.active) == ["0_0", "0_1", "0_2", "0_3"]
    with pytest.raises(InputError, match="does not take option"):
        resolve("learner:colour=blue")
