import type { State } from '../state-machine/schemas';
import { type Html, html } from './html';
import { palette } from './palette';

export interface MachineShape {
  states: State[];
  new_user_initial_state: string;
  returning_user_initial_state: string;
  terminal_state: string;
}

/** How often conversations were in each state and took each transition (`from\u0000to`). */
export interface Visits {
  states: Map<string, number>;
  transitions: Map<string, number>;
}

export const transitionKey = (from: string, to: string): string => `${from}\u0000${to}`;

type NextState = string | readonly [string, string];
/** A move to another machine returns to the second state of the pair: the edge drawn in this machine. */
const targetOf = (next: NextState): string => (typeof next === 'string' ? next : next[1]);

const edgesOf = (state: State): string[] => {
  const targets =
    state.type === 'action' || state.type === 'decision'
      ? state.exit_conditions.map((condition) => targetOf(condition.next_state))
      : [targetOf(state.next_state)];
  return [...new Set(targets)];
};

/** Layers by distance from the initial states; states no path reaches go in a last layer. */
export const layersOf = (machine: MachineShape): string[][] => {
  const byName = new Map(machine.states.map((state) => [state.name, state]));
  const depth = new Map<string, number>();
  let frontier = [...new Set([machine.new_user_initial_state, machine.returning_user_initial_state])].filter((name) =>
    byName.has(name),
  );
  for (const name of frontier) depth.set(name, 0);
  for (let level = 1; frontier.length > 0; level += 1) {
    const next: string[] = [];
    for (const name of frontier) {
      for (const target of edgesOf(byName.get(name) as State)) {
        if (byName.has(target) && !depth.has(target)) {
          depth.set(target, level);
          next.push(target);
        }
      }
    }
    frontier = next;
  }
  const deepest = Math.max(0, ...depth.values());
  const layers: string[][] = [];
  for (const state of machine.states) {
    const level = depth.get(state.name) ?? deepest + 1;
    layers[level] = [...(layers[level] ?? []), state.name];
  }
  return layers.filter((layer) => layer !== undefined);
};

const nodeWidth = 150;
const nodeHeight = 44;
const columnGap = 70;
const rowGap = 26;
const margin = 20;

/** Mixes the accent into white: 0 is white, 1 the accent (the most visited). */
const shade = (share: number): string => {
  const accent = [1, 3, 5].map((start) => Number.parseInt(palette.accent.slice(start, start + 2), 16));
  const mixed = accent.map((channel) => Math.round(255 + (channel - 255) * share));
  return `rgb(${mixed.join(',')})`;
};

const label = (name: string): string => (name.length > 20 ? `${name.slice(0, 19)}…` : name);

const noVisits = (): Visits => ({ states: new Map(), transitions: new Map() });

/**
 * The state machine as an SVG diagram, server-rendered: states in layers left to right,
 * transitions as arrows, each shaded by how often real conversations visited it; what
 * simulation runs covered is outlined (states) and dashed (transitions) in the simulation colour.
 */
export const stateMachineDiagram = (machine: MachineShape, visits: Visits, simulated: Visits = noVisits()): Html => {
  const layers = layersOf(machine);
  const position = new Map<string, { x: number; y: number }>();
  for (const [column, layer] of layers.entries()) {
    for (const [row, name] of layer.entries()) {
      position.set(name, { x: margin + column * (nodeWidth + columnGap), y: margin + row * (nodeHeight + rowGap) });
    }
  }
  const width = margin * 2 + layers.length * (nodeWidth + columnGap) - columnGap;
  const height = margin * 2 + Math.max(1, ...layers.map((layer) => layer.length)) * (nodeHeight + rowGap) + rowGap;
  const mostVisits = Math.max(1, ...visits.states.values());
  const mostMoves = Math.max(1, ...visits.transitions.values());

  const edges = machine.states.flatMap((state) =>
    edgesOf(state).flatMap((target) => {
      const from = position.get(state.name);
      const to = position.get(target);
      if (!from || !to) return [];
      const moves = visits.transitions.get(transitionKey(state.name, target)) ?? 0;
      const forward = to.x > from.x;
      // Forward edges leave right and enter left; edges back (or within a layer) loop below the states.
      const [x1, y1] = forward
        ? [from.x + nodeWidth, from.y + nodeHeight / 2]
        : [from.x + nodeWidth / 2, from.y + nodeHeight];
      const [x2, y2] = forward ? [to.x, to.y + nodeHeight / 2] : [to.x + nodeWidth / 2 + 12, to.y + nodeHeight];
      const path =
        state.name === target
          ? `M${from.x + nodeWidth - 20},${from.y} c 10,-24 34,-24 20,8`
          : forward
            ? `M${x1},${y1} C${x1 + 40},${y1} ${x2 - 40},${y2} ${x2},${y2}`
            : `M${x1},${y1} C${x1},${y1 + rowGap + 20} ${x2},${y2 + rowGap + 20} ${x2},${y2}`;
      const runs = simulated.transitions.get(transitionKey(state.name, target)) ?? 0;
      return [
        html`<path class="transition${moves > 0 ? ' visited' : ''}" d="${path}" stroke="${moves > 0 ? palette.accent : palette.border}" stroke-width="${1 + (4 * moves) / mostMoves}" fill="none" marker-end="url(#arrow)"><title>${state.name} → ${target}: ${moves} time${moves === 1 ? '' : 's'}${runs > 0 ? `; taken in ${runs} simulation run${runs === 1 ? '' : 's'}` : ''}</title></path>`,
        runs > 0
          ? html`<path class="transition simulated" d="${path}" stroke="${palette.simulated}" stroke-width="2" stroke-dasharray="5 4" fill="none"/>`
          : '',
      ];
    }),
  );
  const nodes = machine.states.map((state) => {
    const at = position.get(state.name) as { x: number; y: number };
    const count = visits.states.get(state.name) ?? 0;
    const share = count / mostVisits;
    const textColour = share > 0.5 ? palette.onAccent : palette.text;
    const terminal = state.name === machine.terminal_state;
    const runs = simulated.states.get(state.name) ?? 0;
    const outline =
      runs > 0
        ? html`<rect class="simulated" x="${at.x - 4}" y="${at.y - 4}" width="${nodeWidth + 8}" height="${nodeHeight + 8}" rx="${terminal ? 26 : 9}" fill="none" stroke="${palette.simulated}" stroke-width="2" stroke-dasharray="5 4"/>`
        : '';
    return html`<g class="state${count > 0 ? ' visited' : ''}${runs > 0 ? ' simulated' : ''}" data-state="${state.name}" data-visits="${count}" data-simulation-runs="${runs}"><title>${state.name} (${state.type}): ${count} visit${count === 1 ? '' : 's'}${runs > 0 ? `; visited in ${runs} simulation run${runs === 1 ? '' : 's'}` : ''}</title>${outline}<rect x="${at.x}" y="${at.y}" width="${nodeWidth}" height="${nodeHeight}" rx="${terminal ? 22 : 6}" fill="${shade(share)}" stroke="${palette.text}" stroke-width="${terminal ? 2.5 : 1}"/><text x="${at.x + nodeWidth / 2}" y="${at.y + 19}" text-anchor="middle" fill="${textColour}" font-size="13">${label(state.name)}</text><text x="${at.x + nodeWidth / 2}" y="${at.y + 35}" text-anchor="middle" fill="${textColour}" font-size="11">${state.type} · ${count}</text></g>`;
  });
  return html`<svg class="diagram" role="img" aria-labelledby="diagram-title" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg"><title id="diagram-title">State machine: ${machine.states.length} states, shaded by visits, simulation coverage outlined</title><defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="10" markerHeight="10" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="${palette.muted}"/></marker></defs>${edges}${nodes}</svg>`;
};

const add = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

/** Tallies the states and transitions in interactions' insights. */
export const tallyVisits = (
  interactions: {
    current_state_name: string;
    state_transition_logs: { previous_state: string; next_state: string }[];
  }[],
): Visits => {
  const visits: Visits = { states: new Map(), transitions: new Map() };
  for (const interaction of interactions) {
    const seen = new Set([interaction.current_state_name]);
    for (const log of interaction.state_transition_logs) {
      add(visits.transitions, transitionKey(log.previous_state, log.next_state));
      seen.add(log.previous_state);
      seen.add(log.next_state);
    }
    for (const name of seen) add(visits.states, name);
  }
  return visits;
};

/** The runs that visited each state and took each transition, from coverage's `visited_states` and `from -> to` transitions. */
export const tallyCoverage = (coverages: { visited_states: string[]; visited_transitions: string[] }[]): Visits => {
  const covered = noVisits();
  for (const coverage of coverages) {
    for (const state of coverage.visited_states) add(covered.states, state);
    for (const transition of coverage.visited_transitions) {
      const [from, to] = transition.split(' -> ');
      if (from !== undefined && to !== undefined) add(covered.transitions, transitionKey(from, to));
    }
  }
  return covered;
};
