"""Red team 8 (2026-11-29): a KIP-441 assignor written from seed 002 alone, brute-force target search
(``tests/test_red8.py``).

Options (make(**opts)) change only choices the seed leaves open, unless named bug_*:
  tie:       'natural' | 'reverse' | 'hash'   (order among equally good members)
  warm_max:  None (up to max_warmup_replicas) | int (fewer warmups per round)
  warm_pick: 'first' | 'last'  (which planned moves get warmups when over budget)
  probe:     'moves' (probe iff moves pending) | 'extra' (also while any warmup/extra held)
  omit:      omit empty lists / false probing in the output
  standby_pref: 'sticky' | 'target'  (among equal-rank standby candidates: keep holders first, or
             the warm-up target first)
"""
import hashlib
import itertools
import json
import re
import sys

INF = float("inf")


def natkey(s):
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", s) if p != "")


def sub_of(t):
    return t.split("_", 1)[0]


def within_one(counts, cap):
    for i in counts:
        if counts[i] == 0:
            continue
        for j in counts:
            if i != j and counts[i] * cap[j] > (counts[j] + 1) * cap[i]:
                return False
    return True


def spread(counts, cap):
    vals = [counts[m] / cap[m] for m in counts]
    return max(vals) - min(vals) if vals else 0


def make(tie="natural", warm_max=None, warm_pick="first", probe="moves", omit=False,
         standby_pref="sticky", bug=None):
    def assign(inp):
        cfg = inp.get("config") or {}
        nsb = cfg.get("num_standby_replicas", 0)
        arl = cfg.get("acceptable_recovery_lag", 10000)
        budget = cfg.get("max_warmup_replicas", 2)
        if warm_max is not None:
            budget = min(budget, warm_max)
        tasks = [t["id"] for t in inp.get("tasks", [])]
        stateful = {t["id"]: t.get("stateful", True) for t in inp.get("tasks", [])}
        mems = inp["members"]
        ids = [m["id"] for m in mems]
        by = {m["id"]: m for m in mems}
        cap = {m: by[m].get("capacity", 1) for m in ids}

        if tie == "natural":
            tk = lambda m: natkey(m)
        elif tie == "reverse":
            order = sorted(ids, key=natkey, reverse=True)
            tk = lambda m: order.index(m)
        elif tie == "string" :  # plain string order (I10 < I2): a legitimate stable ordering too
            tk = lambda m: m
        else:
            tk = lambda m: hashlib.md5(m.encode()).hexdigest()
        if bug == "string_sort":
            tk = lambda m: m
        ids_sorted = sorted(ids, key=tk)
        elig = [m for m in ids_sorted if not by[m].get("leaving", False)] or ids_sorted

        def lag(m, t):
            l = by[m].get("lags", {})
            if t in l:
                return l[t]
            return 0 if t in by[m].get("active", []) else INF

        def rank(m, t):
            if not stateful[t]:
                return 0
            v = lag(m, t)
            if bug == "lag_strict":
                return 0 if v < arl else v
            return 0 if v <= arl else v

        best = {t: min(rank(m, t) for m in elig) for t in tasks}
        bestset = {t: [m for m in elig if rank(m, t) == best[t]] for t in tasks}
        owner = {}
        for m in elig:
            for t in by[m].get("active", []):
                if t in stateful:
                    owner.setdefault(t, m)
        holds = {m: set(by[m].get("active", [])) | set(by[m].get("standby", [])) | set(by[m].get("warmup", []))
                 for m in ids}
        subs = {}
        for t in tasks:
            subs.setdefault(sub_of(t), []).append(t)

        def balanced(layout):
            c = {m: 0 for m in elig}
            for t in tasks:
                c[layout[t]] += 1
            if not within_one(c, cap):
                return False
            for s, ts in subs.items():
                cs = {m: 0 for m in elig}
                for t in ts:
                    cs[layout[t]] += 1
                if not within_one(cs, cap):
                    return False
            return True

        settled = (all(t in owner for t in tasks)
                   and all(not stateful[t] or rank(owner[t], t) == best[t] for t in tasks)
                   and balanced(owner))
        redeal = bug in ("failover_redeal", "failover_redeal_sl") and inp.get("previous_members") is None
        if bug in ("settled_swap", "settled_swap_sl") and settled and sorted(inp.get("previous_members") or []) == sorted(ids):
            redeal = True
        if bug == "extra_then_swap" and settled:
            w0 = min(nsb, len(elig) - 1)
            if any(stateful[t] and sum(1 for m in ids if t in holds[m]) > 1 + w0 for t in tasks):
                redeal = True
        if settled and not redeal:
            target = dict(owner)
        else:
            best_cost, target = None, None
            rk = {m: i for i, m in enumerate(elig)}
            for combo in itertools.product(elig, repeat=len(tasks)):
                lay = dict(zip(tasks, combo))
                c = {m: 0 for m in elig}
                for m in combo:
                    c[m] += 1
                inst = within_one(c, cap)
                subok = True
                subsp = 0
                for s, ts in subs.items():
                    cs = {m: 0 for m in elig}
                    for t in ts:
                        cs[lay[t]] += 1
                    if not within_one(cs, cap):
                        subok = False
                    subsp += spread(cs, cap)
                notcu = sum(1 for t in tasks if stateful[t] and rank(lay[t], t) != best[t])
                moves = sum(1 for t in tasks if owner.get(t) is not None and owner[t] != lay[t])
                if redeal:
                    moves = -moves
                cost = (not inst, not subok, spread(c, cap), subsp, notcu, moves, tuple(rk[m] for m in combo))
                if best_cost is None or cost < best_cost:
                    best_cost, target = cost, lay

        active = {}
        load = {m: 0 for m in ids}
        moves = []
        for t in tasks:
            g = target[t]
            if stateful[t] and rank(g, t) != best[t]:
                cur = owner.get(t)
                if cur is not None and rank(cur, t) == best[t]:
                    now = cur
                else:
                    now = min(bestset[t], key=lambda m: ((load[m] + 1) / cap[m], tk(m)))
                    if bug == "behind_worst" and best[t] > 0:
                        fin = [m for m in elig if rank(m, t) < INF]
                        if fin:
                            now = max(fin, key=lambda m: (rank(m, t), tk(m)))
                            if now == g:
                                active[t] = g
                                load[g] += 1
                                continue
                moves.append((t, g))
                g = now
            active[t] = g
            load[g] += 1

        wanted = min(nsb, len(elig) - 1)
        standby = {m: [] for m in ids}
        mt = dict(moves)
        copies = dict(load)
        for t in tasks:
            if not stateful[t] or wanted <= 0:
                continue
            def key(m):
                held = 0 if (t in by[m].get("standby", []) or t in by[m].get("warmup", [])) else 1
                tgt = 0 if mt.get(t) == m else 1
                pref = (held, tgt) if standby_pref == "sticky" else (tgt, held)
                return (rank(m, t),) + pref + ((copies[m] + 1) / cap[m], tk(m))
            cands = sorted((m for m in elig if m != active[t] or (bug == "colocate_cap" and cap[m] > 1)), key=key)
            for m in cands[:wanted]:
                standby[m].append(t)
                copies[m] += 1

        if bug in ("stateless_copies", "failover_redeal_sl", "settled_swap_sl") and nsb > 0:
            for t in tasks:
                if not stateful[t]:
                    o = [m for m in elig if m != active[t]]
                    if o:
                        standby[min(o, key=lambda m: (copies[m] / cap[m], tk(m)))].append(t)
        warm = {m: [] for m in ids}
        pending = [(t, g) for t, g in moves if t not in standby[g]]
        if warm_pick == "last":
            pending = list(reversed(pending))
        left = budget
        if bug == "warm_per_member":
            per = {}
            for t, g in pending:
                if per.get(g, 0) < budget:
                    warm[g].append(t)
                    per[g] = per.get(g, 0) + 1
        elif bug == "carry_uncounted":
            for t, g in pending:
                if t in by[g].get("warmup", []):
                    warm[g].append(t)
            for t, g in pending:
                if left <= 0:
                    break
                if t not in warm[g]:
                    warm[g].append(t)
                    left -= 1
        else:
            for t, g in pending:
                if left <= 0:
                    break
                warm[g].append(t)
                left -= 1
        if bug == "useless_warmup" and moves and left > 0:
            done = False
            for t in tasks:
                if done or not stateful[t] or t in mt:
                    continue
                for m in sorted(elig, key=tk, reverse=True):
                    if m != active[t] and t not in standby[m] and t not in warm[m]:
                        warm[m].append(t)
                        left -= 1
                        done = True
                        break
        probing = bool(moves)
        if bug == "extra_then_swap" and not redeal:
            for t in tasks:
                o = owner.get(t)
                if stateful[t] and o is not None and active[t] != o and t not in standby[o] and t not in warm[o] and left > 0:
                    warm[o].append(t)
                    left -= 1
                    probing = True
                if stateful[t] and o is None:
                    for m in ids:
                        if t in by[m].get("warmup", []) and rank(m, t) == 0 and m != active[t] and t not in standby[m] and t not in warm[m] and left > 0:
                            warm[m].append(t)
                            left -= 1
                            probing = True
        if bug == "two_new_no_probe" and inp.get("previous_members") is not None and sum(1 for m in ids if m not in inp["previous_members"]) >= 2:
            probing = False
        if bug == "probe_cap_forever" and len(set(cap.values())) > 1 and len(ids) >= 3:
            probing = True
        if bug == "no_probe_failover" and inp.get("previous_members") is None:
            probing = False
        if probe == "extra":
            probing = probing or any(by[m].get("warmup") for m in ids)

        out = {}
        for m in ids:
            d = {"active": sorted(t for t in tasks if active[t] == m), "standby": standby[m], "warmup": warm[m]}
            if omit:
                d = {k: v for k, v in d.items() if v}
            out[m] = d
        res = {"assignment": out}
        if probing or not omit:
            res["probing_rebalance"] = probing
        return res
    return assign


natural = make()
b_two_new_no_probe = make(bug="two_new_no_probe")
b_extra_then_swap = make(bug="extra_then_swap")
b_useless_warmup = make(bug="useless_warmup")
b_probe_cap_forever = make(bug="probe_cap_forever")
b_settled_swap = make(bug="settled_swap", probe="extra")
b_settled_swap_sl = make(bug="settled_swap_sl", probe="extra")
b_failover_redeal = make(bug="failover_redeal")
b_failover_redeal_sl = make(bug="failover_redeal_sl")
b_stateless_copies = make(bug="stateless_copies")
b_warm_per_member = make(bug="warm_per_member")
b_carry_uncounted = make(bug="carry_uncounted")
b_no_probe_failover = make(bug="no_probe_failover")
b_colocate_cap = make(bug="colocate_cap")
b_behind_worst = make(bug="behind_worst")
b_lag_strict = make(bug="lag_strict")
reverse = make(tie="reverse")
hashed = make(tie="hash")
stringorder = make(tie="string")
warm1 = make(warm_max=1)
warm1_last = make(warm_max=1, warm_pick="last", tie="reverse")
probe_extra = make(probe="extra")
omitted = make(omit=True)
target_pref = make(standby_pref="target", tie="hash")


def main():
    variant = sys.argv[1] if len(sys.argv) > 1 else "natural"
    fn = globals()[variant]
    for line in sys.stdin:
        if not line.strip():
            continue
        res = fn(json.loads(line))
        # shuffled key order, extra whitespace
        out = {"probing_rebalance": res.get("probing_rebalance", False), "assignment": {}}
        for m in reversed(list(res["assignment"])):
            d = res["assignment"][m]
            out["assignment"][m] = {k: d[k] for k in reversed(list(d))}
        sys.stdout.write("  " + json.dumps(out, indent=None, separators=(" , ", " :  ")) + "  \n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
