import { z } from 'zod';
import { catalogHead } from '../data/versioned-catalog';
import { defineVersionedEntity } from '../data/versioned-entity';
import { creatorInfo } from '../kernel/schemas';
import { derivedFrom } from './schemas';

/*
 * Personas, on the versioned-entity layout (partition, then sort key):
 *   head        SIM_PERSONA          {id}            (creation order; `deprecated` is `is_deleted`)
 *   name guard  SIM_PERSONA_NAME     {name}          (names stay taken by deleted personas)
 *   version     SIM_PERSONA_VERSION  {id}#{version}
 * Sensitive user variables are stored sealed (`secret-box.ts`), bound to the organization.
 */

export const storedPersonaVersion = z.object({
  id: z.string(),
  /** The same as `id`: the versioned entity lists versions without their `id`, and the reference shows `_id`. */
  _id: z.string(),
  org_id: z.string(),
  simulation_persona_id: z.string(),
  version: z.number().int(),
  background: z.string(),
  preferred_language: z.string().nullable(),
  timezone: z.string().nullable(),
  user_models: z.array(z.string()),
  nonsensitive_user_variables: z.record(z.string(), z.string()),
  sensitive_user_variables: z.record(z.string(), z.string()).describe('Sealed values.'),
  created_at: z.string(),
  creator: creatorInfo,
});
export type StoredPersonaVersion = z.infer<typeof storedPersonaVersion>;

export const personas = defineVersionedEntity({
  entity: 'simulation-persona',
  token: 'SIM_PERSONA',
  label: 'simulation persona',
  version: storedPersonaVersion,
});

/** `derived_from`: made from a conversation, whose protection its content keeps (`derived-from.ts`). */
export const storedPersona = catalogHead.extend({ role: z.string(), derived_from: derivedFrom.optional() });
export type StoredPersona = z.infer<typeof storedPersona>;
