"""A built-in assignor's answers computed ahead, on the machine's second core.

A breadth-first run discovers a state long before it expands it (the queue holds a third of the
states at once), and the view a rebalance from that state will show the assignor is fixed when
the state is discovered. :class:`AnswersAhead` sends the view key of each discovered state that
needs a rebalance to a child process forked from the explorer's (so it has the model and the
assignor), which computes the answers while the explorer expands the states before it; when the
explorer expands the state, the model's chooser
(:class:`~rebalproof.model.group_assignor.MemoChooser`) takes the answers instead of computing
them (:meth:`AnswersAhead.take`), waiting for them if the child is not there yet.

Only for a *built-in* assignor (a pure, deterministic function of the view: the answers are the
ones it would compute here), never for an implementation under test (``py:``, ``exec:``: its
calls, timing and failures are findings of this process). The child checks each answer as the
chooser does (an :class:`~rebalproof.model.assignment.Assignment` naming only the view's
members); on a failure of any kind it sends nothing for the key, and the chooser asks the
assignor here, which raises the finding as it always does. So a run with answers ahead
explores the same states with the same answers, and counts the same assignor calls and memo
hits. The child starts only when a core is spare (:func:`~rebalproof.model.spare_core.core_spare`,
over the run so far): on a machine whose cores are all busy the answers are computed here. The child ignores SIGINT and SIGTERM and ends when its pipe closes
(:meth:`AnswersAhead.close`).

``check --partitions 3`` (cooperative + ``ha``) asks 17,041 views; about a fifth of the
explorer's CPU went to ``ha`` on the 10,435 new shapes among them.
"""

from __future__ import annotations

import multiprocessing
import queue
import signal
import threading
from typing import Callable

from rebalproof.model.assignment import Assignment
from rebalproof.model.codec import check_ids
from rebalproof.model.helper_memory import children_peak as _children_peak, own_peak as _own_peak, private_bytes
from rebalproof.model.spare_core import core_spare, cpu_times

__all__ = ["AnswersAhead", "START_AFTER", "can_fork"]

#: Distinct keys offered before the child is started (a small check never forks).
START_AFTER = 256
#: Keys sent to the child at once (one pipe message).
_BATCH = 16


class AnswersAhead:
    """Answers of ``chooser.inner`` on views offered ahead of time; see the module docstring.

    ``view_of(key)`` rebuilds the view of a view key; ``known(key)`` says whether the chooser
    already has the answers of ``key`` (nothing to compute).
    """

    def __init__(self, inner, view_of: Callable, known: Callable):
        self._inner = inner
        self._view_of = view_of
        self._known = known
        self._offered = 0  # distinct keys offered before the child started
        self._asked: set = set()  # keys sent (or to be sent), answers not taken yet
        self._ready: dict = {}  # key -> answers, or None: compute them here
        self._batch: list = []
        self._lock = threading.Condition()
        self._closed = False
        self._conn = self._proc = self._reader = None
        self._since = cpu_times()  # the machine's idle time from here decides whether the child starts
        #: (peak RSS of the children reaped before the child, this process's peak RSS and the
        #: child's private bytes when it ended), in bytes; see
        #: :func:`~rebalproof.model.explorer.peak_with_helpers`
        self.memory: tuple[int, int, int] | None = None

    def _start(self) -> None:
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, self._inner, self._view_of), daemon=True)
        self._proc.start()
        child.close()
        self._conn = parent
        self._reader = threading.Thread(target=self._receive, daemon=True)
        self._reader.start()
        self._outbox: queue.SimpleQueue = queue.SimpleQueue()
        self._writer = threading.Thread(target=self._send, daemon=True)
        self._writer.start()

    def offer(self, key) -> None:
        """A state whose rebalance shows the view of ``key`` was discovered: compute its answers."""
        if self._closed or key in self._asked or self._known(key):
            return
        if self._proc is None:
            self._offered += 1
            if self._offered < START_AFTER:
                return  # computed here when asked
            if not core_spare(self._since):  # every core busy: the child would only add its overhead
                self._closed = True
                return
            try:
                self._start()
            except OSError:
                self._closed = True
                return
        self._asked.add(key)
        self._batch.append(key)
        if len(self._batch) >= _BATCH:
            self._flush()

    def take(self, key):
        """The answers on the view of ``key`` computed ahead (waiting for them), or None: compute here."""
        if key not in self._asked:
            return None
        self._asked.discard(key)
        if key in self._batch:  # not sent yet: send it now
            self._flush()
        with self._lock:
            while key not in self._ready and not self._closed:
                self._lock.wait()
            return self._ready.pop(key, None)

    def _flush(self) -> None:
        batch, self._batch = self._batch, []
        if batch and not self._closed:
            self._outbox.put(batch)  # sent by the writer thread: the explorer never waits on the pipe

    def _send(self) -> None:
        """The writer thread: batches of keys (then None, the end) to the child, in order."""
        while True:
            batch = self._outbox.get()
            try:
                self._conn.send(batch)
            except (OSError, ValueError):
                self._stopped()
                return
            if batch is None:
                return

    def _receive(self) -> None:
        """The reader thread: answers as the child sends them, then its private memory."""
        try:
            while True:
                results = self._conn.recv()
                if isinstance(results, int):  # its last word: its private bytes
                    self.memory = (_children_peak(), _own_peak(), results)
                    break
                with self._lock:
                    self._ready.update(results)
                    self._lock.notify_all()
        except (EOFError, OSError, ValueError):
            pass
        self._stopped()

    def _stopped(self) -> None:
        with self._lock:
            self._closed = True
            self._lock.notify_all()

    def close(self) -> None:
        """End the child (every key not taken is forgotten), its memory noted in :attr:`memory`."""
        if self._proc is None:
            self._closed = True
            return
        self._outbox.put(None)  # no more keys: the child sends its private memory and ends
        # a complete run took every answer it asked for, so the child is idle: it answers at once;
        # a run cut short may leave it a backlog, which is not waited for (the time limit)
        self._reader.join(timeout=1)
        self._stopped()
        self._conn.close()
        self._writer.join(timeout=2)
        self._proc.join(timeout=0 if self.memory is None else 5)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()
        self._proc = None


def _serve(conn, inner, view_of: Callable) -> None:
    """The child: the answers of each key of each batch, checked as the chooser checks them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        while True:
            batch = conn.recv()
            if batch is None:
                conn.send(private_bytes())
                break
            conn.send([(key, _answers(inner, view_of, key)) for key in batch])
    except (EOFError, OSError):
        pass
    finally:
        conn.close()


def _answers(inner, view_of: Callable, key):
    """The checked answers on the view of ``key``, or None (the parent computes them itself)."""
    try:
        view = view_of(key)
        answers = tuple(inner.choices(view))
        if not answers:
            return None
        for answer in answers:
            if not isinstance(answer, Assignment):
                return None
            check_ids(answer, view)
        return answers
    except Exception:  # noqa: BLE001 - any failure: the parent asks the assignor and reports it
        return None


def can_fork() -> bool:
    """Whether this platform can fork a helper process."""
    return "fork" in multiprocessing.get_all_start_methods()
