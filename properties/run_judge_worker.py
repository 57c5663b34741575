"""The per-rebalance judge on the machine's second core, while the explorer goes on.

Judging every distinct (leader view, answer) the exploration reaches
(:class:`~rebalproof.properties.run_rebalance.RebalanceJudge`) is about a seventh of ``check
--partitions 3``'s CPU, and nothing the exploration does next depends on it: only the verdicts
and the first violating edge of each property do. :class:`JudgeWorker` judges in a child process
forked from the checking process (so it has the model and rebuilds each view from its key); the
parent sends each new (view key, answer choice, answer) and goes on exploring, and collects the
verdicts when the exploration ends (:meth:`JudgeWorker.finish`).

The result is the one judging in-process gives, whatever the timing:

- the child runs the same :meth:`RebalanceJudge.verdict` (the same memo by view and by shape) on
  the pairs in the order the parent first met them, and sends every verdict back in that order;
- the parent notes each verdict's masks on its own judge and records each violation at the first
  edge that reached the pair, in the same order, so every property's first discovery is the
  in-process one (discoveries are first-come, and no other check records these properties).

It is used only where nothing reads a verdict before the exploration ends: not with
``stop_early`` (stopping at the first violation needs each verdict at once). The first
:data:`LOCAL_FIRST` pairs are judged in-process, so small checks never fork; where ``fork`` is
not available, no core is spare when the child would start (:func:`~rebalproof.model.spare_core.core_spare`,
over the run so far), or the child fails, the rest are judged in-process too. The child ignores
SIGINT and SIGTERM (the parent's budget decides when to stop) and ends when the parent closes
its pipe.
"""

from __future__ import annotations

import multiprocessing
import signal
from typing import Callable

from rebalproof.model.helper_memory import children_peak, own_peak, private_bytes
from rebalproof.model.spare_core import core_spare, cpu_times
from rebalproof.properties.run_rebalance import RebalanceJudge

__all__ = ["JudgeWorker", "LOCAL_FIRST"]

#: Pairs judged in-process before the child is started (a small check never forks).
LOCAL_FIRST = 512
#: Pairs sent to the child at once (one pipe message).
_BATCH = 128


class JudgeWorker:
    """Defers ``judge``'s verdicts to a forked child; see the module docstring.

    ``view_of(key)`` rebuilds the view of a view key (the model's ``view_from_key``);
    ``record(name, message, src, action)`` records a violation found at edge ``src --action-->``.
    """

    def __init__(self, judge: RebalanceJudge, view_of: Callable, record: Callable):
        self.judge = judge
        self._view_of = view_of
        self._record = record
        self._seen: set = set()  # (key, choice) pairs met so far
        self._sent: list = []  # (key, choice, answer, src, action) of the pairs deferred, in order met
        self._batch: list = []
        self._conn = None
        self._proc = None
        self._failed = not _can_fork()
        self._since = cpu_times()  # the machine's idle time from here decides whether the child starts
        #: (peak RSS of the children reaped before the worker, this process's peak RSS and the
        #: worker's private bytes when its verdicts came in), in bytes: see
        #: :func:`~rebalproof.model.helper_memory.peak_with_helpers`
        self.memory: tuple[int, int, int] | None = None

    def submit(self, key, choice: int, step, src: int, action) -> None:
        """The rebalance edge ``src --action-->`` reached the pair (``key``, ``choice``) answered by ``step``."""
        pair = (key, choice)
        if pair in self._seen:
            return  # met before, at an earlier edge: its verdict is noted and recorded there
        self._seen.add(pair)
        if len(self._seen) <= LOCAL_FIRST or self._failed:
            self._judge_here(key, choice, step, src, action)
            return
        if self._proc is None and not self._sent and not core_spare(self._since):
            self._failed = True  # every core busy: the child would only add its overhead; judged here
            self._judge_here(key, choice, step, src, action)
            return
        self._sent.append((key, choice, step.assignment, src, action))
        self._batch.append((key, choice, step.assignment))
        if len(self._batch) >= _BATCH:
            self._flush()

    def _judge_here(self, key, choice, step, src, action) -> None:
        # the step's own view: the model built it for the assignor (the view of ``key``)
        hit = self.judge.verdict(key, choice, step)
        self._apply(hit, src, action)

    def _apply(self, hit, src, action) -> None:
        digest, bad, unsure, messages = hit
        self.judge._note(digest, bad, unsure)
        for name, message in messages:
            self._record(name, message, src, action)

    def _flush(self) -> None:
        batch, self._batch = self._batch, []
        if self._failed:
            return
        try:
            if self._proc is None:
                self._start()
            self._conn.send(batch)
        except (OSError, ValueError, EOFError):
            self._fail()

    def _start(self) -> None:
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe()
        judge = self.judge
        self._proc = ctx.Process(
            target=_serve, args=(child, judge.rules, judge.names, judge.by_shape, self._view_of), daemon=True
        )
        self._proc.start()
        child.close()
        self._conn = parent

    def _fail(self) -> None:
        """The child is gone: everything deferred is judged here (see :meth:`finish`)."""
        self._failed = True
        self._stop()

    def _stop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._proc is not None:
            self._proc.join(timeout=5)
            if self._proc.is_alive():
                self._proc.kill()
                self._proc.join()
            self._proc = None

    def finish(self) -> None:
        """Collect every deferred verdict, note it and record its violations, in the order met."""
        sent, self._sent = self._sent, []
        if not sent:
            self._stop()
            return
        verdicts: list = []
        if not self._failed:
            self._flush()
            try:
                if not self._failed:
                    self._conn.send(None)  # no more pairs: send the verdicts
                    verdicts, judged, private = self._conn.recv()
                    self.judge.judged += judged
                    self.memory = (children_peak(), own_peak(), private)
            except (OSError, EOFError, ValueError):
                verdicts = []
            self._stop()
        if len(verdicts) != len(sent):  # the child failed: judge the pairs here, from the same memo
            verdicts = [self.judge.verdict(key, choice, _Step(self._view_of(key), answer)) for key, choice, answer, _, _ in sent]
        for (_, _, _, src, action), hit in zip(sent, verdicts):
            self._apply(hit, src, action)


class _Step:
    """What the judge reads of a rebalance step: the view and the answer."""

    __slots__ = ("view", "assignment")

    def __init__(self, view, assignment):
        self.view = view
        self.assignment = assignment


def _serve(conn, rules, names, by_shape: bool, view_of: Callable) -> None:
    """The child: judge each batch of pairs as it comes, send every verdict back at the end."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    judge = RebalanceJudge(rules, names, by_shape=by_shape)
    verdicts = []
    try:
        while True:
            batch = conn.recv()
            if batch is None:
                break
            for key, choice, answer in batch:
                # each pair comes once (the parent sends only new ones): no memo by pair
                verdicts.append(judge.verdict(key, choice, _Step(view_of(key), answer), keep=False))
        conn.send((verdicts, judge.judged, private_bytes()))
    except (EOFError, OSError):
        pass
    finally:
        conn.close()


def _can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()
