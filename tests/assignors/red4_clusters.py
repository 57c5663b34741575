"""Leader views of the clusters people run, for KIP-441 (RebalanceInput JSON), written by red team 4.

8 to 30 members of 1, 2 or 4 stream threads, 2 to 6 subtopologies of 2 to 24 partitions (about
30% stateless), 0 to 2 standbys, 1 to 4 warmups, lags caught up / within
``acceptable_recovery_lag`` / beyond it / none, and a previous balanced layout changed by a
scenario: members added (scale-out), marked leaving, gone, restarted with empty state, or none.
Deterministic per seed: ``gen(seed) -> (scenario, capacity mix, input dict)``.
``python tests/assignors/red4_clusters.py LO HI`` prints seeds LO..HI-1 as JSON lines.
"""
import json
import random
import sys

ACC = 10000


def prev_layout(rng, mids, cap, tasks, stateful, nsb):
    """A balanced previous layout: capacity-weighted round robin of actives, standbys on others."""
    slots = []
    for m in mids:
        slots += [m] * cap[m]
    rng.shuffle(slots)
    active = {}
    load = {m: 0 for m in mids}
    # spread each subtopology across members: iterate tasks grouped by subtopology,
    # each to the member with lowest load/cap
    for t in tasks:
        m = min(mids, key=lambda m: ((load[m] + 1) / cap[m], rng.random()))
        active[t] = m
        load[m] += 1
    standby = {m: set() for m in mids}
    sbl = {m: 0 for m in mids}
    for t in tasks:
        if not stateful[t]:
            continue
        others = [m for m in mids if m != active[t]]
        others.sort(key=lambda m: ((sbl[m] + 1) / cap[m], rng.random()))
        for m in others[:min(nsb, len(mids) - 1)]:
            standby[m].add(t)
            sbl[m] += 1
    return active, standby


def gen(seed):
    rng = random.Random(seed)
    n_sub = rng.randint(2, 6)
    tasks, stateful = [], {}
    for s in range(n_sub):
        np_ = rng.randint(2, 24)
        sf = rng.random() >= 0.3
        for p in range(np_):
            tid = f"{s}_{p}"
            tasks.append(tid)
            stateful[tid] = sf
    nsb = rng.randint(0, 2)
    maxw = rng.randint(1, 4)
    scenario = rng.choice(["scale-out", "leaving", "gone", "steady", "mixed", "restart"])
    n_prev = rng.randint(8, 26)
    capmix = rng.choice(["ones", "mixed", "mixed", "twos", "fours"])

    def newcap():
        if capmix == "ones":
            return 1
        if capmix == "twos":
            return 2
        if capmix == "fours":
            return 4
        return rng.choice([1, 2, 4])

    names = set()
    while len(names) < 40:
        names.add(rng.choice(["I", "c", "node-", "A"]) + format(rng.randrange(16 ** 3), "03x"))
    names = sorted(names)
    rng.shuffle(names)
    prev = names[:n_prev]
    cap = {m: newcap() for m in names}
    active, standby = prev_layout(rng, prev, cap, tasks, stateful, nsb)
    present = list(prev)
    added, gone, leaving = [], [], set()
    if scenario in ("scale-out", "mixed"):
        k = rng.randint(1, max(1, min(30 - n_prev, 6)))
        added = names[n_prev:n_prev + k]
    if scenario in ("gone", "mixed"):
        k = rng.randint(1, max(1, n_prev // 4))
        gone = rng.sample(prev, k)
    if scenario in ("leaving", "mixed"):
        k = rng.randint(1, max(1, n_prev // 4))
        leaving = set(rng.sample([m for m in prev if m not in gone], k))
    present = [m for m in prev if m not in gone] + added
    if len(present) < 8:
        present += names[len(prev) + len(added):][: 8 - len(present)]
    present = present[:30]
    members = []
    for m in present:
        act = sorted(t for t, a in active.items() if a == m) if m in prev else []
        sb = sorted(standby[m]) if m in prev else []
        lags = {}
        for t in tasks:
            if not stateful[t]:
                continue
            r = rng.random()
            if t in act:
                lags[t] = 0 if r < 0.8 else rng.randint(0, ACC)
            elif t in sb:
                if r < 0.7:
                    lags[t] = rng.randint(0, ACC)
                elif r < 0.9:
                    lags[t] = rng.randint(ACC + 1, 10 * ACC)
                # else: state lost
            else:
                if r < 0.04:
                    lags[t] = rng.randint(0, ACC)
                elif r < 0.10:
                    lags[t] = rng.randint(ACC + 1, 50 * ACC)
        if scenario == "restart" and rng.random() < 0.3:
            # a restarted member: empty state dir, holds nothing
            act, sb, lags = [], [], {}
        mem = {"id": m, "capacity": cap[m], "leaving": m in leaving,
               "active": act, "standby": sb, "warmup": [], "lags": lags}
        members.append(mem)
    rng.shuffle(members)
    prev_members = None if rng.random() < 0.05 else sorted(prev)
    inp = {"config": {"num_standby_replicas": nsb, "acceptable_recovery_lag": ACC,
                      "max_warmup_replicas": maxw},
           "tasks": [{"id": t, "stateful": stateful[t]} for t in tasks],
           "members": members, "previous_members": prev_members}
    return scenario, capmix, inp


if __name__ == "__main__":
    lo, hi = int(sys.argv[1]), int(sys.argv[2])
    for s in range(lo, hi):
        sc, cm, inp = gen(s)
        print(json.dumps({"seed": s, "scenario": sc, "capmix": cm, "input": inp}))
