"""Partial-order reduction of the group model: ample sets, chosen by one pure function.

Both engines (the local BFS, :mod:`rebalproof.model.explorer`, and the level-synchronous Spark
BFS, :mod:`rebalproof.pipeline.groupbfs`) call :func:`ample_expand` with the state, its BFS
depth's ``is_old(fingerprint)`` answer and the fingerprinter, and explore exactly what it returns,
so they reduce identically (docs/DESIGN.md "Partial-order reduction").

What the properties read (:mod:`rebalproof.properties.run`) decides what may be reduced. The
per-rebalance judge reads the leader's whole view at every rebalance, lags included, so a
restore that might happen before *or* after some later rebalance changes which views are judged:
it is visible to the judge. The reduction therefore works only where no rebalance can ever
happen again (:func:`quiet`): no rebalance needed or scheduled, the membership budget used up,
nobody leaving, ready or able to become ready, no pending delivery that revokes. That region is
closed under every action and acyclic, and in it the only actions are deliveries, restores,
aging and cleanup.

Independence (both orders enabled, one state reached) and visibility there:

- ``restore m t`` of a member ``m`` with no delivery pending is independent of every other action
  of the region: deliveries to others touch only their own member, restores and aging of other
  copies touch other lag entries, and nothing else can disable it (only a delivery to ``m`` could
  revoke the copy). It changes one lag class, never a role, a trigger, ``pending`` or ``ready``
  (a behind learner under the learner protocol is excluded by :func:`quiet`), so it is invisible
  to every state property (``single-owner``, ``no-lost-task``, ``settles``, balance of settled
  states) and every edge witness. It does change which tasks are processed, which only the
  unavailability *measures* read, weighted along rebalance edges, of which the region has none.
- ``deliver m`` to a member with no restore enabled is independent of every other action of the
  region (deliveries to others, restores of others; aging needs a stable group). It is not
  invisible: it changes roles and ``pending``. It is taken alone anyway because in the region a
  delivery never revokes an active (eager members revoked everything at the join; a revoking
  delivery under the cooperative and learner protocols keeps a state out of the region), so the
  owners of each task only grow until every delivery has arrived: ``single-owner`` is broken in
  the region iff it is broken once everything is delivered, ``no-lost-task``, ``settles`` and the
  balance of settled states read only states with nothing pending, whose roles are the same
  whatever the order, and ``warmup-promoted`` reads the delivered entry and the member's own
  learners, which no other step of the region changes. A property added later that reads
  states with deliveries pending in another way must be argued again here.
- ``age``/``cleanup`` (enabled only when stable) are independent of each other across copies and
  invisible like restores; they are chosen only when no restore or delivery is enabled, so a
  state with a fair action enabled keeps one as an out-edge (the ``settled`` states are the same).

The ample set is one action (C0: never empty when something is enabled; C1: independent of all
that can run before it, by the structure above; C2: invisible, or, for deliveries, the
monotonicity above). C3 (the cycle proviso) holds twice: the region is acyclic (each action
lowers pending deliveries, then behind hosted copies, then ``3 x caught-up unhosted + behind
unhosted``), and, as both engines need it the same, a state at depth ``d`` reduces only when the
ample successor was not discovered at a depth ``<= d`` (``is_old``): a successor first found at
``d + 1`` earlier in the same level counts as new, so the state of greatest depth on any cycle
is expanded in full.

Where requested rebalances are judged (at every quiescent state, ``RunMonitor.on_expand``) the
reduction must keep every quiescent state of the region: ``keep_quiescent`` (:func:`ample_action`).

Everything before the region is explored in full, so every rebalance the full exploration
reaches (the judge's views, owner changes, decisive rounds), every cycle (liveness under
fairness) and every membership event is reached alike; the region adds no cycle and no
rebalance edge.
"""

from __future__ import annotations

from rebalproof.model.group_state import BEHIND, Action, GroupState

__all__ = ["quiet", "ample_action", "ample_expand", "REDUCIBLE_KINDS"]

#: The kinds an ample set may consist of (everything else is expanded in full).
REDUCIBLE_KINDS = frozenset({"restore", "deliver", "age", "cleanup"})


def quiet(model, s: GroupState) -> bool:
    """True when no rebalance can happen in any run from ``s`` (the region :func:`ample_action` reduces).

    Every way a rebalance becomes due is closed: no trigger now; no membership event left in the
    budget (join, leave, crash, mark-leaving); no probing rebalance scheduled; no leaving member
    (its timeout or its last hand-over would trigger one); no member ready, and under the learner
    protocol no behind learner and no pending learner that could make one ready; no pending
    delivery that revokes an active (under the cooperative and learner protocols it triggers a
    rebalance; under eager a member has revoked everything before its delivery anyway).
    """
    if s.triggers or s.probe or s.events < model.bounds.events:
        return False
    proto = model.protocol
    held = {}
    for m in s.members:
        if m.leaving or m.ready:
            return False
        if proto.ready_rejoin and any(c == BEHIND and t in m.warmup for t, c in m.lags):
            return False
        held[m.id] = m.active
    for member, active, _standby, warmup in s.pending:
        if proto.ready_rejoin and warmup:
            return False
        if set(held.get(member, ())) - set(active):  # a revoking delivery: a rebalance may follow
            return False  # (and in the region owners only grow, which the deliveries' reduction needs)
    return True


def ample_action(model, s: GroupState, actions: list[Action], *, keep_quiescent: bool = False) -> Action | None:
    """The one action of an ample set of ``s`` (``actions`` are its enabled ones), or None: expand in full.

    The first restore, in the stable action order, of a member with no delivery pending; else
    the first delivery to a member with no restore enabled; else, when no restore and no
    delivery is enabled, the first aging or cleanup step.

    ``keep_quiescent``: every quiescent state the full exploration reaches is reached too (where
    a rebalance requested with nothing changed is judged at each, ``RunMonitor.on_expand``).
    Only deliveries (to a member with no restore enabled) are taken alone, and a quiescent
    state, where nothing is pending, is expanded in full. A delivery so taken is executed on
    every path to a quiescent state (nothing is pending there), no other action of the region
    disables it or changes its member, so any such path can have it first: the quiescent states
    reachable after it are those reachable before. A restore taken alone would lose the
    quiescent states where a later delivery arrived before it.
    """
    if len(actions) < 2 or not quiet(model, s):
        return None
    waiting = {e[0] for e in s.pending}
    if keep_quiescent:
        if not waiting:
            return None  # quiescent (in the region nothing else keeps a state from it): in full
        restoring = {a.member for a in actions if a.kind == "restore"}
        return next((a for a in actions if a.kind == "deliver" and a.member not in restoring), None)
    for a in actions:
        if a.kind == "restore" and a.member not in waiting:
            return a
    restoring = {a.member for a in actions if a.kind == "restore"}
    for a in actions:
        if a.kind == "deliver" and a.member not in restoring:
            return a
    if any(a.kind in ("restore", "deliver") for a in actions):
        return None
    for a in actions:
        if a.kind in ("age", "cleanup"):
            return a
    return None


def ample_expand(
    model, s: GroupState, *, fingerprint, is_old, keep_quiescent: bool = False
) -> tuple[list[tuple[Action, GroupState]], bool]:
    """``(successors, reduced)``: what an engine explores from ``s``; ``reduced`` when an ample set was used.

    ``fingerprint(state) -> int`` is the engine's fingerprinter, ``is_old(fp) -> bool`` says
    whether ``fp`` was discovered at a depth ``<= d`` (``d`` the depth of ``s``);
    ``keep_quiescent`` as :func:`ample_action` takes it. Pure and picklable (a module-level
    function of picklable values).
    """
    if quiet(model, s):
        actions = model.actions(s)
        chosen = ample_action(model, s, actions, keep_quiescent=keep_quiescent)
        if chosen is not None:
            nxt = model.next_state(s, chosen)
            if nxt is not None and not is_old(fingerprint(nxt)):
                return [(chosen, nxt)], True
        # what ``model.expand(s)`` gives, from the actions already listed
        successors = []
        for action in actions:
            nxt = model.next_state(s, action)
            if nxt is not None:
                successors.append((action, nxt))
        return successors, False
    return model.expand(s), False
