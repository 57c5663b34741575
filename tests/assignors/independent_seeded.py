"""Red team round 2: bugs a grader might seed into a correct KIP-441 or KIP-429 assignor.

None is in ``tests/mutants.py``. Each is the correct ``examples/ha_assignor.py`` (or, for the
learner protocol, ``tests/assignors/independent_learner.py``) with one plausible mistake, made
by rewriting what it reads or what it answers, so the bug is exactly the one named:

- :func:`lag_strict` — "caught up" read as ``lag < acceptable_recovery_lag``; seed 002's
  pseudocode says ``else if (instance[task].lag <= acceptable_recovery_lag: // then the rank is
  0, because any instance within acceptable_recovery_lag is considered caught up``.
- :func:`rank_unfloored` — ranks not floored at ``acceptable_recovery_lag`` (seed 002: "Rank has
  a floor of acceptable_recovery_lag"): the member with the lowest lag always wins.
- :func:`standbys_count_the_active` — the active counted as one of ``num_standby_replicas``.
- :func:`copies_kept` — the copies a move leaves behind are never dropped (within the warmup
  budget): seed 002 "Assignment Algorithm" #3 allows extra copies only "to warm up instances that
  it wants to move existing active or standby tasks to", and "max_warmup_replicas" explains the
  last of two rebalances as the one "to realize the movements and drop the old, unbalanced tasks".
- :func:`no_probing` — warmups assigned but no probing rebalance asked for.
- :func:`capacity_inverted` — stream threads read the wrong way round (the member with the most
  threads treated as the one with the fewest).
- :func:`warmups_off_by_one` — ``max_warmup_replicas + 1`` warmups allowed.
- :func:`leaving_gets_a_learner` (learner protocol) — KIP-429 Version 2.0 "leader will perform
  the learner assignment among members without intention of leaving", forgotten: a learner
  goes to a leaving member.
- :func:`leaving_gets_an_active` (learner protocol) — the same sentence, forgotten for actives: a
  leaving member is given one more active.
"""

from __future__ import annotations

import copy

from examples.ha_assignor import assign as correct
from examples.ha_assignor import id_key
from tests.assignors.independent_learner import assign as learner

__all__ = ["lag_strict", "rank_unfloored", "standbys_count_the_active", "copies_kept", "no_probing", "capacity_inverted",
           "warmups_off_by_one", "leaving_gets_a_learner", "leaving_gets_an_active"]


def lag_strict(request: dict) -> dict:
    """A copy exactly ``acceptable_recovery_lag`` behind is read as not caught up."""
    limit = request.get("config", {}).get("acceptable_recovery_lag", 10000)
    seen = copy.deepcopy(request)
    for m in seen["members"]:
        m["lags"] = {t: (lag + 1 if lag == limit else lag) for t, lag in (m.get("lags") or {}).items()}
    return correct(seen)


def rank_unfloored(request: dict) -> dict:
    """``acceptable_recovery_lag`` ignored: the lowest lag wins, however small the others are."""
    seen = copy.deepcopy(request)
    seen.setdefault("config", {})["acceptable_recovery_lag"] = 0
    return correct(seen)


def standbys_count_the_active(request: dict) -> dict:
    """``num_standby_replicas`` read as the number of copies, the active included."""
    seen = copy.deepcopy(request)
    config = seen.setdefault("config", {})
    config["num_standby_replicas"] = max(0, config.get("num_standby_replicas", 0) - 1)
    return correct(seen)


def copies_kept(request: dict) -> dict:
    """A member keeps the state of a stateful task it held in any role going in (as a warmup)
    when the answer gives it none, up to ``max_warmup_replicas`` such copies in all: the
    assignment never drops the old copies after a move, and never exceeds the warmup budget."""
    answer = correct(request)
    budget = request.get("config", {}).get("max_warmup_replicas", 2)
    budget -= sum(len(roles["warmup"]) for roles in answer["assignment"].values())
    stateful = {t["id"] for t in request["tasks"] if t.get("stateful", True)}
    for m in sorted(request["members"], key=lambda m: id_key(m["id"])):
        roles = answer["assignment"].get(m["id"])
        if roles is None:
            continue
        held = set(m.get("active") or ()) | set(m.get("standby") or ()) | set(m.get("warmup") or ())
        for t in sorted(held & stateful, key=id_key):
            if budget > 0 and t not in roles["active"] and t not in roles["standby"] and t not in roles["warmup"]:
                roles["warmup"] = sorted(roles["warmup"] + [t], key=id_key)
                budget -= 1
    return answer


def no_probing(request: dict) -> dict:
    """The warmups go out, the probing rebalance that would promote them is never asked for."""
    answer = correct(request)
    answer["probing_rebalance"] = False
    return answer


def capacity_inverted(request: dict) -> dict:
    """Threads read the wrong way round: capacity c taken as (largest + smallest - c)."""
    caps = [m.get("capacity", 1) for m in request["members"]]
    if not caps:
        return correct(request)
    seen = copy.deepcopy(request)
    for m in seen["members"]:
        m["capacity"] = max(caps) + min(caps) - m.get("capacity", 1)
    return correct(seen)


def warmups_off_by_one(request: dict) -> dict:
    """``max_warmup_replicas`` read as exclusive of one more warmup."""
    seen = copy.deepcopy(request)
    config = seen.setdefault("config", {})
    config["max_warmup_replicas"] = config.get("max_warmup_replicas", 2) + 1
    return correct(seen)


def leaving_gets_a_learner(request: dict) -> dict:
    """The learner assignor run as if nobody were leaving: learners may land on a leaving member."""
    seen = copy.deepcopy(request)
    for m in seen["members"]:
        m["leaving"] = False
    return learner(seen)


def leaving_gets_an_active(request: dict) -> dict:
    """The learner assignor's answer, then one more active for the first leaving member (taken
    from the busiest staying one, its highest task): the leaving member is counted as room."""
    answer = learner(request)
    leaving = sorted((m["id"] for m in request["members"] if m.get("leaving")), key=id_key)
    staying = [m for m in sorted(answer["assignment"], key=id_key) if m not in leaving]
    if not leaving or not staying:
        return answer
    giver = max(staying, key=lambda m: (len(answer["assignment"][m]["active"]), id_key(m)))
    if not answer["assignment"][giver]["active"]:
        return answer
    task = max(answer["assignment"][giver]["active"], key=id_key)
    answer["assignment"][giver]["active"].remove(task)
    to = answer["assignment"][leaving[0]]
    for role in ("standby", "warmup"):
        if task in to[role]:
            to[role].remove(task)
    to["active"] = sorted(to["active"] + [task], key=id_key)
    return answer
