import { sealSecrets } from '../auth/secret-box';
import type { Caller } from '../kernel/caller';
import { hasPermission } from '../kernel/permissions';
import { mayReadDerived } from './derived-from';
import { getLatestPersonaVersion, getPersona, personaAttributes } from './personas';
import type { PersonaSnapshot, ScenarioSnapshot } from './run-schemas';
import { getLatestScenarioVersion, getScenario, scenarioAttributes } from './scenarios';
import type { DerivedFrom } from './schemas';

/*
 * What a simulation runs with of a persona and a scenario: their latest versions, snapshotted (a
 * run's unit tests, a session). One made from a conversation is used only by a caller who may
 * read what it copied (else it is as missing): the simulation would show it to its readers.
 * `mustSee`: also as missing for a deleted one, or one the caller may not read itself (a session
 * names it directly; a run's unit test did when it was made).
 */

/** The persona's latest version as snapshotted (`variables` over its own); undefined when missing or unreadable. */
export const snapshotPersona = async (
  orgId: string,
  caller: Caller,
  personaId: string,
  options: { variables?: Record<string, string>; mustSee?: boolean } = {},
): Promise<{ snapshot: PersonaSnapshot; version: number; derivedFrom?: DerivedFrom } | undefined> => {
  const [persona, version] = await Promise.all([
    getPersona(orgId, personaId),
    getLatestPersonaVersion(orgId, personaId),
  ]);
  if (!persona || !version) return undefined;
  if (
    options.mustSee &&
    (persona.deprecated || !hasPermission(caller, 'Simulation:GetSimulationPersona', personaAttributes(persona)))
  )
    return undefined;
  if (!(await mayReadDerived(orgId, caller, persona))) return undefined;
  return {
    version: version.version,
    derivedFrom: persona.derived_from,
    snapshot: {
      name: persona.name,
      role: persona.role,
      background: version.background,
      preferred_language: version.preferred_language,
      timezone: version.timezone,
      user_models: version.user_models,
      nonsensitive_user_variables: { ...version.nonsensitive_user_variables, ...options.variables },
      // Sealed again: the simulation keeps them as the persona does.
      sealed_sensitive_user_variables: await sealSecrets(orgId, version.sensitive_user_variables),
    },
  };
};

/** The scenario's latest version as snapshotted; undefined when missing or unreadable. */
export const snapshotScenario = async (
  orgId: string,
  caller: Caller,
  scenarioId: string,
  options: { mustSee?: boolean } = {},
): Promise<{ snapshot: ScenarioSnapshot; version: number; derivedFrom?: DerivedFrom } | undefined> => {
  const [scenario, version] = await Promise.all([
    getScenario(orgId, scenarioId),
    getLatestScenarioVersion(orgId, scenarioId),
  ]);
  if (!scenario || !version) return undefined;
  if (
    options.mustSee &&
    (scenario.deprecated || !hasPermission(caller, 'Simulation:GetSimulationScenario', scenarioAttributes(scenario)))
  )
    return undefined;
  if (!(await mayReadDerived(orgId, caller, scenario))) return undefined;
  return {
    version: version.version,
    derivedFrom: scenario.derived_from,
    snapshot: {
      objective: version.objective,
      instructions: version.instructions,
      initial_message_type: version.initial_message_type,
      initial_external_event: version.initial_external_event,
      conversation_starts_at: version.conversation_starts_at,
    },
  };
};
