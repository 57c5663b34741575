"""Red team round 2: an assignor equivariant by construction, to exercise ``--symmetry auto``.

The independent planner (:mod:`tests.assignors.independent_ha`) asked on a *canonical* renaming
of its input (members, including those only named in ``previous_members``, renamed ``c0, c1, ...``
and partitions permuted within their subtopology, choosing the renaming whose JSON sorts first),
its answer renamed back. Renaming the input therefore renames the answer, up to an automorphism
of the input, so ``--symmetry auto`` reduces. Tie-breaks now follow the canonical form, which may
change from one rebalance to the next: at ``--instances 4 --initial 3 --events 3`` it shuffles
for ever (``converges`` and ``no-shuffle-cycle`` violated with ``--symmetry off`` or ``on``),
where the plain planner holds.
"""

from __future__ import annotations

import itertools
import json

from tests.assignors.independent_ha import assign as planner

__all__ = ["canonical", "assign"]


def _ids(raw):
    ids = [m["id"] for m in raw["members"]]
    for p in raw.get("previous_members") or []:
        if p not in ids:
            ids.append(p)
    return ids


def _subs(raw):
    subs = {}
    for t in raw["tasks"]:
        s = t["id"].partition("_")[0]
        subs.setdefault(s, []).append(t["id"])
    return subs


def _rename(raw, mm, tm):
    out = {"config": raw.get("config", {}), "tasks": sorted(({**t, "id": tm[t["id"]]} for t in raw["tasks"]), key=lambda t: t["id"])}
    ms = []
    for m in raw["members"]:
        n = dict(m, id=mm[m["id"]])
        for r in ("active", "standby", "warmup"):
            n[r] = sorted(tm[t] for t in (m.get(r) or []))
        n["lags"] = dict(sorted((tm[t], l) for t, l in (m.get("lags") or {}).items()))
        n.setdefault("capacity", 1)
        n.setdefault("leaving", False)
        ms.append(n)
    out["members"] = sorted(ms, key=lambda m: m["id"])
    pm = raw.get("previous_members")
    out["previous_members"] = None if pm is None else sorted(mm[p] for p in pm)
    return out


def canonical(raw):
    """(key, renamed input, member map, task map) of the renaming of ``raw`` whose JSON sorts first."""
    ids = _ids(raw)
    subs = _subs(raw)
    best = None
    names = [f"c{i}" for i in range(len(ids))]
    for perm in itertools.permutations(names):
        mm = dict(zip(ids, perm))
        for tperms in itertools.product(*[itertools.permutations(v) for v in subs.values()]):
            tm = {}
            for orig, new in zip(subs.values(), tperms):
                tm.update(zip(orig, new))
            r = _rename(raw, mm, tm)
            key = json.dumps(r, sort_keys=True)
            if best is None or key < best[0]:
                best = (key, r, mm, tm)
    return best


def assign(raw):
    """The planner on the canonical renaming of ``raw`` (see the module docstring), renamed back."""
    _, r, mm, tm = canonical(raw)
    ans = planner(r)
    im = {v: k for k, v in mm.items()}
    it = {v: k for k, v in tm.items()}
    out = {}
    for m, roles in ans["assignment"].items():
        out[im[m]] = {k: sorted(it[t] for t in v) for k, v in roles.items()}
    return {"assignment": out, "probing_rebalance": ans["probing_rebalance"]}
