import { describe, expect, it } from 'vitest';
import { sampleStateMachineVersion } from '../state-machine/fixtures';
import { layersOf, stateMachineDiagram, tallyCoverage, tallyVisits } from './diagram';

const machine = sampleStateMachineVersion();

describe('layersOf', () => {
  it('places states by their distance from the initial state', () => {
    expect(layersOf(machine)).toEqual([['greet'], ['triage'], ['help', 'goodbye']]);
  });
});

describe('tallyVisits', () => {
  it('counts each state once per interaction and every transition taken', () => {
    const visits = tallyVisits([
      { current_state_name: 'greet', state_transition_logs: [] },
      {
        current_state_name: 'help',
        state_transition_logs: [
          { previous_state: 'greet', next_state: 'triage' },
          { previous_state: 'triage', next_state: 'help' },
        ],
      },
    ]);
    expect(Object.fromEntries(visits.states)).toEqual({ greet: 2, triage: 1, help: 1 });
    expect(visits.transitions.size).toBe(2);
  });
});

describe('stateMachineDiagram', () => {
  it('draws every state and transition, shading the visited ones', () => {
    const visits = tallyVisits([
      { current_state_name: 'greet', state_transition_logs: [{ previous_state: 'greet', next_state: 'triage' }] },
    ]);
    const svg = stateMachineDiagram(machine, visits).text;
    expect(svg.match(/<g class="state/g)).toHaveLength(4);
    expect(svg.match(/<path class="transition/g)).toHaveLength(4);
    expect(svg).toContain('data-state="greet" data-visits="1"');
    expect(svg).toContain('data-state="goodbye" data-visits="0"');
    expect(svg.match(/class="transition visited"/g)).toHaveLength(1);
  });

  it('outlines and dashes what simulation runs covered, apart from the shading of real visits', () => {
    const simulated = tallyCoverage([
      { visited_states: ['greet', 'triage'], visited_transitions: ['greet -> triage'] },
      { visited_states: ['greet'], visited_transitions: [] },
    ]);
    const svg = stateMachineDiagram(machine, tallyVisits([]), simulated).text;
    expect(svg).toContain('data-state="greet" data-visits="0" data-simulation-runs="2"');
    expect(svg).toContain('data-state="help" data-visits="0" data-simulation-runs="0"');
    expect(svg.match(/<rect class="simulated"/g)).toHaveLength(2);
    expect(svg.match(/class="transition simulated"/g)).toHaveLength(1);
    expect(svg).not.toContain('class="transition visited"');
  });

  it('escapes state names', () => {
    const hostile = sampleStateMachineVersion();
    (hostile.states[3] as { name: string }).name = '<script>';
    expect(stateMachineDiagram(hostile, tallyVisits([])).text).not.toContain('<script>');
  });
});
