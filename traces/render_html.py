"""A trace as one self-contained HTML page: a card per step, keyboard navigation, no network.

``rebalproof show TRACE --html OUT.html`` writes it. Everything is inline (CSS and a small
script, no fonts, images or requests), so the page opens from a CI artifact as it is.

The page:

- a card per trace step, in order; a rebalance's card is a table of the instances by role
  (active / standby / warmup) of the assignor's answer, with each cell that differs from what
  the instance held before the rebalance highlighted (its old content in the tooltip), the
  members' join lines in the seeds' form, and the hand-overs the protocol withholds; any other
  step's card is the group's state after it, highlighted against the state before it;
- the failing step (``fail_step``) carries a red banner with the property and the message; a
  lasso's cycle is marked on every step in it, and its start says so;
- a list of the steps on the left (the failing step and the cycle marked there too);
- keys: ``ArrowRight`` / ``ArrowDown`` / ``j`` next step, ``ArrowLeft`` / ``ArrowUp`` / ``k``
  previous, ``Home`` / ``End``, ``f`` the failing step; clicking a card or a list entry selects
  it. The current step is ``body[data-current]``, the card with class ``current``, and the
  URL's ``#step-N`` (so a link can open a given step). On load, the page opens at ``#step-N``
  if given, else at the failing step, else at step 0.

Rendering only: what a step means comes from :mod:`rebalproof.traces.rounds`. Output is
deterministic (the same trace gives the same bytes).
"""

from __future__ import annotations

import html
import json

from rebalproof.model.group_state import BEHIND, GroupState
from rebalproof.traces.format import Trace
from rebalproof.traces.render_text import event_sentence, group_ids, header_lines, member_line
from rebalproof.traces.rounds import RebalanceBlock, read_story, step_event

__all__ = ["render_html", "CSS", "SCRIPT"]

ROLES = ("active", "standby", "warmup")

CSS = """
:root { --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --cur: #0969da; --bad: #cf222e;
        --badbg: #ffebe9; --chg: #fff1b8; --cyc: #8250df; --cycbg: #fbefff; }
* { box-sizing: border-box; }
html, body { height: 100%; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: #f6f8fa;
       display: flex; flex-direction: column; overflow: hidden; }
header { flex: 0 0 auto; padding: 12px 20px; background: #fff; border-bottom: 1px solid var(--line); }
header h1 { font-size: 19px; margin: 0 0 4px; }
header h1.bad { color: var(--bad); }
header .meta, header .keys { margin: 0; color: var(--muted); font-size: 13px; }
header .pos { float: right; font-weight: 600; color: var(--cur); }
kbd { border: 1px solid var(--line); border-bottom-width: 2px; border-radius: 4px; padding: 0 4px; font-size: 12px; background: #f6f8fa; }
main { flex: 1 1 auto; min-height: 0; display: flex; gap: 16px; padding: 16px 20px 0; }
nav { flex: 0 0 250px; align-self: flex-start; max-height: 100%; overflow: auto; position: relative;
      background: #fff; border: 1px solid var(--line); border-radius: 6px; font-size: 13px; }
nav ol { list-style: none; margin: 0; padding: 4px 0; }
nav li a { display: block; padding: 2px 10px; color: var(--fg); text-decoration: none; border-left: 3px solid transparent; }
nav li a:hover { background: #f3f4f6; }
nav li.current a { background: #ddf4ff; border-left-color: var(--cur); font-weight: 600; }
nav li.fail a { color: var(--bad); font-weight: 600; }
nav li.cycle a { border-left-color: var(--cyc); }
nav li.rebalance a { font-weight: 600; }
#cards { flex: 1 1 auto; min-width: 0; overflow: auto; position: relative; padding: 0 4px 16px 0; }
.step { background: #fff; border: 1px solid var(--line); border-radius: 6px; margin: 0 0 12px; padding: 10px 14px; }
.step.current { outline: 3px solid var(--cur); outline-offset: 1px; }
.step.fail { border: 2px solid var(--bad); }
.step.cycle { border-left: 6px solid var(--cyc); }
.step h2 { font-size: 16px; margin: 0 0 6px; }
.step h2 .num { color: var(--muted); font-weight: 500; margin-right: 6px; }
.step h2 .title { color: var(--cur); margin-left: 6px; }
.banner { margin: 6px 0; padding: 6px 10px; border-radius: 4px; font-weight: 600; }
.banner.fail { background: var(--badbg); color: var(--bad); }
.banner.cycle { background: var(--cycbg); color: var(--cyc); }
p.say { margin: 2px 0 6px; }
p.note { margin: 4px 0; color: var(--muted); font-size: 13px; }
table.roles { border-collapse: collapse; margin: 6px 0; font-size: 14px; }
table.roles th, table.roles td { border: 1px solid var(--line); padding: 3px 10px; text-align: left; min-width: 70px; }
table.roles thead th { background: #f6f8fa; }
table.roles tbody th { background: #f6f8fa; font-weight: 600; color: var(--muted); }
table.roles td.changed { background: var(--chg); }
table.roles td.changed del { color: var(--muted); }
table.roles td.gone { color: var(--muted); text-decoration: line-through; }
.tag { font-size: 11px; font-weight: 600; padding: 0 4px; border-radius: 3px; margin-left: 4px; }
.tag.leader { background: #ddf4ff; color: var(--cur); }
.tag.leaving { background: #fff8c5; color: #7d4e00; }
.tag.ready { background: #dafbe1; color: #1a7f37; }
pre.seed { margin: 6px 0; padding: 6px 10px; background: #f6f8fa; border-radius: 4px; font-size: 13px; white-space: pre-wrap; tab-size: 4; }
.legend { font-size: 12px; color: var(--muted); }
.legend span { display: inline-block; padding: 0 6px; margin-right: 8px; }
"""

SCRIPT = """
(function () {
  var cards = Array.prototype.slice.call(document.querySelectorAll('article.step'));
  var items = Array.prototype.slice.call(document.querySelectorAll('nav li'));
  var pos = document.getElementById('pos');
  var box = document.getElementById('cards');
  var nav = document.querySelector('nav');
  var body = document.body;
  var fail = body.hasAttribute('data-fail') ? parseInt(body.getAttribute('data-fail'), 10) : -1;
  var cur = -1;
  function go(i, scroll) {
    if (i < 0) i = 0;
    if (i > cards.length - 1) i = cards.length - 1;
    if (cur >= 0) { cards[cur].classList.remove('current'); items[cur].classList.remove('current'); }
    cur = i;
    cards[i].classList.add('current');
    items[i].classList.add('current');
    body.setAttribute('data-current', String(i));
    pos.textContent = 'step ' + i + ' of ' + (cards.length - 1);
    try { history.replaceState(null, '', '#step-' + i); } catch (e) { /* file: URLs in some browsers */ }
    if (scroll) reveal(i);
  }
  function reveal(i) {
    // the page itself never scrolls: the cards and the list of steps scroll in their own areas
    box.scrollTop = Math.max(0, cards[i].offsetTop - 8);
    var item = items[i];
    if (item.offsetTop < nav.scrollTop || item.offsetTop + item.offsetHeight > nav.scrollTop + nav.clientHeight) {
      nav.scrollTop = Math.max(0, item.offsetTop - nav.clientHeight / 2);
    }
  }
  document.addEventListener('keydown', function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var k = e.key;
    if (k === 'ArrowRight' || k === 'ArrowDown' || k === 'j') go(cur + 1, true);
    else if (k === 'ArrowLeft' || k === 'ArrowUp' || k === 'k') go(cur - 1, true);
    else if (k === 'Home') go(0, true);
    else if (k === 'End') go(cards.length - 1, true);
    else if (k === 'f' && fail >= 0) go(fail, true);
    else return;
    e.preventDefault();
  });
  cards.forEach(function (card, i) { card.addEventListener('click', function () { go(i, false); }); });
  items.forEach(function (item, i) {
    item.querySelector('a').addEventListener('click', function (e) { e.preventDefault(); go(i, true); });
  });
  var m = /^#step-(\\d+)$/.exec(location.hash);
  var start = m ? parseInt(m[1], 10) : (fail >= 0 ? fail : 0);
  go(start, true);
})();
"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _cell(tasks) -> str:
    return ", ".join(tasks)


def _roles_table(columns, after: dict, before: dict | None, *, flags: dict, show_warmup: bool, gone=()) -> str:
    """Instances x roles; cells that differ from ``before`` are highlighted (old value in the title)."""
    rows = [r for r in ROLES if r != "warmup" or show_warmup]
    out = ['<table class="roles"><thead><tr><th>instance</th>']
    for c in columns:
        tags = "".join(f'<span class="tag {t}">{t}</span>' for t in flags.get(c, ()))
        out.append(f"<th>{_e(c)}{tags}</th>")
    out.append("</tr></thead><tbody>")
    for r in rows:
        k = ROLES.index(r)
        out.append(f"<tr><th>{r}</th>")
        for c in columns:
            new = after.get(c, ((), (), ()))[k] if c not in gone else ()
            if before is not None:
                old = before.get(c, ((), (), ()))[k]
                if c in gone:
                    out.append(f'<td class="gone" title="was: {_e(_cell(old) or "nothing")}">{_e(_cell(old))}</td>')
                    continue
                if tuple(old) != tuple(new):
                    shown = [f"<b>{_e(t)}</b>" if t not in old else _e(t) for t in new]
                    shown += [f"<del>{_e(t)}</del>" for t in old if t not in new]
                    out.append(f'<td class="changed" title="was: {_e(_cell(old) or "nothing")}">{", ".join(shown)}</td>')
                    continue
            out.append(f"<td>{_e(_cell(new))}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _state_roles(state: GroupState) -> dict:
    return {m.id: (m.active, m.standby, m.warmup) for m in state.members}


def _flags(state: GroupState) -> dict:
    out = {}
    for m in state.members:
        tags = []
        if m.id == state.leader:
            tags.append("leader")
        if m.leaving:
            tags.append("leaving")
        if m.ready:
            tags.append("ready")
        out[m.id] = tags
    return out


def _restoring(state: GroupState) -> str:
    parts = [f"{m.id}: {', '.join(t for t, c in m.lags if c == BEHIND and m.hosts(t))}" for m in state.members
             if any(c == BEHIND and m.hosts(t) for t, c in m.lags)]
    return "; ".join(parts)


def _rebalance_card(b: RebalanceBlock, state: GroupState, show_warmup: bool) -> list[str]:
    out = []
    if b.elected:
        out.append(f'<p class="say">{_e(b.leader)} takes over the leader.</p>')
    if b.show_joined:
        head = f"Member {group_ids([j.member for j in b.joined])} join with following status:"
        if b.not_ready:
            head += f" ({', '.join(b.not_ready)} not ready yet)"
        lines = [head] + ["\t" + member_line(j) for j in b.joined]
        out.append(f'<pre class="seed">{_e(chr(10).join(lines))}</pre>')
    if b.lags_note:
        out.append(f'<p class="note">{_e(b.lags_note[0].upper() + b.lags_note[1:])}.</p>')
    if b.error:
        out.append(f'<p class="banner fail">The assignor failed: {_e(b.error)}</p>')
        return out
    out.append(f'<p class="say">{_e(b.leader)} performs task assignments:</p>')
    columns = [c for c in sorted(b.roles_after, key=lambda x: (len(x), x))]
    out.append(_roles_table(columns, b.roles_after, b.roles_before, flags=_flags(state), show_warmup=show_warmup))
    lines = [member_line(a) for a in b.answer]
    out.append(f'<pre class="seed">{_e(chr(10).join(lines))}</pre>')
    for task, to, frm in b.withheld:
        out.append(f'<p class="note">{_e(task)} goes to {_e(to)} only after {_e(frm or "its owner")} has revoked it: the follow-up rebalance hands it over.</p>')
    if b.probing:
        out.append('<p class="note">The leader schedules a probing rebalance.</p>')
    return out


def render_html(trace: Trace) -> str:
    """The viewer page of ``trace`` (see the module docstring)."""
    story = read_story(trace)
    h = story.header
    steps = trace.steps
    kind = h.get("kind")
    fail = h.get("fail_step") if kind in ("safety", "lasso") else None
    cycle_start = h.get("cycle_start") if kind == "lasso" else None
    in_cycle = set(range(cycle_start + 1, len(steps))) if cycle_start is not None else set()
    blocks = {b.step: b for b in story.blocks}
    show_warmup = any(any(m.warmup for m in s.state.members) for s in steps) or any(
        any(r[2] for r in b.roles_after.values()) for b in story.blocks
    )
    lines = header_lines(h)
    title = lines[0]
    cards, nav = [], []
    for i, step in enumerate(steps):
        classes = ["step"]
        nav_classes = []
        if i == fail:
            classes.append("fail")
            nav_classes.append("fail")
        if i in in_cycle:
            classes.append("cycle")
            nav_classes.append("cycle")
        block = blocks.get(i)
        if block is not None:
            nav_classes.append("rebalance")
        if i == 0:
            label = "start"
        elif block is not None:
            label = f"{block.title.lstrip('#')}"
        else:
            label = step.action.describe()
        body = []
        if i == fail and kind == "lasso":
            body.append(
                f'<p class="banner fail">{_e(h["property"])} fails: the cycle closes here (this state is the state of step '
                f'{cycle_start}), so steps {cycle_start + 1} to {i} repeat forever: {_e(h.get("message", ""))}</p>'
            )
        elif i == fail:
            body.append(f'<p class="banner fail">{_e(h["property"])} fails here: {_e(h.get("message", ""))}</p>')
        if cycle_start is not None and i == cycle_start:
            body.append(f'<p class="banner cycle">The cycle starts after this step: steps {i + 1} to {len(steps) - 1} repeat forever (the last state is this one).</p>')
        if i in in_cycle:
            body.append('<p class="note">in the cycle</p>')
        heading = f'<span class="num">Step {i}</span>'
        if i == 0:
            heading += "Start" + (" (group stable state)" if story.start.stable else "")
            if not step.state.members:
                body.append(f'<p class="say">Group empty state: unassigned tasks [{_e(", ".join(t["id"] for t in h.get("tasks", [])))}]</p>')
            else:
                body.append(_roles_table([m.id for m in step.state.members], _state_roles(step.state), None, flags=_flags(step.state), show_warmup=show_warmup))
        elif block is not None:
            heading += f'{_e(step.action.describe())}<span class="title">{_e(block.title.lstrip("#"))}</span>'
            body += _rebalance_card(block, step.state, show_warmup)
        else:
            heading += _e(step.action.describe())
            ev = step_event(trace, i)
            for sentence in event_sentence(ev):
                body.append(f'<p class="say">{_e(sentence)}</p>')
            prev = steps[i - 1].state
            now_ids = [m.id for m in step.state.members]
            gone = [m.id for m in prev.members if m.id not in now_ids]
            columns = sorted(set(now_ids) | set(gone), key=lambda x: (len(x), x))
            body.append(
                _roles_table(columns, _state_roles(step.state), _state_roles(prev), flags=_flags(step.state), show_warmup=show_warmup, gone=gone)
            )
        restoring = _restoring(step.state)
        if restoring:
            body.append(f'<p class="note">restoring (behind): {_e(restoring)}</p>')
        due = []
        if step.state.triggers:
            due.append("rebalance due: " + ", ".join(step.state.triggers))
        if step.state.pending:
            due.append("not yet delivered: " + ", ".join(e[0] for e in step.state.pending))
        if due:
            body.append(f'<p class="note">{_e("; ".join(due))}</p>')
        if step.comment:
            body.append(f'<p class="note">// {_e(step.comment)}</p>')
        cards.append(
            f'<article class="{" ".join(classes)}" id="step-{i}" data-step="{i}" tabindex="-1"><h2>{heading}</h2>{"".join(body)}</article>'
        )
        mark = " \u2716" if i == fail else (" \u21bb" if i in in_cycle else "")
        nav.append(f'<li class="{" ".join(nav_classes)}"><a href="#step-{i}">{i}. {_e(label)}{mark}</a></li>')
    data_fail = f' data-fail="{fail}"' if fail is not None else ""
    data_cycle = f' data-cycle-start="{cycle_start}"' if cycle_start is not None else ""
    h1_class = ' class="bad"' if kind in ("safety", "lasso") else ""
    comment = f'<p class="meta">// {_e(h["comment"])}</p>' if h.get("comment") else ""
    keys = (
        '<p class="keys"><kbd>\u2192</kbd>/<kbd>j</kbd> next step, <kbd>\u2190</kbd>/<kbd>k</kbd> previous, '
        '<kbd>Home</kbd>/<kbd>End</kbd>' + (", <kbd>f</kbd> failing step" if fail is not None else "")
        + ' &nbsp; <span class="legend"><span style="background:#fff1b8">changed</span>'
        + ('<span style="color:#cf222e">\u2716 fails</span>' if fail is not None else "")
        + ('<span style="color:#8250df">\u21bb cycle</span>' if cycle_start is not None else "")
        + "</span></p>"
    )
    doc = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{CSS}</style></head>",
        f'<body data-current="0" data-steps="{len(steps)}"{data_fail}{data_cycle}>',
        f'<header><span class="pos" id="pos"></span><h1{h1_class}>{_e(title)}</h1>',
        f'<p class="meta">{_e(lines[1])}</p>{comment}{keys}</header>',
        f'<main><nav aria-label="steps"><ol>{"".join(nav)}</ol></nav><section id="cards">{"".join(cards)}</section></main>',
        f'<script type="application/json" id="trace-header">{_e(json.dumps({k: h[k] for k in ("kind", "property", "fail_step", "cycle_start") if k in h}, sort_keys=True))}</script>',
        f"<script>{SCRIPT}</script>",
        "</body></html>",
    ]
    return "\n".join(doc) + "\n"
