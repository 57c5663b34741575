"""A trace in the seeds' own text form (seed 001's scenarios), line for line.

The layout follows seed 001's code blocks, so that a reader can hold ``rebalproof show`` next to
the seed and match it line by line::

    Cluster has 3 stream workers S1(leader), S2, S3
    Group stable state: S1[T1, T2], S2[T3, T4], S3[T5]

    #Second Rebalance
    New member S5 joins the group.
    Member S1~S5 join with following status: (S4 is not ready yet)
    	S1(assigned: [T2], revoked: [T1], learning: [])
    	...
    S1 performs task assignments:
    	S1(assigned: [T1, T2], revoked: [], learning: [])

What each column means is defined once, in :mod:`rebalproof.traces.rounds`. Lines the seeds do
not have are kept few and recognisable: deliveries ("Assignment delivered to S1~S4."), a
hand-over the protocol withholds, the trace's comments (``// ...``), and for a counterexample the
marker of the failing step (``!! ...``) and of a lasso's cycle (``~~ ...``). ``steps=True``
appends the trace step numbers to each line (``[step 5]``). Output is deterministic.

Examples
--------
>>> from rebalproof.traces.make_seeds import golden_path
>>> from rebalproof.traces.replay import load_trace
>>> text = render_text(load_trace(golden_path("kip429-scale-up")), comments=False)
>>> print("\\n".join(text.splitlines()[3:6]))
Cluster has 3 stream workers S1(leader), S2, S3
Group stable state: S1[T1, T2], S2[T3, T4], S3[T5]
<BLANKLINE>
"""

from __future__ import annotations

import re

from rebalproof.model.group_state import GroupState
from rebalproof.traces.format import Trace
from rebalproof.traces.rounds import Event, MemberLine, RebalanceBlock, Story, read_story

__all__ = ["render_text", "member_line", "ids", "group_ids", "header_lines", "capacity_text", "event_sentence"]


def ids(xs) -> str:
    """``[T1, T2]`` as the seeds write lists."""
    return "[" + ", ".join(xs) + "]"


_NUM = re.compile(r"^(.*?)(\d+)$")


def group_ids(members, *, joiner: str = ", ") -> str:
    """``S1~S5`` for a run of consecutive ids with one prefix (as the seeds write it), else a list."""
    members = list(members)
    if len(members) >= 2:
        parts = [_NUM.match(m) for m in members]
        if all(parts) and len({p.group(1) for p in parts}) == 1:
            nums = [int(p.group(2)) for p in parts]
            if nums == list(range(nums[0], nums[0] + len(nums))):
                return f"{members[0]}~{members[-1]}"
    return joiner.join(members)


def member_line(line: MemberLine) -> str:
    """``S1(assigned: [T2], revoked: [T1], learning: [])``, with ``standby: [...]`` when it has standbys."""
    text = f"{line.member}(assigned: {ids(line.assigned)}, revoked: {ids(line.revoked)}, learning: {ids(line.learning)}"
    if line.standby:
        text += f", standby: {ids(line.standby)}"
    return text + ")"


def _and(xs) -> str:
    xs = list(xs)
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


def event_sentence(ev: Event) -> list[str]:
    """The seed-style sentence(s) of one event."""
    m = list(ev.members)
    if ev.kind == "join":
        return [f"New member {m[0]} joins the group."] if len(m) == 1 else [f"Member {', '.join(m)} join the group."]
    if ev.kind == "leave":
        return [f"Member {m[0]} leaves the group."] if len(m) == 1 else [f"Members {_and(m)} leave the group."]
    if ev.kind == "crash":
        return [f"{m[0]} (the leader) crashes/gets killed."]
    if ev.kind == "mark-leaving":
        return [f"Use scaling tool to indicate {' & '.join(m)} {'is' if len(m) == 1 else 'are'} leaving."]
    if ev.kind == "restore":
        who = m[0]
        if ev.ready and ev.rejoin:
            return [f"Member {who} finishes its replay and becomes ready, re-attempting to join the group."]
        text = f"Member {who} finishes its replay of {', '.join(ev.tasks)}"
        if ev.ready:
            text += " and becomes ready"
        text += "."
        out = [text]
        if ev.rejoin:
            out.append(f"Member {who} re-attempts to join the group.")
        if ev.probe:
            out.append("The leader's probing rebalance is due: another rebalance is triggered.")
        return out
    if ev.kind == "rejoin":
        if len(m) == 1:
            return [f"Member {m[0]} is ready, re-attempting to join the group."]
        return [f"Members {_and(m)} are ready, re-attempting to join the group."]
    if ev.kind == "probe":
        return ["The leader's probing rebalance is due: another rebalance is triggered."]
    if ev.kind == "timeout":
        return [f"Scale-down timeout: {m[0]} shuts down."]
    if ev.kind == "age":
        return [f"{m[0]}'s copy of {ev.tasks[0]} falls behind (no longer hosted)."]
    if ev.kind == "cleanup":
        return [f"{m[0]} deletes its state of {ev.tasks[0]}."]
    if ev.kind == "deliver":
        out = [f"Assignment delivered to {group_ids(m)}."]
        for mid, lost in ev.revoked:
            out.append(f"{mid} revokes {', '.join(lost)} and rejoins (a follow-up rebalance is due).")
        if ev.shutdown:
            if len(ev.shutdown) == 1:
                out.append(f"{ev.shutdown[0]} will shutdown itself upon new assignment since there is no assigned task left.")
            else:
                out.append(f"{group_ids(ev.shutdown)} will shutdown themselves upon new assignment since there is no assigned task left.")
        return out
    return [f"{ev.kind} {' '.join(m)} {' '.join(ev.tasks)}".strip() + "."]


def _steps_suffix(steps) -> str:
    steps = list(steps)
    if not steps:
        return ""
    if len(steps) == 1:
        return f"  [step {steps[0]}]"
    return f"  [steps {steps[0]}-{steps[-1]}]"


def _state_line(state: GroupState, stable: bool) -> list[str]:
    if not state.members:
        return []
    leader = state.leader
    names = [f"{m.id}(leader)" if m.id == leader else m.id for m in state.members]
    n = len(names)
    out = [f"Cluster has {n} stream worker{'s' if n != 1 else ''} {', '.join(names)}"]
    held = ", ".join(f"{m.id}{ids(m.active)}" for m in state.members)
    out.append(f"Group {'stable state' if stable else 'state'}: {held}")
    for role, label in (("standby", "Standby"), ("warmup", "Learning")):
        if any(getattr(m, role) for m in state.members):
            out.append(f"{label}: " + ", ".join(f"{m.id}{ids(getattr(m, role))}" for m in state.members if getattr(m, role)))
    if not stable:
        due = []
        if state.triggers:
            due.append("a rebalance is due (" + ", ".join(state.triggers) + ")")
        if state.pending:
            due.append("assignments not yet delivered to " + ", ".join(e[0] for e in state.pending))
        out.append("(" + "; ".join(due) + ")")
    return out


def header_lines(header: dict) -> list[str]:
    """The trace's own header: what it is, where it comes from, what it ran on."""
    out = []
    title = header.get("title")
    src = header.get("source") or {}
    if header["kind"] == "scenario":
        where = ""
        if src:
            where = f"  (seed {src.get('seed', '?')}, \"{src.get('section', '')}\", code block \"{src.get('title', '')}\")"
        out.append(f"Scenario: {title or 'untitled'}{where}")
    elif header["kind"] == "lasso":
        out.append(f"Counterexample: {header['property']} violated by a cycle from step {header['cycle_start']}: {header.get('message', '')}")
    else:
        out.append(f"Counterexample: {header['property']} violated at step {header['fail_step']}: {header.get('message', '')}")
        note = warm_start_note(header)
        if note:
            out.append(note)
    tasks = header.get("tasks", [])
    stateless = [t["id"] for t in tasks if not t.get("stateful", True)]
    cfg = header.get("config", {})
    cfg_text = ", ".join(f"{k} {v}" for k, v in cfg.items())
    task_text = ", ".join(t["id"] for t in tasks) + (f" (stateless: {', '.join(stateless)})" if stateless else "")
    caps = capacity_text(header)
    out.append(f"protocol {header['protocol']}, assignor {header['assignor']}; tasks {task_text}; {cfg_text}"
               + (f"; {caps}" if caps else ""))
    return out


def warm_start_note(trace: dict) -> str | None:
    """What step 0 is, for a counterexample of ``check`` that fails there on a warm start: the
    group as the assignor itself settled it (the steps that built it are not in the trace)."""
    bounds = trace.get("bounds")
    if trace.get("kind") != "safety" or trace.get("fail_step") != 0 or not isinstance(bounds, dict):
        return None
    if bounds.get("start", "warm") != "warm":
        return None
    return ("(step 0 is the warm start: the group as this assignor settled it from an empty group, every copy "
            "then caught up; --start cold explores those first rebalances step by step)")


def capacity_text(header: dict) -> str:
    """``capacities I1=1, I2=2, I3=2 threads`` when the trace's bounds give instances other than
    1 stream thread; empty otherwise (the default)."""
    bounds = header.get("bounds") or {}
    caps = bounds.get("capacities")
    if not isinstance(caps, list) or not caps or caps == [1]:
        return ""
    pool = header.get("pool") or [f"I{i}" for i in range(1, int(bounds.get("instances", len(caps))) + 1)]
    return "capacities " + ", ".join(f"{m}={caps[min(i, len(caps) - 1)]}" for i, m in enumerate(pool)) + " threads"


def _marks(story: Story, steps) -> list[str]:
    """The failure / cycle markers that fall on ``steps``."""
    h = story.header
    out = []
    if h.get("kind") == "lasso" and h.get("cycle_start") in steps:
        out.append(f"~~ the cycle starts after step {h['cycle_start']}: the steps from here to the end repeat forever ~~")
    if h.get("kind") in ("safety", "lasso") and h.get("fail_step") in steps:
        out.append(f"!! {h['property']} fails at step {h['fail_step']}: {h.get('message', '')}")
    return out


def _comment_lines(comments, enabled: bool) -> list[str]:
    return [f"// {c}" for c in comments if c] if enabled else []


def _block_lines(b: RebalanceBlock, story: Story, *, steps: bool, comments: bool) -> list[str]:
    out = ["", b.title.rstrip() + (_steps_suffix([b.step]) if steps else "")]
    for ev in b.before:
        for line in event_sentence(ev):
            out.append(line + (_steps_suffix(ev.steps) if steps else ""))
        out += _comment_lines(ev.comments, comments)
        out += _marks(story, ev.steps)
    if b.elected:
        out.append(f"{b.leader} takes over the leader")
    if b.show_joined:
        head = f"Member {group_ids([j.member for j in b.joined])} join with following status:"
        if b.not_ready:
            head += f" ({_and(b.not_ready)} {'is' if len(b.not_ready) == 1 else 'are'} not ready yet)"
        out.append(head)
        out += ["\t" + member_line(j) for j in b.joined]
    if b.lags_note:
        out.append(f"\t({b.lags_note})")
    if b.error:
        out.append(f"{b.leader} cannot perform task assignments: the assignor failed: {b.error}")
    else:
        out.append(f"{b.leader} performs task assignments:")
        out += ["\t" + member_line(a) for a in b.answer]
        for task, to, frm in b.withheld:
            out.append(f"\t({task} goes to {to} only after {frm or 'its owner'} has revoked it: the follow-up rebalance hands it over)")
        if b.probing:
            out.append("\t(the leader schedules a probing rebalance)")
    out += _comment_lines([b.comment], comments)
    out += _marks(story, [b.step])
    for ev in b.after:
        for line in event_sentence(ev):
            out.append(line + (_steps_suffix(ev.steps) if steps else ""))
        out += _comment_lines(ev.comments, comments)
        out += _marks(story, ev.steps)
    return out


def render_text(trace: Trace, *, steps: bool = False, comments: bool = True) -> str:
    """The seeds' text form of ``trace`` (see the module docstring), ending with a newline."""
    story = read_story(trace)
    out = header_lines(story.header)
    if comments and story.header.get("comment"):
        out.append(f"// {story.header['comment']}")
    out.append("")
    s0 = story.start.state
    if s0.members:
        out += _state_line(s0, story.start.stable)
    else:
        out.append(f"Group empty state: unassigned tasks {ids(t['id'] for t in story.header.get('tasks', []))}")
    out += _comment_lines([story.start.comment], comments)
    out += _marks(story, [0])
    for b in story.blocks:
        out += _block_lines(b, story, steps=steps, comments=comments)
    if story.trailing:
        out.append("")
        for ev in story.trailing:
            for line in event_sentence(ev):
                out.append(line + (_steps_suffix(ev.steps) if steps else ""))
            out += _comment_lines(ev.comments, comments)
            out += _marks(story, ev.steps)
    last = trace.steps[-1].state
    if story.blocks and not last.triggers and not last.pending and last.members:
        out.append("")
        out.append("Final state: " + ", ".join(f"{m.id}{ids(m.active)}" for m in last.members))
    return "\n".join(out) + "\n"
