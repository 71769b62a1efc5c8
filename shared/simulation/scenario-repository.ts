import { z } from 'zod';
import { catalogHead } from '../data/versioned-catalog';
import { defineVersionedEntity } from '../data/versioned-entity';
import { creatorInfo } from '../kernel/schemas';
import { derivedFrom, initialMessageTypes, referenceMessage } from './schemas';

/*
 * Scenarios, on the versioned-entity layout (partition, then sort key):
 *   head        SIM_SCENARIO          {id}            (creation order; `deprecated` is `is_deleted`)
 *   name guard  SIM_SCENARIO_NAME     {name}          (names stay taken by deleted scenarios)
 *   version     SIM_SCENARIO_VERSION  {id}#{version}
 * A version is stored in one form whichever revision created it (`scenarioVersionBody`).
 */

export const storedScenarioVersion = z.object({
  id: z.string(),
  /** The same as `id`: the versioned entity lists versions without their `id`, and the reference shows `_id`. */
  _id: z.string(),
  org_id: z.string(),
  simulation_scenario_id: z.string(),
  version: z.number().int(),
  objective: z.string(),
  instructions: z.string(),
  initial_message_type: z.enum(initialMessageTypes),
  /** The opening event's text when the spec revision gave one; otherwise the run composes it. */
  initial_external_event: z.string().nullable(),
  conversation_starts_at: z.string().nullable(),
  /** The messages of the conversation the scenario was made from (`from_conversation`), for reference. */
  reference_transcript: z.array(referenceMessage).nullable().default(null),
  created_at: z.string(),
  creator: creatorInfo,
});
export type StoredScenarioVersion = z.infer<typeof storedScenarioVersion>;

export const scenarios = defineVersionedEntity({
  entity: 'simulation-scenario',
  token: 'SIM_SCENARIO',
  label: 'simulation scenario',
  version: storedScenarioVersion,
});

/** `derived_from`: made from a conversation, whose protection its content keeps (`derived-from.ts`). */
export const storedScenario = catalogHead.extend({ derived_from: derivedFrom.optional() });
export type StoredScenario = z.infer<typeof storedScenario>;
