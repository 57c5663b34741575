"""A branch and bound's open subtrees shared with a second process, with the same answers as one process.

Once a search (:class:`rebalproof.solver.tree.Search`) has solved :data:`SHARE_AFTER` nodes
without closing, its open nodes become *jobs*: each is the subtree below one open node, searched
by a search of its own for the target of the moment, its LP started from the basis its parent's
LP ended with (:class:`Runner`: HiGHS's solver state cleared, then that basis set). A job's
answer is then a function of the model, its bounds, that basis and the target only, whoever
computes it and in whatever order: a run gives the same tree, target
and point with a helper process or without one (tests/test_solver_tree.py).

The helper (:class:`Helper`) is a fresh interpreter (not a fork: the parent's HiGHS, GLOP and SCIP
may hold threads, which a fork does not copy) given the model once; the searching process and the
helper each take the next job as they finish one, so the second core works while the first
does. It starts only where a core is spare (:func:`rebalproof.model.spare_core.core_spare`):
on a busy machine the jobs all run in the searching process, with the same answers. The grafted
tree is checked whole, by exact arithmetic, as any tree is (:func:`rebalproof.solver.tree.check_tree`);
nothing the helper sends is trusted.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
from dataclasses import dataclass

__all__ = ["CHUNK", "HELPER_AFTER", "SHARE_AFTER", "Helper", "JobAnswer", "Runner", "can_share"]

#: Nodes one search solves before its open subtrees become jobs: the root's children on.
SHARE_AFTER = 1
#: Seconds the jobs run in the searching process before a helper is asked for (a short search never starts one).
HELPER_AFTER = 1.0
#: Nodes a job searches before its open nodes become jobs of their own (so both processes stay busy to the end).
CHUNK = 12


@dataclass(frozen=True)
class JobAnswer:
    """What one job found: the subtree it built (None when it closed the search or built nothing), nodes solved, the target it proves and any point met below the target."""

    root: object  # a partial subtree (open nodes in it) when stopped
    solved: int
    target: int
    met: tuple | None
    stopped: str = ""  # out of time or nodes: the subtree stays open where it is not built
    closed: str = ""  # no proof is possible (a point below the target without ``improve``, nothing to branch on)
    better: tuple | None = None  # the point below the target that closed it (without ``improve``)


class Runner:
    """One process's means to search jobs: the model's exact rows and one LP, built once, the LP cleared before each job."""

    def __init__(self, model, *, choices, strong: int, improve: bool, parts=None):
        from rebalproof.solver.tree import _Exact, _NodeLP, _without_objective

        self.model, self.choices, self.strong, self.improve = model, choices, strong, improve
        self.exact, self.phase1 = parts if parts is not None else (_Exact(model), _Exact(_without_objective(model)))
        self.lp = _NodeLP(model)

    def job(self, lower, upper, target: int, basis, deadline_end: float | None, max_nodes: int) -> JobAnswer:
        """The subtree below bounds ``(lower, upper)``, searched for ``target`` from the LP's ``basis`` (its parent's; None: cold)."""
        from rebalproof.solver.tree import Search

        for lp in (self.lp, self.lp.phase_one):
            if lp is not None:
                lp.h.clearSolver()
        if basis is not None:
            self.lp.warm(basis)
        search = Search(self.model, target, choices=self.choices, strong=self.strong, improve=self.improve,
                        parts=(self.exact, self.phase1, self.lp), root_bounds=(list(lower), list(upper)), share=False)
        proof = search.run(deadline_end=deadline_end, max_nodes=max_nodes, check=False)
        if search.closed and proof.root is None:
            return JobAnswer(None, proof.nodes, target, None, closed=search.reason, better=proof.better if proof.better is not None and search.met is None else None)
        if proof.root is None:  # stopped: the subtree built so far (open nodes in it, or None), grafted and searched on later
            return JobAnswer(search.root, proof.nodes, search.target, search.met, stopped=proof.reason or "stopped")
        return JobAnswer(proof.root, proof.nodes, proof.target, proof.better)


def _serve() -> None:
    """The helper process (``python -c``): the model, then one :class:`JobAnswer` per job, pickled over stdin and stdout, until None."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nothing else may write into the answers
    source = sys.stdin.buffer
    model, choices, strong, improve = pickle.load(source)
    runner = Runner(model, choices=choices, strong=strong, improve=improve)
    while True:
        job = pickle.load(source)
        if job is None:
            break
        pickle.dump(runner.job(*job), out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()


class Helper:
    """The second process of a shared search, a fresh interpreter; :meth:`start` takes jobs from a shared list on a thread of this process, sending each to it.

    Started as ``python -c`` (not multiprocessing's ``spawn``, which imports the caller's main
    module again: a script without a ``__main__`` guard would start its whole work again there).
    """

    def __init__(self, model, *, choices, strong: int, improve: bool):
        self._proc = subprocess.Popen([sys.executable, "-c", "from rebalproof.solver.tree_share import _serve; _serve()"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self._model = (model, choices, strong, improve)
        self._thread = None

    def _send(self, obj) -> None:
        pickle.dump(obj, self._proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        self._proc.stdin.flush()

    def start(self, work) -> None:
        """``work()`` on a thread of this process: it takes jobs and gives each to :meth:`job`."""
        self._thread = threading.Thread(target=work, daemon=True)
        self._thread.start()

    def job(self, lower, upper, target: int, basis, deadline_end: float | None, max_nodes: int) -> JobAnswer | None:
        """:meth:`Runner.job` in the helper; None when the helper is gone (the caller searches the job itself)."""
        try:
            if self._model is not None:
                self._send(self._model)
                self._model = None
            self._send((lower, upper, target, basis, deadline_end, max_nodes))
            answer = pickle.load(self._proc.stdout)
        except (EOFError, OSError, pickle.UnpicklingError):
            return None
        return answer if isinstance(answer, JobAnswer) else None

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def close(self) -> None:
        """End the helper process (it is idle once :meth:`join` returned)."""
        try:
            self._send(None)
            self._proc.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._proc.stdout.close()


def can_share() -> bool:
    """Whether a second process may take jobs: a machine of two cores or more with one spare now."""
    from rebalproof.model.spare_core import core_spare

    wish = os.environ.get("REBALPROOF_TREE_HELPER", "auto")
    if wish in ("0", "1"):
        return wish == "1"
    return (os.cpu_count() or 1) >= 2 and core_spare(None)
