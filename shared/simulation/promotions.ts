import type { AdvancePromotionMessage } from '../../events/queue-messages';
import { countPromotionEnded } from '../aws/business-metrics';
import { logger } from '../aws/observability';
import { queueSimulation } from '../aws/queues';
import { type Caller, creatorOf } from '../kernel/caller';
import { BadRequestError, ConflictError, NotFoundError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { hasPermission } from '../kernel/permissions';
import type { PromoteVersionSetRequest, PromotionRecord, VersionSetRecord } from '../service/schemas';
import { changeService, requireOnService, requireService, versionSetAttributes } from '../service/services';
import { revisionOf } from '../service/version-set-revisions';
import { EDGE, type ResolvedVersionSet, resolveVersionSet } from '../service/version-sets';
import { refreshCaller } from '../user/current-caller';
import { announcePromotionCompleted } from '../webhook/events';
import { getBacktest } from './backtest-repository';
import { backtestAttributes } from './backtests';
import { createPromotion, getPromotion, promotionEnd, updateRunningPromotion } from './promotion-repository';
import { createRun, runStanding } from './runs';

/*
 * Promotion of a version set, gated by a simulation. The request resolves the candidate (the
 * `from` set's versions at this moment), starts the gate's run on them and records the promotion
 * `running`; the simulation worker then looks at it again (`advancePromotion`, a delayed message
 * on the simulation queue) until the run ends. The set moves only in one transaction with the
 * promotion's end and the set's revision, conditioned on the service being as read, after a
 * check that the set's revision is still the one the promotion started from.
 */

/** How often a promotion looks at its gate run, and how long it waits for it at most. */
export const promotionPollSeconds = 5;
export const promotionDeadlineMs = 3 * 3600 * 1000;

const promotionNotFound = (id: string) => new NotFoundError(`Promotion ${id} does not exist.`);

/** The version set as the candidate: pinned to the numbers `from` resolves to now, with its model preferences. */
const candidateOf = (versions: ResolvedVersionSet): VersionSetRecord => ({
  agent_version_number: versions.agentVersion,
  service_hierarchical_state_machine_version_number: versions.stateMachineVersion,
  llm_model_preferences: versions.llmModelPreferences,
});

class SetChangedError extends Error {}
class CreatorMayNotPromoteError extends Error {}

/**
 * Whether the promotion's creator may still make it, as they stand now: a promotion completes
 * up to hours after it started, and moves the set on their authority.
 */
const creatorMayPromote = async (
  orgId: string,
  promotion: PromotionRecord,
  service: Parameters<typeof versionSetAttributes>[0],
) => {
  const creator = await refreshCaller({
    homeOrgId: promotion.creator.org_id,
    userId: promotion.creator.user_id,
    orgId,
    tokenType: 'Bearer',
  });
  return (
    creator !== undefined &&
    hasPermission(creator, 'Service:PromoteVersionSet', versionSetAttributes(service, promotion.version_set_name)) &&
    hasPermission(creator, 'Service:GetVersionSet', versionSetAttributes(service, promotion.from))
  );
};
class PromotionEndedError extends ConflictError {}

/** Ends a running promotion without moving the set, and announces it; one that had already ended is left as it is. */
const endWithout = async (orgId: string, promotion: PromotionRecord, status: 'rejected' | 'failed', reason: string) => {
  const ended: PromotionRecord = { ...promotion, status, reason, finished_at: nowIso() };
  if (!(await updateRunningPromotion(orgId, ended))) return;
  await announce(orgId, ended);
};

const announce = (orgId: string, promotion: PromotionRecord) => {
  countPromotionEnded();
  return announcePromotionCompleted({
    org_id: orgId,
    service_id: promotion.service_id,
    version_set_name: promotion.version_set_name,
    promotion_id: promotion.id,
    from: promotion.from,
    status: promotion.status === 'running' ? 'failed' : promotion.status,
    reason: promotion.reason,
    simulation_unit_test_set_run_id: promotion.simulation_unit_test_set_run_id,
    pass_rate: promotion.pass_rate,
    revision: promotion.revision,
    completed_at: promotion.finished_at ?? nowIso(),
  });
};

/**
 * Moves the set to the candidate, with the set's revision and the promotion's end in the same
 * transaction; ends it `failed` instead when the set changed since the promotion started.
 */
const promote = async (orgId: string, promotion: PromotionRecord): Promise<PromotionRecord> => {
  const name = promotion.version_set_name;
  const finishedAt = nowIso();
  let ended: PromotionRecord = { ...promotion, status: 'promoted', finished_at: finishedAt };
  try {
    await changeService(
      orgId,
      promotion.service_id,
      async (current) => {
        if (!Object.hasOwn(current.version_sets, name) || revisionOf(current, name) !== promotion.base_revision) {
          throw new SetChangedError();
        }
        if (!(await creatorMayPromote(orgId, promotion, current))) throw new CreatorMayNotPromoteError();
        return {
          ...current,
          version_sets: { ...current.version_sets, [name]: promotion.candidate },
          updated_by: promotion.creator,
          updated_at: finishedAt,
        };
      },
      {
        revision: {
          change: 'promoted',
          promotionId: promotion.id,
          runId: promotion.simulation_unit_test_set_run_id,
        },
        companions: (revisions) => {
          ended = {
            ...ended,
            revision: revisions[0]?.revision ?? null,
            reason: revisions.length === 0 ? `The version set already had the candidate versions.` : null,
          };
          return [
            {
              item: promotionEnd(orgId, ended),
              failure: () => new PromotionEndedError(`Promotion ${promotion.id} has already ended.`),
            },
          ];
        },
      },
    );
  } catch (error) {
    if (error instanceof PromotionEndedError) return (await getPromotion(orgId, promotion.id)) ?? promotion;
    const reason =
      error instanceof SetChangedError
        ? `Version set '${name}' was changed after the promotion started; it was left as it is.`
        : error instanceof CreatorMayNotPromoteError
          ? `Its creator may no longer promote version set '${name}' (Service:PromoteVersionSet, and Service:GetVersionSet on '${promotion.from}'); it was left as it is.`
          : error instanceof NotFoundError
            ? `Service ${promotion.service_id} no longer exists.`
            : undefined;
    if (reason === undefined) throw error;
    await endWithout(orgId, promotion, 'failed', reason);
    return (await getPromotion(orgId, promotion.id)) ?? promotion;
  }
  await announce(orgId, ended);
  return ended;
};

/**
 * `POST …/version_sets/{name}/promote`: starts a promotion of `from`'s versions into `name`
 * (refused into edge, as updating it is). Without a gate the set moves at once; with one, the
 * gate set runs on the candidate versions and the answer is the `running` promotion.
 */
export const promoteVersionSet = async (
  orgId: string,
  caller: Caller,
  input: { serviceId: string; versionSetName: string; body: PromoteVersionSetRequest },
): Promise<PromotionRecord> => {
  const { serviceId, versionSetName: name, body } = input;
  const service = await requireService(orgId, serviceId);
  requireOnService(caller, 'Service:PromoteVersionSet', service, versionSetAttributes(service, name));
  if (name === EDGE)
    throw new BadRequestError('Nothing can be promoted into the edge version set; it always uses the latest versions.');
  const before = Object.hasOwn(service.version_sets, name) ? service.version_sets[name] : undefined;
  if (!before) throw new NotFoundError(`Version set '${name}' does not exist in service ${serviceId}.`);
  if (body.from === name) throw new BadRequestError('A version set cannot be promoted into itself.');
  // A set the caller may not read is answered as a missing one.
  if (
    !Object.hasOwn(service.version_sets, body.from) ||
    !hasPermission(caller, 'Service:GetVersionSet', versionSetAttributes(service, body.from))
  ) {
    throw new NotFoundError(`Version set '${body.from}' does not exist in service ${serviceId}.`);
  }
  const versions = await resolveVersionSet(orgId, serviceId, body.from);
  const gate = body.gate ?? null;
  if (gate && 'simulation_backtest_id' in gate)
    await requireBacktestOf(orgId, caller, gate.simulation_backtest_id, versions);
  const run =
    gate && 'simulation_unit_test_set_id' in gate
      ? await createRun(orgId, caller, gate.simulation_unit_test_set_id, { serviceId, versions })
      : undefined;
  const promotion: PromotionRecord = {
    id: newId(),
    service_id: serviceId,
    version_set_name: name,
    from: body.from,
    gate,
    status: 'running',
    reason: null,
    before,
    candidate: candidateOf(versions),
    base_revision: revisionOf(service, name),
    simulation_unit_test_set_run_id: run?.simulation_unit_test_set_run_id ?? null,
    pass_rate: null,
    revision: null,
    creator: creatorOf(caller),
    created_at: nowIso(),
    finished_at: null,
  };
  await createPromotion(orgId, promotion);
  if (!gate) return promote(orgId, promotion);
  try {
    await queueSimulation({ type: 'advance-version-set-promotion', org_id: orgId, promotion_id: promotion.id });
  } catch (error) {
    await endWithout(orgId, promotion, 'failed', 'The promotion could not be queued; start it again.');
    throw error;
  }
  return promotion;
};

/** `GET …/version_sets/{name}/promotions/{promotion_id}`: the promotion, for a caller who may read the version set. */
export const getVersionSetPromotion = async (
  orgId: string,
  caller: Caller,
  input: { serviceId: string; versionSetName: string; promotionId: string },
): Promise<PromotionRecord> => {
  const service = await requireService(orgId, input.serviceId);
  requireOnService(caller, 'Service:GetVersionSet', service, versionSetAttributes(service, input.versionSetName));
  const promotion = await getPromotion(orgId, input.promotionId);
  if (!promotion || promotion.service_id !== input.serviceId || promotion.version_set_name !== input.versionSetName) {
    throw promotionNotFound(input.promotionId);
  }
  return promotion;
};

/**
 * The simulation worker's look at a running promotion: while its gate run is in progress it looks
 * again later; once the run completed, the set moves if the pass rate is met, else the promotion is
 * `rejected`; a run that was cancelled, vanished or outlasted the deadline fails it. Idempotent:
 * an ended promotion is left as it is, and it ends in one conditional write.
 */
export const advancePromotion = async (message: AdvancePromotionMessage): Promise<void> => {
  const orgId = message.org_id;
  const promotion = await getPromotion(orgId, message.promotion_id);
  if (promotion?.status !== 'running') return;
  if (promotion.gate && 'simulation_backtest_id' in promotion.gate) {
    await advanceOnBacktest(message, promotion, promotion.gate);
    return;
  }
  const runId = promotion.simulation_unit_test_set_run_id;
  const standing = runId ? await runStanding(orgId, runId) : undefined;
  if (!promotion.gate || !runId || !standing) {
    await endWithout(orgId, promotion, 'failed', 'The gate run does not exist.');
    return;
  }
  if (standing.status === 'cancelled') {
    await endWithout(orgId, promotion, 'failed', `The gate run ${runId} was cancelled.`);
    return;
  }
  if (standing.status === 'running') {
    if (Date.now() - Date.parse(promotion.created_at) > promotionDeadlineMs) {
      await endWithout(orgId, promotion, 'failed', `The gate run ${runId} did not complete in time.`);
      return;
    }
    await queueSimulation(message, promotionPollSeconds);
    return;
  }
  const passRate = standing.passRate ?? 0;
  const scored = { ...promotion, pass_rate: passRate };
  const minPassRate = 'min_pass_rate' in promotion.gate ? promotion.gate.min_pass_rate : 1;
  if (passRate < minPassRate) {
    await endWithout(
      orgId,
      scored,
      'rejected',
      `The gate's pass rate ${passRate} is below the required ${minPassRate}.`,
    );
    return;
  }
  const ended = await promote(orgId, scored);
  logger.info('version set promotion ended', { promotion_id: promotion.id, status: ended.status });
};

/**
 * A backtest gate: the backtest (which the caller may read) must be of the service and have
 * replayed exactly the versions `from` resolves to now (400 otherwise: the promotion would move
 * versions nobody backtested).
 */
const requireBacktestOf = async (orgId: string, caller: Caller, backtestId: string, versions: ResolvedVersionSet) => {
  const backtest = await getBacktest(orgId, backtestId, true);
  const missing = new NotFoundError(`Simulation backtest ${backtestId} does not exist.`);
  if (!backtest || !hasPermission(caller, 'Simulation:GetSimulationBacktest', backtestAttributes(backtest)))
    throw missing;
  const { candidate } = backtest;
  if (
    candidate.agentId !== versions.agentId ||
    candidate.agentVersion !== versions.agentVersion ||
    candidate.stateMachineId !== versions.stateMachineId ||
    candidate.stateMachineVersion !== versions.stateMachineVersion
  ) {
    throw new BadRequestError(
      `Simulation backtest ${backtestId} replayed other versions than the set to promote has now; backtest these.`,
    );
  }
  if (backtest.status === 'failed')
    throw new BadRequestError(`Simulation backtest ${backtestId} failed: ${backtest.reason}`);
};

/**
 * The look at a promotion gated by a backtest: while it runs, again later; once completed, the
 * set moves if its divergence rate is within the gate's maximum, else the promotion is rejected.
 */
const advanceOnBacktest = async (
  message: AdvancePromotionMessage,
  promotion: PromotionRecord,
  gate: { simulation_backtest_id: string; max_divergence_rate: number },
) => {
  const orgId = message.org_id;
  const backtest = await getBacktest(orgId, gate.simulation_backtest_id, true);
  if (!backtest || backtest.status === 'failed') {
    await endWithout(
      orgId,
      promotion,
      'failed',
      `The gate backtest ${gate.simulation_backtest_id} ${backtest ? 'failed' : 'does not exist'}.`,
    );
    return;
  }
  if (backtest.status === 'running') {
    if (Date.now() - Date.parse(promotion.created_at) > promotionDeadlineMs) {
      await endWithout(orgId, promotion, 'failed', `The gate backtest ${backtest.id} did not complete in time.`);
      return;
    }
    await queueSimulation(message, promotionPollSeconds);
    return;
  }
  const rate = backtest.summary?.divergence_rate ?? 1;
  const scored = { ...promotion, divergence_rate: rate };
  if (rate > gate.max_divergence_rate) {
    await endWithout(
      orgId,
      scored,
      'rejected',
      `The gate backtest's divergence rate ${rate} is above the allowed ${gate.max_divergence_rate}.`,
    );
    return;
  }
  const ended = await promote(orgId, scored);
  logger.info('version set promotion ended', { promotion_id: promotion.id, status: ended.status });
};
