"""External assignors: a Python callable (``py:``) or a program speaking JSON lines (``exec:``).

docs/DESIGN.md "External assignors and the exec protocol": a slow, crashing or malformed implementation is a *finding*
about that implementation (:class:`~rebalproof.errors.AssignorError`, carrying the input that
caused it), never a crash of rebalproof. Setting one up wrongly (a module that does not import,
a command that is not there) is the user's to fix: :class:`~rebalproof.errors.InputError`.

The ``exec:`` protocol, stated once here:

- one process per :class:`ExecAssignor`, started at the first call (no shell: the command is
  split like a shell would, then run directly), in its own process group;
- per call we write one ``RebalanceInput`` as one line of compact JSON (every default written
  out) on its stdin and read exactly one line from its stdout, which must be an ``Assignment``
  for that input; all three pipes are non-blocking and multiplexed with :mod:`selectors`, so a
  child that never reads, never answers or floods its stderr cannot block us;
- each call has a deadline (``timeout`` seconds; the first call after a start also gets
  ``start_timeout`` for the program to start up, 0 unless asked);
- the child's stderr is captured (its last lines go into a finding), never passed through;
- on a finding the whole process group is killed and reaped, and the next call starts a fresh
  process; :meth:`ExecAssignor.close` (and, as a safety net, garbage collection or interpreter
  exit) does the same, so no process outlives us and none is left a zombie.

Finding kinds: ``crash`` (the program exited or closed its stdout without answering, or a
``py:`` function raised), ``timeout`` (no answer line by the deadline), ``malformed`` (not one
line of JSON in the shape of an ``Assignment``), ``invalid`` (an ``Assignment``, but not for
that input: unknown member or task ids, an input member missing).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
import time
import traceback
import weakref
from collections import deque
from typing import Callable

from rebalproof.errors import AssignorError, InputError
from rebalproof.model.assignment import Assignment
from rebalproof.model.codec import check_ids, decode_assignment, dumps_canonical, encode_input
from rebalproof.model.view import RebalanceInput
from rebalproof.reading import parse_json

__all__ = ["ExecAssignor", "PyAssignor", "load_callable", "judge_answer", "where_raised", "MAX_LINE_BYTES"]

#: Longest answer line we accept; a longer one is a ``malformed`` finding (and bounds our memory).
MAX_LINE_BYTES = 64 * 1024 * 1024
_STDERR_LINES = 8  # last lines of the child's stderr kept for a finding
#: A stderr line that names the failure. Node.js and the JVM write it before the stack frames, so
#: the last lines alone lost it (red team 10); the first such line is kept beside them.
_ERROR_LINE = re.compile(r"(Error|Exception|Traceback|panic|FATAL|fatal)\b")
_SHOWN = 200  # characters of a bad answer quoted in a finding


def _shorten(text: str, limit: int = _SHOWN) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def judge_answer(obj, view: RebalanceInput, *, assignor: str, input_json: dict) -> Assignment:
    """The :class:`Assignment` in ``obj``, or an :class:`AssignorError` saying why it is not one.

    ``malformed`` when ``obj`` is not in the shape of the contract's ``Assignment``;
    ``invalid`` when it is, but names ids the input does not or leaves out an input member.
    """
    try:
        assignment = decode_assignment(obj)
    except InputError as exc:
        raise AssignorError(
            f"{assignor} answered a malformed assignment on the input below: {exc}",
            kind="malformed",
            assignor=assignor,
            input_json=input_json,
        ) from None
    try:
        check_ids(assignment, view)
    except InputError as exc:
        raise AssignorError(
            f"{assignor} answered an assignment that does not fit the input below: {exc}",
            kind="invalid",
            assignor=assignor,
            input_json=input_json,
        ) from None
    return assignment


# --------------------------------------------------------------------------------------- py:


def load_callable(target: str) -> Callable:
    """Import ``package.module:function``; an :class:`InputError` that says how to fix it otherwise.

    The current directory is tried last, as ``python -m`` would, so a module next to the user
    is found without setting ``PYTHONPATH``.
    """
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise InputError(f"py:{target}: write py:package.module:function, e.g. py:my_assignor:assign")
    try:
        module = _import(module_name)
    except ModuleNotFoundError as exc:
        raise InputError(
            f"py:{target}: cannot import module '{module_name}' ({exc}); install it or add its folder to PYTHONPATH"
        ) from None
    except Exception as exc:  # the user's module failed while importing: theirs to fix
        raise InputError(
            f"py:{target}: importing '{module_name}' failed with {type(exc).__name__}: {exc}; fix the module"
        ) from None
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            names = sorted(n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n)))
            raise InputError(
                f"py:{target}: module '{module_name}' has no '{attr}'; its functions are {', '.join(names) or 'none'}"
            ) from None
    if not callable(obj):
        raise InputError(f"py:{target}: '{attr}' is a {type(obj).__name__}, not a function taking the input dict")
    return obj


def _import(module_name: str):
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        here = os.getcwd()
        missing_top = exc.name is not None and module_name.split(".")[0] == exc.name.split(".")[0]
        if not missing_top or here in sys.path or "" in sys.path:
            raise
        sys.path.append(here)
        return importlib.import_module(module_name)


def where_raised(exc: BaseException) -> str:
    """``file:line in function`` of the innermost frame of a traceback."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" at {os.path.basename(last.filename)}:{last.lineno} in {last.name}"


class PyAssignor:
    """``py:package.module:function``: the function gets the input's JSON object, returns the answer's.

    It runs in our process, so there is no timeout: run it through ``exec:`` to get one.
    """

    def __init__(self, target: str, *, name: str | None = None):
        self.function = load_callable(target)
        self.name = name or f"py:{target}"
        self.calls = 0

    def __call__(self, view: RebalanceInput) -> Assignment:
        self.calls += 1
        input_json = encode_input(view)
        try:
            answer = self.function(encode_input(view))  # a fresh copy: the function may mutate it
        except Exception as exc:
            raise AssignorError(
                f"{self.name} crashed on the input below: {type(exc).__name__}: {exc}{where_raised(exc)}",
                kind="crash",
                assignor=self.name,
                input_json=input_json,
            ) from None
        if not isinstance(answer, dict):
            raise AssignorError(
                f"{self.name} answered a malformed assignment on the input below: returned a "
                f"{type(answer).__name__}, not a dict in the contract's Assignment shape",
                kind="malformed",
                assignor=self.name,
                input_json=input_json,
            )
        return judge_answer(answer, view, assignor=self.name, input_json=input_json)

    def close(self) -> None:
        """Nothing to release; here so that every assignor can be closed alike."""


# ------------------------------------------------------------------------------------- exec:


def _find_executable(program: str, command: str) -> str:
    if os.sep in program or (os.altsep and os.altsep in program):
        if not os.path.exists(program):
            raise InputError(f"exec: '{program}' not found; give a command on PATH or a path")
        if os.path.isdir(program) or not os.access(program, os.X_OK):
            raise InputError(
                f"exec: '{program}' is not an executable file; chmod +x it, or name its interpreter: "
                f"exec:python3 {shlex.join(shlex.split(command))}"
            )
        return program
    found = shutil.which(program)
    if found is None:
        raise InputError(f"exec: '{program}' not found; give a command on PATH or a path")
    return found


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the child's whole process group, then reap the child (no zombie)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:
                pass


class _Finding(Exception):
    """Internal: how one exchange went wrong, turned into an :class:`AssignorError` by the caller."""

    def __init__(self, kind: str, what: str):
        self.kind = kind
        self.what = what
        super().__init__(what)


class ExecAssignor:
    """``exec:COMMAND``: one long-lived process answering one JSON line per input line.

    Parameters
    ----------
    command : str
        The program and its arguments, split like a shell would (no shell runs it).
    timeout : float
        Seconds each call may take.
    start_timeout : float, optional
        Extra seconds for the first call after the process starts (default 0: the first call
        has ``timeout`` like any other, start-up included).
    name : str, optional
        How findings name it (default ``exec:COMMAND``).
    """

    def __init__(self, command: str, *, timeout: float = 10.0, start_timeout: float | None = None, name: str | None = None):
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise InputError(f"exec:{command}: cannot split the command ({exc}); check its quotes") from None
        if not argv:
            raise InputError("exec: give a command after 'exec:', e.g. exec:'python3 my_assignor.py'")
        if not timeout > 0:
            raise InputError(f"timeout must be more than 0 seconds, got {timeout}")
        self.argv = [_find_executable(argv[0], command)] + argv[1:]
        self.command = command
        self.name = name or f"exec:{command}"
        self.timeout = float(timeout)
        self.start_timeout = 0.0 if start_timeout is None else float(start_timeout)
        self.calls = 0
        self.starts = 0
        self._proc: subprocess.Popen | None = None
        self._reaper = None
        self._out = bytearray()
        self._err_tail: deque[str] = deque(maxlen=_STDERR_LINES)
        self._err_first: str | None = None  # the first stderr line naming an error (_ERROR_LINE)
        self._err_partial = b""
        self._fresh = False
        self._last_input: dict | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        """The running child's process id, or None when none runs."""
        return self._proc.pid if self._proc is not None else None

    def _start(self) -> None:
        try:
            proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                close_fds=True,
                start_new_session=True,  # its own process group: a timeout kills its children too
            )
        except OSError as exc:
            raise InputError(f"exec: cannot start '{self.argv[0]}': {exc.strerror or exc}; check that it is a program") from None
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            os.set_blocking(pipe.fileno(), False)
        self._proc = proc
        self._reaper = weakref.finalize(self, _kill_group, proc)  # safety net if close() is forgotten
        self._out.clear()
        self._err_tail.clear()
        self._err_first = None
        self._err_partial = b""
        self._fresh = True
        self.starts += 1

    def _stop(self) -> int | None:
        """Kill and reap the process (if any); its exit code, negative for a signal."""
        proc, reaper = self._proc, self._reaper
        self._proc = self._reaper = None
        if proc is None:
            return None
        code = proc.poll()
        reaper()  # kills the group, reaps, closes the pipes; runs once
        return code

    def close(self) -> None:
        """Kill the process if one runs; the next call would start a new one."""
        self._stop()

    def __enter__(self) -> "ExecAssignor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- one call ----------------------------------------------------------------------------
    def __call__(self, view: RebalanceInput) -> Assignment:
        """The answer to ``view``, sent as canonical JSON (every default written out, keys sorted)."""
        input_json = encode_input(view)
        return self._call(input_json, view, dumps_canonical(input_json))

    def call_json(self, obj: dict, view: RebalanceInput) -> Assignment:
        """The answer to ``obj`` sent *as given*: its members, lists and keys in the order listed.

        ``obj`` must be the JSON object of ``view`` (in any order); the answer is judged against
        ``view``. Metamorphic ``reordering`` (:mod:`rebalproof.properties.metamorphic`) uses this
        to show the program the same input listed in other orders.
        """
        if not isinstance(obj, dict):
            raise InputError(f"call_json sends a RebalanceInput object, got a {type(obj).__name__}")
        return self._call(obj, view, json.dumps(obj, separators=(",", ":")))

    def _call(self, input_json: dict, view: RebalanceInput, text: str) -> Assignment:
        self.calls += 1
        if self._proc is not None:
            self._check_no_extra_output()
        if self._proc is None:
            self._start()
        timeout = self.timeout + (self.start_timeout if self._fresh else 0.0)
        self._fresh = False
        self._last_input = input_json
        started = time.monotonic()
        try:
            line = self._exchange((text + "\n").encode(), started + timeout)
            obj = self._parse(line)
        except _Finding as finding:
            raise self._finding(finding, input_json, timeout) from None
        except BaseException:  # KeyboardInterrupt mid-call: never leave the child behind
            self._stop()
            raise
        try:
            return judge_answer(obj, view, assignor=self.name, input_json=input_json)
        except AssignorError:
            self._stop()  # a wrong answer: start clean next time
            raise

    def _exchange(self, data: bytes, deadline: float) -> bytes:
        proc = self._proc
        pending = memoryview(data)
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdin, selectors.EVENT_WRITE, "in")
            sel.register(proc.stdout, selectors.EVENT_READ, "out")
            sel.register(proc.stderr, selectors.EVENT_READ, "err")
            while True:
                end = self._out.find(b"\n")
                if end >= 0:
                    line = bytes(self._out[:end])
                    del self._out[: end + 1]
                    if self._out:
                        raise _Finding(
                            "malformed",
                            f"wrote more than one line for one input (next: {_shorten(self._out.decode('utf-8', 'replace'))!r}); "
                            "answer exactly one Assignment line per input line",
                        )
                    return line
                if len(self._out) > MAX_LINE_BYTES:
                    raise _Finding("malformed", f"wrote more than {MAX_LINE_BYTES} bytes without a newline")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise _Finding("timeout", "")
                for key, _ in sel.select(remaining):
                    if key.data == "in":
                        try:
                            written = os.write(key.fd, pending[:65536])
                        except BlockingIOError:
                            continue
                        except BrokenPipeError:  # it stopped reading; its stdout will tell why
                            sel.unregister(key.fileobj)
                            continue
                        pending = pending[written:]
                        if not pending:
                            sel.unregister(key.fileobj)
                    elif key.data == "out":
                        chunk = self._read(key.fd)
                        if chunk == b"":
                            raise _Finding("crash", "")
                        self._out += chunk or b""
                    else:
                        chunk = self._read(key.fd)
                        if chunk == b"":
                            sel.unregister(key.fileobj)
                        elif chunk:
                            self._feed_stderr(chunk)

    @staticmethod
    def _read(fd: int) -> bytes | None:
        """Up to 64 KiB from a non-blocking pipe: b"" at end of file, None when nothing is there yet."""
        try:
            return os.read(fd, 65536)
        except BlockingIOError:
            return None

    def _feed_stderr(self, chunk: bytes) -> None:
        lines = (self._err_partial + chunk).split(b"\n")
        self._err_partial = lines.pop()[-4096:]
        for raw in lines:
            text = raw.decode("utf-8", "replace").rstrip()
            if text:
                self._err_line(_shorten(text))

    def _err_line(self, text: str) -> None:
        self._err_tail.append(text)
        if self._err_first is None and _ERROR_LINE.search(text):
            self._err_first = text

    def _drain_stderr(self) -> None:
        """Read what the (dead) child left on stderr, without blocking."""
        proc = self._proc
        if proc is None:
            return
        while True:
            chunk = self._read(proc.stderr.fileno())
            if not chunk:
                break
            self._feed_stderr(chunk)
        if self._err_partial.strip():
            self._err_line(_shorten(self._err_partial.decode("utf-8", "replace").rstrip()))
            self._err_partial = b""

    def _check_no_extra_output(self) -> None:
        """Output waiting before we asked anything belongs to the last input: too many lines."""
        chunk = self._read(self._proc.stdout.fileno())
        if chunk:
            self._out += chunk
        if self._out:
            extra = _shorten(self._out.decode("utf-8", "replace").strip())
            finding = _Finding(
                "malformed",
                f"wrote more than one line for one input (next: {extra!r}); answer exactly one Assignment line per input line",
            )
            raise self._finding(finding, self._last_input, self.timeout)
        # chunk == b"" (end of file) is noticed by the next exchange as a crash, with this input

    def _parse(self, line: bytes):
        text = line.decode("utf-8", "replace").rstrip("\r")
        if not text.strip():
            raise _Finding("malformed", "answered an empty line; answer one Assignment JSON object per line")
        try:
            return parse_json(line.rstrip(b"\r\n"), where="answer")
        except InputError as exc:
            raise _Finding("malformed", f"answered a line that is not one JSON document ({exc}): {_shorten(text)!r}") from None

    def _finding(self, finding: _Finding, input_json: dict | None, timeout: float) -> AssignorError:
        """Kill the child, gather its stderr, and word the finding."""
        proc = self._proc
        code = None
        partial = bytes(self._out)  # what it wrote of an answer line, with no end of line yet
        if finding.kind == "crash" and proc is not None:
            try:  # it closed its stdout: give it until its deadline to exit and tell us its code
                code = proc.wait(timeout=max(0.05, min(1.0, timeout)))
            except subprocess.TimeoutExpired:
                code = None
        if proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
            self._drain_stderr()
        self._stop()
        details = []
        if finding.kind == "crash":
            if code is None:
                what = "closed its output without answering (still running: killed)"
            elif code < 0:
                what = f"was killed by signal {-code} ({_signal_name(-code)}) before answering"
                details.append(f"exit code {code}")
            else:
                what = "exited without answering"
                details.append(f"exit code {code}")
            verb = "crashed"
        elif finding.kind == "timeout":
            verb = "timed out"
            what = f"no answer within {timeout:g} s; killed its process group"
        else:
            verb = "answered malformed output"
            what = finding.what
        if partial and finding.kind in ("crash", "timeout"):
            details.append(f"it wrote {len(partial)} bytes with no end of line: "
                           f"{_shorten(partial.decode('utf-8', 'replace'))!r}; end each answer with a newline and flush")
        if self._err_tail:
            lines = list(self._err_tail)
            if self._err_first is not None and self._err_first not in lines:
                lines = [self._err_first, "...", *lines]
            details.append("stderr: " + " | ".join(lines))
        else:
            details.append("stderr: empty")
        message = f"{self.name} {verb} on the input below: {what} ({'; '.join(details)})"
        return AssignorError(message, kind=finding.kind, assignor=self.name, input_json=input_json)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"
