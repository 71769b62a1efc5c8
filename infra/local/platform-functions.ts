import type { Context } from 'aws-lambda';
import { lakeCompactionMinutes } from '#shared/analytics/lake-feed';
import { canonicalResourcePaths, greedySegment, sharedResourcePrefix } from '#shared/api/paths';
import { routeTable } from '#shared/api/route-table';
import { tableStreamConsumers } from '#shared/composition/table-stream-consumers';
import { type EndpointGroup, selfRoutedGroups, type WorkerName } from '#shared/kernel/operation';
import { queueDefinitions } from '#shared/kernel/queues';
import type { TableStreamConsumer } from '#shared/kernel/table-stream';
import { type BundledFunction, type BundledFunctionSpec, bundledFunction } from './bundled-function';
import type { DeployedFunction, Deployment } from './deployment';
import type { SqsBatchHandler } from './queue-poller';
import type { StreamBatchHandler } from './stream-poller';

/**
 * The functions the local platform invokes: each endpoint group's API handler, the queue
 * consumers, the table stream's consumers and the scheduled functions. Either the TypeScript sources, loaded into this
 * process (`sourceFunctions`), or the deployed artifacts of a cloud assembly, each in a worker
 * thread of its own, wired as its template wires them (`bundledFunctions`).
 */
export type ScheduledHandler = (event: unknown, context: Context) => Promise<unknown>;

export interface PlatformFunctions {
  /** The Lambda handler serving an endpoint group's requests. */
  api(group: EndpointGroup): Promise<unknown>;
  consumers: {
    worker: WorkerName;
    functionName: string;
    batchSize: number;
    timeoutMs: number;
    handler: SqsBatchHandler;
  }[];
  /** The table stream's consumers, with the settings of their event source mapping. */
  streamConsumers: {
    name: string;
    functionName: string;
    timeoutMs: number;
    settings: Pick<TableStreamConsumer, 'batchSize' | 'batchingWindowSeconds' | 'retryAttempts' | 'filters'>;
    handler: StreamBatchHandler;
  }[];
  schedules: { functionName: string; periodSeconds: number; timeoutMs: number; handler: ScheduledHandler }[];
  /** Bundled: the function serving each endpoint group, as its worker thread runs it (for tools beside the platform). */
  apiSpecs?: Partial<Record<EndpointGroup, BundledFunctionSpec>>;
  stop(): Promise<void>;
}

const day = 86_400;

/** The compaction schedule's function, as the stack names it (its service `lake-compaction-schedule`). */
export const lakeCompactionFunctionName = 'classic-api-lake-compaction-schedule';

/** The handler modules under functions/, in this process, with the platform's environment. */
export const sourceFunctions = (dailyScheduleSeconds: number | undefined): PlatformFunctions => ({
  api: async (group) => (await import(`../../functions/${group}/handler.ts`)).handler,
  consumers: queueDefinitions
    .filter((definition) => definition.hasConsumer)
    .map((definition) => ({
      worker: definition.worker,
      functionName: `classic-api-${definition.worker}-worker`,
      batchSize: definition.batchSize,
      timeoutMs: definition.consumerTimeoutSeconds * 1000,
      handler: async (event, context) =>
        ((await import(`../../functions/workers/${definition.worker}.ts`)) as { handler: SqsBatchHandler }).handler(
          event,
          context,
        ),
    })),
  streamConsumers: tableStreamConsumers.map((consumer) => ({
    name: consumer.name,
    functionName: `classic-api-${consumer.name}-stream`,
    timeoutMs: consumer.consumerTimeoutSeconds * 1000,
    settings: consumer,
    handler: async (event, context) =>
      ((await import(`../../functions/streams/${consumer.name}.ts`)) as { handler: StreamBatchHandler }).handler(
        event,
        context,
      ),
  })),
  schedules: [
    {
      functionName: 'classic-api-api-key-expiration-schedule',
      periodSeconds: dailyScheduleSeconds ?? day,
      timeoutMs: 5 * 60_000,
      handler: async (event, context) =>
        ((await import('../../functions/schedules/api-key-expiration.ts')) as { handler: ScheduledHandler }).handler(
          event,
          context,
        ),
    },
    {
      functionName: lakeCompactionFunctionName,
      periodSeconds: lakeCompactionMinutes * 60,
      timeoutMs: 15 * 60_000,
      handler: async (event, context) =>
        ((await import('../../functions/schedules/lake-compaction.ts')) as { handler: ScheduledHandler }).handler(
          event,
          context,
        ),
    },
  ],
  stop: async () => undefined,
});

/** The template method serving each endpoint group: its operations' resources and methods, as API Gateway routes them. */
const functionsByGroup = (deployment: Deployment): Map<EndpointGroup, { fn: DeployedFunction; streaming: boolean }> => {
  const resources = canonicalResourcePaths(routeTable);
  const byGroup = new Map<EndpointGroup, { fn: DeployedFunction; streaming: boolean }>();
  for (const [operation, resource] of resources) {
    const selfRouted = selfRoutedGroups.includes(operation.group);
    const prefix = selfRouted
      ? sharedResourcePrefix(
          [...resources].filter(([other]) => other.group === operation.group).map(([, path]) => path),
        )
      : undefined;
    const method = deployment.methods.find((candidate) =>
      prefix === undefined
        ? candidate.resourcePath === resource && candidate.httpMethod === operation.method
        : candidate.resourcePath === `${prefix}/${greedySegment}` && candidate.httpMethod === 'ANY',
    );
    if (!method) throw new Error(`${deployment.stackName} routes ${operation.method} ${resource} to no function`);
    const known = byGroup.get(operation.group);
    if (known && known.fn !== method.function)
      throw new Error(`${deployment.stackName} routes endpoint group ${operation.group} to more than one function`);
    byGroup.set(operation.group, { fn: method.function, streaming: method.streaming });
  }
  return byGroup;
};

/**
 * The cloud assembly's functions, each from its asset directory in a worker thread with the
 * environment `environmentOf` gives it (the template's, resolved, and the local stand-ins).
 * `dailyScheduleSeconds` replaces a rule's one-day rate (tests run the daily job every few seconds).
 */
export const bundledFunctions = (
  deployment: Deployment,
  environmentOf: (fn: DeployedFunction) => Record<string, string>,
  dailyScheduleSeconds: number | undefined,
): PlatformFunctions => {
  const specOf = (fn: DeployedFunction): BundledFunctionSpec => ({
    name: fn.name,
    assetDir: fn.assetDir,
    handler: fn.handler,
    env: environmentOf(fn),
  });
  const running = new Map<DeployedFunction, BundledFunction>();
  const runnerOf = (fn: DeployedFunction): BundledFunction => {
    let runner = running.get(fn);
    if (!runner) {
      runner = bundledFunction(specOf(fn));
      running.set(fn, runner);
    }
    return runner;
  };
  const invoker = (fn: DeployedFunction) => async (event: unknown, context: Context) =>
    ((await runnerOf(fn).load()).handler as ScheduledHandler)(event, context);
  const groups = functionsByGroup(deployment);
  return {
    api: async (group) => {
      const served = groups.get(group);
      if (!served) throw new Error(`${deployment.stackName} has no function for endpoint group ${group}`);
      const { streaming, handler } = await runnerOf(served.fn).load();
      // API Gateway would buffer a streamed handler's prelude as the body, or wait in vain for a buffered one's stream.
      if (streaming !== served.streaming)
        throw new Error(
          `${served.fn.name} ${streaming ? 'streams' : 'does not stream'}, but its API integration ${served.streaming ? 'streams' : 'is buffered'}`,
        );
      return handler;
    },
    consumers: deployment.consumers.map((consumer) => ({
      worker: consumer.worker as WorkerName,
      functionName: consumer.function.name,
      batchSize: consumer.batchSize,
      timeoutMs: consumer.function.timeoutMs,
      handler: invoker(consumer.function) as SqsBatchHandler,
    })),
    streamConsumers: deployment.streamConsumers.map((consumer) => ({
      name: consumer.name,
      functionName: consumer.function.name,
      timeoutMs: consumer.function.timeoutMs,
      settings: consumer.settings,
      handler: invoker(consumer.function) as StreamBatchHandler,
    })),
    schedules: deployment.schedules.map((schedule) => ({
      functionName: schedule.function.name,
      periodSeconds:
        schedule.periodSeconds === day && dailyScheduleSeconds !== undefined
          ? dailyScheduleSeconds
          : schedule.periodSeconds,
      timeoutMs: schedule.function.timeoutMs,
      handler: invoker(schedule.function),
    })),
    apiSpecs: Object.fromEntries([...groups].map(([group, { fn }]) => [group, specOf(fn)])),
    stop: async () => {
      await Promise.all([...running.values()].map((runner) => runner.stop()));
    },
  };
};
