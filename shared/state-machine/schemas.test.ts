import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sampleStateMachineVersion } from './fixtures';
import {
  createStateMachineRequest,
  createStateMachineVersionResponse,
  listStateMachinesResponse,
  listStateMachineVersionsResponse,
  stateMachineVersionBody,
  stateMachineVersionRecord,
} from './schemas';

const toolId = '65f1c0a2b3d4e5f60718293a';
const referencedMachineId = '65f1c0a2b3d4e5f60718293b';

const lookupOrderTool = {
  tool_id: toolId,
  version_constraint: '>=1.2,<2',
  additional_instruction: 'Only look up orders that belong to the current user.',
  audio_fillers: ['One moment while I look that up.'],
  audio_filler_triggered_after: 2.5,
  result_persistence: 'persisted-preferred',
};

/** A create-version body as a client would send it, using every state type and a reference. */
const realisticVersionBody = () => ({
  description: 'Order support: find the order, explain its status, hand billing questions to the billing machine.',
  states: [
    {
      type: 'action',
      name: 'welcome',
      objective: 'Find out which order the user is asking about.',
      actions: ['Greet the user.', 'Ask for the order number.'],
      intra_state_navigation_guidelines: ['Move on as soon as an order number is given.'],
      action_guidelines: ['Be concise.'],
      boundary_constraints: ['Do not promise delivery dates.'],
      exit_conditions: [
        { description: 'The user gives an order number.', next_state: 'remember_orders' },
        { description: 'The user asks about an invoice or a charge.', next_state: ['billing.start', 'wrap_up'] },
      ],
      action_tool_call_specs: [lookupOrderTool],
      exit_condition_tool_call_specs: [],
      skip_active_memory_retrieval: false,
    },
    {
      type: 'recall',
      name: 'remember_orders',
      queries: null,
      requested_information: "The user's previous orders and delivery problems.",
      next_state: 'note_context',
    },
    {
      type: 'annotation',
      name: 'note_context',
      inner_thought: 'I should check the order status before answering.',
      next_state: 'fetch_order',
    },
    {
      type: 'tool-call',
      name: 'fetch_order',
      next_state: 'consider',
      designated_tool: lookupOrderTool,
      designated_tool_call_params_generation_audio_fillers: ['Let me find that order.'],
      designated_tool_call_params_generation_audio_filler_triggered_after: 1,
      designated_tool_call_objective: 'Fetch the order the user named.',
      designated_tool_call_context: 'The order number was given in the welcome state.',
      designated_tool_call_guidances: ['Strip spaces from the order number.'],
      designated_tool_call_validations: ['The order number has 8 digits.'],
      tool_call_specs: [],
    },
    {
      type: 'reflection',
      name: 'consider',
      problem: 'Is the order late, and what can the user do about it?',
      word_limit: 80,
      next_state: 'route',
      tool_call_specs: [],
      audio_fillers: [],
      audio_filler_triggered_after: 3,
    },
    {
      type: 'decision',
      name: 'route',
      exit_conditions: [
        { description: 'The order is on time.', next_state: 'wrap_up' },
        { description: 'The order is late.', next_state: 'welcome' },
      ],
      decision_guidelines: ['Prefer wrap_up when unsure.'],
      objective: 'Choose how to continue after checking the order.',
      tool_call_specs: [],
      audio_fillers: ['Let me think.'],
      audio_filler_triggered_after: 4,
    },
    {
      type: 'action',
      name: 'wrap_up',
      objective: 'Close the conversation.',
      actions: ['Summarise the outcome and say goodbye.'],
      intra_state_navigation_guidelines: [],
      action_guidelines: [],
      boundary_constraints: [],
      exit_conditions: [],
      action_tool_call_specs: [],
      exit_condition_tool_call_specs: [],
      skip_active_memory_retrieval: true,
    },
  ],
  new_user_initial_state: 'welcome',
  returning_user_initial_state: 'welcome',
  terminal_state: 'wrap_up',
  references: { billing: [referencedMachineId, 3] },
  global_intra_state_navigation_guidelines: [],
  global_action_guidelines: ['Use the user’s first name.'],
  global_boundary_constraints: ['Never share another customer’s data.'],
});

/** Replaces one field of the first state of the realistic body. */
const withFirstState = (field: string, value: unknown) => {
  const body = realisticVersionBody();
  return { ...body, states: [{ ...body.states[0], [field]: value }, ...body.states.slice(1)] };
};

const issuePaths = (result: { error?: z.ZodError }) => result.error?.issues.map((issue) => issue.path);

describe('stateMachineVersionBody', () => {
  it('parses a realistic request body that uses every state type and a reference', () => {
    // Prepare
    const body = realisticVersionBody();

    // Act
    const result = stateMachineVersionBody.safeParse(body);

    // Assess
    expect(result.error).toBeUndefined();
    expect(result.data?.states.map((state) => state.type)).toEqual([
      'action',
      'recall',
      'annotation',
      'tool-call',
      'reflection',
      'decision',
      'action',
    ]);
    expect(result.data?.references).toEqual({ billing: [referencedMachineId, 3] });
  });

  it('parses the sample fixture', () => {
    // Prepare
    const body = sampleStateMachineVersion();

    // Act
    const result = stateMachineVersionBody.safeParse(body);

    // Assess
    expect(result.error).toBeUndefined();
  });

  it('trims text before checking that it is not empty', () => {
    // Prepare
    const padded = withFirstState('objective', '  Find the order.  ');
    const blank = withFirstState('objective', '   ');

    // Act
    const paddedResult = stateMachineVersionBody.safeParse(padded);
    const blankResult = stateMachineVersionBody.safeParse(blank);

    // Assess
    expect(paddedResult.data?.states[0]).toMatchObject({ objective: 'Find the order.' });
    expect(issuePaths(blankResult)).toEqual([['states', 0, 'objective']]);
  });

  it.each([
    ['an unknown state type', withFirstState('type', 'wait'), ['states', 0, 'type']],
    ['a state name with a dot', withFirstState('name', 'billing.start'), ['states', 0, 'name']],
    ['an action state without actions', withFirstState('actions', []), ['states', 0, 'actions']],
    [
      'an action state without skip_active_memory_retrieval',
      withFirstState('skip_active_memory_retrieval', undefined),
      ['states', 0, 'skip_active_memory_retrieval'],
    ],
    [
      'a next_state that is a number',
      withFirstState('exit_conditions', [{ description: 'Always.', next_state: 5 }]),
      ['states', 0, 'exit_conditions', 0, 'next_state'],
    ],
    [
      'an external next_state without a reference name',
      withFirstState('exit_conditions', [{ description: 'Always.', next_state: ['start', 'wrap_up'] }]),
      ['states', 0, 'exit_conditions', 0, 'next_state', 0],
    ],
    [
      'a tool id that is not a 24-character hexadecimal id',
      withFirstState('action_tool_call_specs', [{ ...lookupOrderTool, tool_id: 'lookup-order' }]),
      ['states', 0, 'action_tool_call_specs', 0, 'tool_id'],
    ],
    [
      'an unknown result persistence',
      withFirstState('action_tool_call_specs', [{ ...lookupOrderTool, result_persistence: 'forever' }]),
      ['states', 0, 'action_tool_call_specs', 0, 'result_persistence'],
    ],
    [
      'more than five audio fillers',
      withFirstState('action_tool_call_specs', [{ ...lookupOrderTool, audio_fillers: ['a', 'b', 'c', 'd', 'e', 'f'] }]),
      ['states', 0, 'action_tool_call_specs', 0, 'audio_fillers'],
    ],
    [
      'an audio filler delay of zero',
      withFirstState('action_tool_call_specs', [{ ...lookupOrderTool, audio_filler_triggered_after: 0 }]),
      ['states', 0, 'action_tool_call_specs', 0, 'audio_filler_triggered_after'],
    ],
    [
      'an audio filler delay over ten seconds',
      withFirstState('action_tool_call_specs', [{ ...lookupOrderTool, audio_filler_triggered_after: 10.5 }]),
      ['states', 0, 'action_tool_call_specs', 0, 'audio_filler_triggered_after'],
    ],
    [
      'a reference whose machine id is not a 24-character hexadecimal id',
      { ...realisticVersionBody(), references: { billing: ['billing-machine', 3] } },
      ['references', 'billing', 0],
    ],
    [
      'a reference whose version is not an integer',
      { ...realisticVersionBody(), references: { billing: [referencedMachineId, '3'] } },
      ['references', 'billing', 1],
    ],
    ['a missing terminal_state', { ...realisticVersionBody(), terminal_state: undefined }, ['terminal_state']],
    ['states that are not a list', { ...realisticVersionBody(), states: {} }, ['states']],
  ])('rejects %s', (_case, body, expectedPath) => {
    // Prepare: the body comes from the case table.

    // Act
    const result = stateMachineVersionBody.safeParse(body);

    // Assess
    expect(issuePaths(result)).toEqual([expectedPath]);
  });

  it('rejects a word limit of zero in a reflection state', () => {
    // Prepare
    const body = realisticVersionBody();
    const states = body.states.map((state) => (state.type === 'reflection' ? { ...state, word_limit: 0 } : state));

    // Act
    const result = stateMachineVersionBody.safeParse({ ...body, states });

    // Assess
    expect(issuePaths(result)).toEqual([['states', 4, 'word_limit']]);
  });

  it('converts to JSON Schema with the six state types discriminated by type', () => {
    // Prepare
    const stateTypes = ['action', 'decision', 'recall', 'annotation', 'reflection', 'tool-call'];

    // Act
    const jsonSchema = z.toJSONSchema(stateMachineVersionBody, { io: 'input' });

    // Assess
    const states = jsonSchema.properties?.states as { items: { oneOf: { properties: { type: { const: string } } }[] } };
    expect(states.items.oneOf.map((variant) => variant.properties.type.const)).toEqual(stateTypes);
    expect(jsonSchema.required).toEqual([
      'description',
      'states',
      'new_user_initial_state',
      'returning_user_initial_state',
      'terminal_state',
      'references',
      'global_intra_state_navigation_guidelines',
      'global_action_guidelines',
      'global_boundary_constraints',
    ]);
  });
});

describe('createStateMachineRequest', () => {
  it('accepts a name and trims it', () => {
    // Prepare
    const body = { state_machine_name: '  order-support  ' };

    // Act
    const result = createStateMachineRequest.safeParse(body);

    // Assess
    expect(result.data).toEqual({ state_machine_name: 'order-support' });
  });

  it.each([
    ['a blank name', { state_machine_name: '  ' }],
    ['a name over 256 characters', { state_machine_name: 'x'.repeat(257) }],
    ['a name that is not text', { state_machine_name: 42 }],
    ['a missing name', {}],
  ])('rejects %s', (_case, body) => {
    // Prepare: the body comes from the case table.

    // Act
    const result = createStateMachineRequest.safeParse(body);

    // Assess
    expect(issuePaths(result)).toEqual([['state_machine_name']]);
  });
});

describe('listStateMachinesResponse', () => {
  it('accepts a last page with a machine that has no version yet', () => {
    // Prepare
    const response = {
      service_hierarchical_state_machines: [
        { id: referencedMachineId, name: 'billing', deprecated: false, latest_version: null },
      ],
      has_more: false,
      continuation_token: null,
    };

    // Act
    const result = listStateMachinesResponse.safeParse(response);

    // Assess
    expect(result.data).toEqual(response);
  });

  it('rejects a continuation token that is not an integer', () => {
    // Prepare
    const response = { service_hierarchical_state_machines: [], has_more: true, continuation_token: '10' };

    // Act
    const result = listStateMachinesResponse.safeParse(response);

    // Assess
    expect(issuePaths(result)).toEqual([['continuation_token']]);
  });
});

describe('stateMachineVersionRecord', () => {
  const storedRecord = () => ({
    org_id: 'acme',
    service_hierarchical_state_machine_id: referencedMachineId,
    version: 2,
    created_at: '2025-01-31T12:00:00.000Z',
    creator: { org_id: 'acme', user_id: '65f1c0a2b3d4e5f60718293c' },
    ...realisticVersionBody(),
  });

  it('accepts a stored version as listed, inside a page', () => {
    // Prepare
    const page = { state_machine_versions: [storedRecord()], has_more: true, continuation_token: 1 };

    // Act
    const result = listStateMachineVersionsResponse.safeParse(page);

    // Assess
    expect(result.error).toBeUndefined();
    expect(result.data?.state_machine_versions[0]?.terminal_state).toBe('wrap_up');
  });

  it('rejects a version number that is not an integer', () => {
    // Prepare
    const record = { ...storedRecord(), version: 'v2' };

    // Act
    const result = stateMachineVersionRecord.safeParse(record);

    // Assess
    expect(issuePaths(result)).toEqual([['version']]);
  });

  it('converts to JSON Schema as a response without transforms', () => {
    // Prepare
    const responseSchemas = [stateMachineVersionRecord, listStateMachineVersionsResponse, listStateMachinesResponse];

    // Act
    const convert = () => responseSchemas.map((schema) => z.toJSONSchema(schema, { io: 'output' }));

    // Assess
    expect(convert).not.toThrow();
  });
});

describe('createStateMachineVersionResponse', () => {
  it('accepts the created version, and null for a dry run', () => {
    // Prepare
    const created = { version: 1, created_at: '2025-01-31T12:00:00.000Z' };

    // Act
    const createdResult = createStateMachineVersionResponse.safeParse(created);
    const dryRunResult = createStateMachineVersionResponse.safeParse(null);

    // Assess
    expect(createdResult.data).toEqual(created);
    expect(dryRunResult.success).toBe(true);
  });
});
