"""Red team round 3: a KIP-429 learner assignor following seed 001/000's "Assignment Algorithm".

    Assign active tasks: (if any)
        To instances with learner tasks that indicate "ready"
        To previous owners
        To unready learner tasks owners
        To instances with standby tasks
        To resource available instances
    Keep existing learner tasks' assignment unchanged
    Pick new learner tasks out of heaviest loaded instances
    Assign learner tasks: (if any)
        To new-coming instances with abundant resource
        To instances with corresponding standby tasks
    Assign standby tasks: (if any)
        To instances without matching active tasks
        To previous active task owners after learner transfer in this round
        To resource available instances

Version 2.0 (seed 001 "Version 2.0": "only new instances could take learner tasks" is broken,
leaving members get no learner and their actives are learned by the others), run on the
``learner`` protocol; version 3.0 is the protocol's ``partial_rebalance``; version 4.0 adds
``stream.imbalance.percentage`` ("the total number of tasks each instance owns should be within
the range of +-x% of the expected number of tasks") and balances stateful and stateless tasks
separately.

Choices made on purpose where the seeds leave them open:

- learners go first to instances holding a standby of the task (seed "Standby Task
  Utilization": "we shall prioritize workers which currently have standby tasks that match
  learner assignment"), then to the least loaded instance, new-comers first among equals;
- the task to learn is picked from the heaviest instance, one the destination has a standby
  of first, else the highest id; ties between instances go to the highest id;
- a learner is only made when it strictly lowers the load imbalance (sum of load^2 / threads),
  so learners never shuffle (seed: "we could fall in endless resource shuffling");
- a leaving member's active whose learner is not ready stays on it ("To previous owners");
- stateless tasks move at once (seed "Stateless Tasks": "the ownership transfer should happen
  immediately"), kept by their owner while it is within its fair share of all tasks.
"""

from __future__ import annotations

from collections import defaultdict

from tests.assignors.red3_common import View, empty_answer, finish, natural


def lowest(items, key):
    """min() by key; ties go to the highest natural id."""
    return min(sorted(items, key=natural, reverse=True), key=key)


def revoked_owner(view: View, task: str):
    """A member that reports the task caught up but holds no copy: it revoked it at join
    (KIP-429: being-learned actives are revoked when the rebalance begins)."""
    cands = [m for m in view.members if not view.holds_copy(task, m)
             and view.lag(task, m) is not None and view.lag(task, m) <= view.arl]
    return max(cands, key=natural) if cands else None


class Plan:
    #: hooks for the seeded bugs (``red3_seeded``): read a learner as ready, find a revoked owner,
    #: let a stateless task stay with its owner
    def is_ready(self, t, m):
        return self.v.rank(t, m) == 0

    def previous_owner(self, t):
        return self.v.owner.get(t) or revoked_owner(self.v, t)

    def may_keep_stateless(self, m):
        return m in self.staying

    def __init__(self, view: View, imbalance=None):
        self.v = view
        self.imbalance = imbalance
        self.staying = [m for m in view.members if not view.leaving[m]] or list(view.members)
        self.active_of = {}
        self.learners = defaultdict(set)
        self.standbys = defaultdict(set)

    # -- loads ---------------------------------------------------------------------------
    def stateful_load(self, m):
        """Actives that stay on m plus learners that will become its actives."""
        n = sum(1 for t, o in self.active_of.items() if o == m and self.v.stateful[t] and not self.learners[t])
        n += sum(1 for t, ls in self.learners.items() if m in ls)
        return n

    def load(self, m):
        return sum(1 for o in self.active_of.values() if o == m)

    # -- steps ---------------------------------------------------------------------------
    def actives(self):
        v = self.v
        for t in sorted(v.stateful_tasks(), key=natural, reverse=True):
            ready = [m for m in self.staying if t in v.warmup[m] and self.is_ready(t, m)]
            owner = self.previous_owner(t)
            unready = [m for m in self.staying if t in v.warmup[m]]
            standby = [m for m in self.staying if t in v.standby[m]]
            if ready:
                dest = max(ready, key=natural)
            elif owner is not None:
                dest = owner
            elif unready:
                dest = lowest(unready, lambda m: v.rank(t, m))
            elif standby:
                dest = lowest(standby, lambda m: v.rank(t, m))
            else:
                dest = lowest(self.staying, lambda m: self.load(m) / v.capacity[m])
            self.active_of[t] = dest

    def stateless(self):
        v = self.v
        tasks = sorted(v.stateless_tasks(), key=natural, reverse=True)
        if not tasks:
            return
        cap = sum(v.capacity[m] for m in self.staying)
        if self.imbalance is None:
            n, count = len(v.tasks), self.load
        else:  # version 4.0: stateless tasks balanced on their own
            n = len(tasks)
            count = lambda m: sum(1 for t, o in self.active_of.items() if o == m and not v.stateful[t])  # noqa: E731
        for t in tasks:
            owner = v.owner.get(t)
            if self.may_keep_stateless(owner) and count(owner) < -((-n * v.capacity[owner]) // cap):
                self.active_of[t] = owner
            else:
                self.active_of[t] = lowest(self.staying, lambda m: count(m) / v.capacity[m])

    def keep_learners(self):
        v = self.v
        for m in self.staying:
            for t in v.warmup[m]:
                if v.stateful.get(t) and self.active_of.get(t) != m and not self.learners[t]:
                    self.learners[t].add(m)

    def _destination(self, t, exclude=()):
        v = self.v
        cands = [m for m in self.staying if m != self.active_of[t] and m not in exclude]
        if not cands:
            return None
        new = v.previous if v.previous is not None else set(v.members)
        return lowest(cands, lambda m: (0 if t in v.standby[m] else 1,
                                        self.stateful_load(m) / v.capacity[m],
                                        0 if m not in new else 1))

    def leaving_learners(self):
        v = self.v
        for t in sorted(v.stateful_tasks(), key=natural, reverse=True):
            if v.leaving[self.active_of[t]] and not self.learners[t]:
                dest = self._destination(t)
                if dest is not None:
                    self.learners[t].add(dest)

    def _unbalanced(self):
        v = self.v
        if self.imbalance is None:
            return True
        n = sum(self.stateful_load(m) for m in self.staying)
        cap = sum(v.capacity[m] for m in self.staying)
        for m in self.staying:
            expected = n * v.capacity[m] / cap
            if not (expected * (1 - self.imbalance) <= self.stateful_load(m) <= expected * (1 + self.imbalance)):
                return True
        return False

    def balance_learners(self):
        v = self.v
        for _ in range(len(v.tasks) + 1):
            if len(self.staying) < 2 or not self._unbalanced():
                return
            per = lambda m: self.stateful_load(m) / v.capacity[m]  # noqa: E731
            heavy = max(self.staying, key=lambda m: (per(m), natural(m)))
            light = lowest(self.staying, per)
            lh, ll = self.stateful_load(heavy), self.stateful_load(light)
            ch, cl = v.capacity[heavy], v.capacity[light]
            # strictly lowers sum(load^2 / threads)
            if (1 - 2 * lh) / ch + (2 * ll + 1) / cl >= 0:
                return
            movable = [t for t, o in self.active_of.items()
                       if o == heavy and v.stateful[t] and not self.learners[t]]
            if not movable:
                return
            t = lowest(movable, lambda t: 0 if t in v.standby[light] else 1)
            self.learners[t].add(light)

    def standby_tasks(self):
        v = self.v
        k = min(v.num_standbys, len(v.members) - 1)
        sload = defaultdict(int)
        for t in sorted(v.stateful_tasks(), key=natural, reverse=True):
            need = k - len(self.learners[t])
            if need <= 0:
                continue
            cands = [m for m in v.members if m != self.active_of[t] and m not in self.learners[t]]
            prev_owner = v.owner.get(t) or revoked_owner(v, t)
            cands.sort(key=natural, reverse=True)
            cands.sort(key=lambda m: (1 if v.leaving[m] else 0,
                                      0 if t in v.standby[m] else (1 if m == prev_owner else 2),
                                      sload[m] / v.capacity[m]))
            for m in cands[:need]:
                self.standbys[t].add(m)
                sload[m] += 1

    def answer(self):
        ans = empty_answer(self.v.members)
        for t, m in self.active_of.items():
            ans[m]["active"].append(t)
        for t, ms in self.learners.items():
            for m in ms:
                ans[m]["warmup"].append(t)
        for t, ms in self.standbys.items():
            for m in ms:
                ans[m]["standby"].append(t)
        return finish(ans, False)


def run(inp: dict, imbalance=None, *, steps=None, plan_class=Plan) -> dict:
    p = plan_class(View(inp), imbalance)
    for step in steps or ("actives", "stateless", "keep_learners", "leaving_learners",
                          "balance_learners", "standby_tasks"):
        getattr(p, step)()
    return p.answer()


def assign_v2(inp: dict) -> dict:
    return run(inp)


def assign_v4(inp: dict) -> dict:
    return run(inp, imbalance=0.2)
