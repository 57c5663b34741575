"""A trace as KIP-441's example tables (seed 002 "Example Scenarios"): instances x roles per round.

Seed 002 tells each scenario as a few facts ("Stateful (active) Tasks := {T1, T2, T3}",
"Standby Replicas := 1", "Instances := {I1, I2}"), then a table per round -- one column per
instance, one row per role -- with the events between rounds in dashes
("-- New instance (I3) joins --"). The wiki export lost the tables' layout; this form draws
them again as plain aligned text::

    First Rebalance (catching-up)
                I1      I2      I3
    active      T1, T3  T2
    standby     T2      T1, T3
    warmup                      T1, T3
    (probing rebalance scheduled)

A round's table is the assignor's answer (what the leader decided; KIP-441 reports warmups as
standbys, the contract calls them ``warmup``). The warmup row is drawn when some instance has a
warmup in the trace. Deliveries are one line each round ("-- assignments delivered --") and a
revocation that needs a follow-up rebalance says so. Markers for counterexamples as in
:mod:`rebalproof.traces.render_text`. Output is deterministic.
"""

from __future__ import annotations

from rebalproof.model.names import sorted_ids
from rebalproof.traces.format import Trace
from rebalproof.traces.render_text import _comment_lines, _marks, _steps_suffix, group_ids, header_lines
from rebalproof.traces.rounds import Event, read_story

__all__ = ["render_table", "table_lines", "event_line"]

ROLES = ("active", "standby", "warmup")


def table_lines(columns: list[str], roles: dict, *, show_warmup: bool) -> list[str]:
    """An aligned table: a column per instance, a row per role; ``roles[member] = (active, standby, warmup)``."""
    rows = [r for r in ROLES if r != "warmup" or show_warmup]
    cells = {(r, c): ", ".join(roles.get(c, ((), (), ()))[ROLES.index(r)]) for r in rows for c in columns}
    width0 = max(len(r) for r in rows) + 2
    widths = {c: max([len(c)] + [len(cells[(r, c)]) for r in rows]) + 2 for c in columns}
    out = [(" " * width0 + "".join(c.ljust(widths[c]) for c in columns)).rstrip()]
    for r in rows:
        out.append((r.ljust(width0) + "".join(cells[(r, c)].ljust(widths[c]) for c in columns)).rstrip())
    return out


def _and(xs) -> str:
    xs = list(xs)
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


def event_line(ev: Event) -> list[str]:
    """Seed 002's dashed event lines."""
    m = list(ev.members)
    if ev.kind == "join":
        return [f"-- New instance ({m[0]}) joins --"] if len(m) == 1 else [f"-- New instances ({', '.join(m)}) join --"]
    if ev.kind == "leave":
        return [f"-- One instance ({m[0]}) is brought down --"] if len(m) == 1 else [f"-- Instances ({', '.join(m)}) are brought down --"]
    if ev.kind == "crash":
        return [f"-- The leader ({m[0]}) crashes --"]
    if ev.kind == "mark-leaving":
        return [f"-- {_and(m)} {'is' if len(m) == 1 else 'are'} marked as leaving --"]
    if ev.kind == "restore":
        who = m[0]
        text = f"{who} finishes catching up" if ev.caught_up else f"{who} finishes restoring {', '.join(ev.tasks)}"
        if ev.probe:
            text += ", another rebalance is triggered"
        elif ev.rejoin:
            text += " and rejoins"
        return [f"-- {text} --"]
    if ev.kind == "rejoin":
        return [f"-- {_and(m)} {'rejoins' if len(m) == 1 else 'rejoin'} --"]
    if ev.kind == "probe":
        return ["-- the probing rebalance is triggered --"]
    if ev.kind == "timeout":
        return [f"-- scale-down timeout: {m[0]} shuts down --"]
    if ev.kind == "age":
        return [f"-- {m[0]}'s copy of {ev.tasks[0]} falls behind --"]
    if ev.kind == "cleanup":
        return [f"-- {m[0]} deletes its state of {ev.tasks[0]} --"]
    if ev.kind == "deliver":
        out = [f"-- assignments delivered to {group_ids(m)} --"]
        for mid, lost in ev.revoked:
            out.append(f"-- {mid} revokes {', '.join(lost)}: a follow-up rebalance hands it over --")
        for mid in ev.shutdown:
            out.append(f"-- {mid} shuts down: no task left --")
        return out
    return [f"-- {ev.kind} {' '.join(m)} --"]


def render_table(trace: Trace, *, steps: bool = False, comments: bool = True) -> str:
    """The KIP-441 table form of ``trace`` (see the module docstring), ending with a newline."""
    story = read_story(trace)
    h = story.header
    out = header_lines(h)
    if comments and h.get("comment"):
        out.append(f"// {h['comment']}")
    out.append("")
    tasks = h.get("tasks", [])
    stateful = [t["id"] for t in tasks if t.get("stateful", True)]
    stateless = [t["id"] for t in tasks if not t.get("stateful", True)]
    out.append(f"Stateful (active) Tasks := {{{', '.join(stateful)}}}")
    if stateless:
        out.append(f"Stateless Tasks := {{{', '.join(stateless)}}}")
    out.append(f"Standby Replicas := {h.get('config', {}).get('num_standby_replicas', 0)}")
    s0 = story.start.state
    out.append(f"Instances := {{{', '.join(m.id for m in s0.members)}}}")
    show_warmup = any(s.state.members and any(m.warmup for m in s.state.members) for s in trace.steps) or any(
        any(r[2] for r in b.roles_after.values()) for b in story.blocks
    )

    def events(evs):
        lines = []
        for ev in evs:
            lines += [line + (_steps_suffix(ev.steps) if steps else "") for line in event_line(ev)]
            lines += _comment_lines(ev.comments, comments)
            lines += _marks(story, ev.steps)
        return lines

    out.append("")
    out.append("Initial State" + (_steps_suffix([0]) if steps else ""))
    if s0.members:
        out += table_lines([m.id for m in s0.members], {m.id: (m.active, m.standby, m.warmup) for m in s0.members}, show_warmup=show_warmup)
    else:
        out.append("(no instances)")
    out += _comment_lines([story.start.comment], comments)
    out += _marks(story, [0])
    for b in story.blocks:
        if b.before:
            out.append("")
            out += events(b.before)
        out.append("")
        title = b.title.lstrip("#").rstrip()
        out.append(title + (_steps_suffix([b.step]) if steps else ""))
        if b.error:
            out.append(f"(the assignor failed: {b.error})")
        else:
            columns = sorted_ids(set(b.roles_after) | {m for m in b.roles_before})
            columns = [c for c in columns if c in b.roles_after]
            out += table_lines(columns, b.roles_after, show_warmup=show_warmup)
            for task, to, frm in b.withheld:
                out.append(f"({task} goes to {to} after {frm or 'its owner'} revokes it: a follow-up rebalance hands it over)")
            if b.probing:
                out.append("(probing rebalance scheduled)")
        out += _comment_lines([b.comment], comments)
        out += _marks(story, [b.step])
        out += events(b.after)
    if story.trailing:
        out.append("")
        out += events(story.trailing)
    return "\n".join(out) + "\n"
