#!/usr/bin/env node
// A small KIP-441 assignor: the worked example of a correct implementation, in JavaScript.
//
// rebalproof runs it as an external assignor:   exec:node examples/ha_assignor.js
// It reads one RebalanceInput JSON object per line on stdin and writes one Assignment JSON
// object per line on stdout, in order (docs/DESIGN.md "Contracts"). Plain node, no packages.
// It gives the same answers as its twin ha_assignor.py; see that file for the phases:
//   1. keep a settled assignment (KIP-441 requirement 5)
//   2. otherwise plan a balanced target, subtopology by subtopology, sticky (requirement 6),
//      then even out the totals per thread where unequal capacities left them apart
//   3. actives only to most-caught-up members, warmups on the targets (requirements 1, 3)
//   4. standbys to the next-most-caught-up members (requirement 2)
//   5. stateless tasks stay with their owner unless moving them improves balance (requirement 6)
'use strict';

const readline = require('readline');

const NO_STATE = Infinity;

// Natural order of ids: runs of digits compare as numbers (I2 < I10), ties by the plain string.
function idKey(id) {
  return id.split(/(\d+)/).filter((p) => p !== '').map((p) => (/^\d+$/.test(p) ? [0, BigInt(p), ''] : [1, 0n, p]));
}

function cmpScalar(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareIds(a, b) {
  const ka = idKey(a);
  const kb = idKey(b);
  for (let i = 0; i < Math.min(ka.length, kb.length); i += 1) {
    for (let j = 0; j < 3; j += 1) {
      const c = cmpScalar(ka[i][j], kb[i][j]);
      if (c !== 0) return c;
    }
  }
  if (ka.length !== kb.length) return ka.length - kb.length;
  return cmpScalar(a, b);
}

// Keys are arrays of numbers and ids (strings); ids compare naturally.
function compareKeys(a, b) {
  for (let i = 0; i < a.length; i += 1) {
    const c = typeof a[i] === 'string' ? compareIds(a[i], b[i]) : cmpScalar(a[i], b[i]);
    if (c !== 0) return c;
  }
  return 0;
}

function minBy(items, key) {
  let best;
  let bestKey;
  for (const item of items) {
    const k = key(item);
    if (bestKey === undefined || compareKeys(k, bestKey) < 0) {
      best = item;
      bestKey = k;
    }
  }
  return best;
}

function sortBy(items, key) {
  return items.map((item) => [key(item), item]).sort((x, y) => compareKeys(x[0], y[0])).map((p) => p[1]);
}

function subtopology(taskId) {
  const at = taskId.indexOf('_');
  return at < 0 ? taskId : taskId.slice(0, at);
}

function withinOne(counts, caps) {
  const ids = Object.keys(counts);
  for (const i of ids) {
    if (counts[i] === 0) continue;
    for (const j of ids) {
      if (i !== j && counts[i] * caps[j] > (counts[j] + 1) * caps[i]) return false;
    }
  }
  return true;
}

function assign(request) {
  const config = request.config || {};
  const standbysWanted = config.num_standby_replicas ?? 0;
  const recoveryLag = config.acceptable_recovery_lag ?? 10000;
  let warmupBudget = config.max_warmup_replicas ?? 2;

  const tasks = sortBy(request.tasks || [], (t) => [t.id]);
  const taskIds = tasks.map((t) => t.id);
  const stateful = Object.fromEntries(tasks.map((t) => [t.id, t.stateful ?? true]));
  const members = sortBy(request.members || [], (m) => [m.id]);
  const ids = members.map((m) => m.id);
  const byId = Object.fromEntries(members.map((m) => [m.id, m]));
  let eligible = members.filter((m) => !m.leaving).map((m) => m.id);
  if (eligible.length === 0) eligible = ids;
  const cap = Object.fromEntries(members.map((m) => [m.id, m.capacity ?? 1]));
  if (ids.length === 0) return { assignment: {}, probing_rebalance: false };

  const lag = (member, task) => {
    const m = byId[member];
    const lags = m.lags || {};
    if (Object.prototype.hasOwnProperty.call(lags, task)) return lags[task];
    return (m.active || []).includes(task) ? 0 : NO_STATE;
  };
  const rank = (member, task) => {
    if (!stateful[task]) return 0;
    const value = lag(member, task);
    return value <= recoveryLag ? 0 : value;
  };

  const bestRank = {};
  for (const t of taskIds) bestRank[t] = Math.min(...eligible.map((m) => rank(m, t)));
  const owner = {};
  for (const m of eligible) {
    for (const t of byId[m].active || []) {
      if (t in stateful && !(t in owner)) owner[t] = m;
    }
  }
  const subs = {};
  for (const t of taskIds) (subs[subtopology(t)] = subs[subtopology(t)] || []).push(t);
  const subOrder = sortBy(Object.keys(subs), (s) => [subs[s].length, s]); // the most constrained first

  // 1. keep a settled assignment
  const settled = () => {
    if (taskIds.some((t) => !(t in owner))) return false;
    if (taskIds.some((t) => stateful[t] && rank(owner[t], t) !== bestRank[t])) return false;
    const count = (ts) => Object.fromEntries(eligible.map((m) => [m, ts.filter((t) => owner[t] === m).length]));
    if (!withinOne(count(taskIds), cap)) return false;
    return Object.keys(subs).every((s) => withinOne(count(subs[s]), cap));
  };

  // 2. plan a balanced target
  const plan = () => {
    const target = {};
    const load = Object.fromEntries(eligible.map((m) => [m, 0]));
    for (const s of subOrder) {
      const held = Object.fromEntries(eligible.map((m) => [m, subs[s].filter((t) => owner[t] === m).length]));
      const share = Object.fromEntries(eligible.map((m) => [m, 0]));
      for (let k = 0; k < subs[s].length; k += 1) {
        const chosen = minBy(eligible, (m) => [
          (share[m] + 1) / cap[m], (load[m] + 1) / cap[m], held[m] > share[m] ? 0 : 1, m,
        ]);
        share[chosen] += 1;
        load[chosen] += 1;
      }
      const room = { ...share };
      for (const m of eligible) {
        const mine = sortBy(subs[s].filter((t) => owner[t] === m), (t) => [rank(m, t), t]);
        for (const t of mine.slice(0, room[m])) target[t] = m;
        room[m] -= Math.min(room[m], mine.length);
      }
      for (const t of subs[s]) {
        if (t in target) continue;
        const chosen = minBy(eligible.filter((m) => room[m] > 0), (m) => [rank(m, t), m]);
        target[t] = chosen;
        room[chosen] -= 1;
      }
    }
    // instance balance by capacity: move one task at a time from the busiest member per thread
    // to the one with the most room until the totals are within one (unequal capacities)
    for (let round = 0; round < taskIds.length * eligible.length; round += 1) {
      const totals = Object.fromEntries(eligible.map((m) => [m, taskIds.filter((t) => target[t] === m).length]));
      if (withinOne(totals, cap)) break;
      const giver = minBy(eligible, (m) => [-totals[m] / cap[m], m]);
      const taker = minBy(eligible, (m) => [(totals[m] + 1) / cap[m], m]);
      const behind = (t) => {
        const mine = subs[subtopology(t)].filter((x) => target[x] === giver).length;
        const theirs = subs[subtopology(t)].filter((x) => target[x] === taker).length;
        return [(theirs + 1) / cap[taker] - mine / cap[giver], rank(taker, t), owner[t] === giver ? 1 : 0, t];
      };
      target[minBy(taskIds.filter((t) => target[t] === giver), behind)] = taker;
    }
    return target;
  };

  const target = settled() ? { ...owner } : plan();

  // 3. actives only to most-caught-up members; warmups on the targets they wait for
  let active = {};
  const count = Object.fromEntries(eligible.map((m) => [m, 0]));
  const moves = [];
  for (const t of taskIds) {
    let goal = target[t];
    if (stateful[t] && rank(goal, t) !== bestRank[t]) {
      const current = owner[t];
      let goalNow;
      if (current !== undefined && rank(current, t) === bestRank[t]) {
        goalNow = current;
      } else {
        goalNow = minBy(eligible.filter((m) => rank(m, t) === bestRank[t]), (m) => [(count[m] + 1) / cap[m], m]);
      }
      moves.push([t, goal]);
      goal = goalNow;
    }
    active[t] = goal;
    count[goal] += 1;
  }

  // 4. standbys to the next-most-caught-up members
  const wanted = Math.min(standbysWanted, eligible.length - 1);
  const copies = { ...count };
  const standby = Object.fromEntries(ids.map((m) => [m, []]));
  const moveTarget = Object.fromEntries(moves);
  for (const t of taskIds) {
    if (!stateful[t] || wanted <= 0) continue;
    const candidates = sortBy(eligible.filter((m) => m !== active[t]), (m) => [
      rank(m, t),
      (byId[m].standby || []).includes(t) ? 0 : 1,
      moveTarget[t] === m ? 0 : 1,
      (copies[m] + 1) / cap[m],
      m,
    ]);
    for (const m of candidates.slice(0, wanted)) {
      standby[m].push(t);
      copies[m] += 1;
    }
  }

  const warmup = Object.fromEntries(ids.map((m) => [m, []]));
  for (const [t, goal] of moves) {
    if (warmupBudget <= 0) break;
    if (standby[goal].includes(t)) continue;
    warmup[goal].push(t);
    warmupBudget -= 1;
  }

  // 5. stateless tasks stay with their owner unless moving them improves balance (requirement 6)
  const counted = ids.filter((m) => !byId[m].leaving);
  const spread = (counts) => {
    const loads = Object.keys(counts).map((m) => counts[m] / cap[m]);
    return loads.length > 0 ? Math.max(...loads) - Math.min(...loads) : 0;
  };
  const measure = (act, sub) => {
    const actives = Object.fromEntries(counted.map((m) => [m, 0]));
    const perSub = Object.fromEntries(Object.keys(subs).map((s) => [s, Object.fromEntries(counted.map((m) => [m, 0]))]));
    for (const t of Object.keys(act)) {
      const m = act[t];
      if (m in actives) {
        actives[m] += 1;
        perSub[subtopology(t)][m] += 1;
      }
    }
    const held = Object.fromEntries(counted.map((m) => [m, actives[m] + standby[m].length]));
    return [
      withinOne(actives, cap), Object.keys(subs).every((s) => withinOne(perSub[s], cap)), withinOne(held, cap),
      spread(actives), spread(perSub[sub]), spread(held),
    ];
  };
  const noWorse = (kept, answer, sub) => {
    const k = measure(kept, sub);
    const a = measure(answer, sub);
    return [0, 1, 2].every((i) => k[i] || !a[i]) && [3, 4, 5].every((i) => k[i] <= a[i]);
  };
  let changed = true;
  while (changed) {
    changed = false;
    for (const t of taskIds) {
      if (stateful[t] || !(t in owner) || active[t] === owner[t]) continue;
      const kept = { ...active, [t]: owner[t] };
      if (noWorse(kept, active, subtopology(t))) {
        active = kept;
        changed = true;
      }
    }
  }

  const out = Object.fromEntries(ids.map((m) => [m, { active: [], standby: standby[m], warmup: warmup[m] }]));
  for (const t of taskIds) out[active[t]].active.push(t);
  return { assignment: out, probing_rebalance: moves.length > 0 };
}

const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on('line', (line) => {
  if (line.trim() === '') return;
  process.stdout.write(JSON.stringify(assign(JSON.parse(line))) + '\n');
});
