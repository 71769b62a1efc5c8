import { performance } from 'node:perf_hooks';
import { toolCallStateMachineVersion } from '#shared/conversation/fixtures';
import { call, createService, createUser, interact, rootSession, type Session, startConversation } from './api-client';
import { type Percentiles, percentiles } from './conversations';
import { startPlatformProcess } from './platform-process';

/**
 * Tool figures against the platform started as `npm start` starts it (local runtime: a child
 * process per run):
 * 1. cold and warm invocation: the first run of a freshly deployed version of the TypeScript
 *    sample, then runs of the same version (each run is a new process, so "warm" means the
 *    version is unpacked and the platform's code paths are loaded);
 * 2. the latency a tool call adds to a turn: the same turn ("I said goodbye" after the opening)
 *    through the sample machine, whose `triage` is a decision, and through the same machine with
 *    `triage` a tool-call state calling the sample; the difference of the medians.
 */
export interface ToolFigures {
  coldInvocationMs: number;
  warmInvocation: Percentiles;
  turnWithoutTool: Percentiles;
  turnWithTool: Percentiles;
  addedByToolCallMs: number;
}

const turns = 6;

const turnLatency = async (
  admin: Session,
  credentials: Parameters<typeof createUser>[1],
  serviceId: string,
): Promise<number[]> => {
  const latencies: number[] = [];
  for (let index = 0; index < turns; index += 1) {
    // A user per conversation: creating conversations is limited to 5 a minute per user.
    const user = await createUser(admin, credentials);
    const opening = await startConversation(user, serviceId);
    const conversationId = opening.events.find(({ event }) => event.type === 'conversation-created')?.event
      .conversation_id as string;
    const turn = await interact(user, conversationId, 'I said goodbye');
    const complete = turn.events.find(({ event }) => event.type === 'interaction-complete');
    if (!complete)
      throw new Error(`turn did not complete: ${turn.errorText ?? JSON.stringify(turn.events.at(-1)?.event)}`);
    latencies.push(complete.at - turn.sentAt);
  }
  return latencies;
};

export const measureTools = async (): Promise<ToolFigures> => {
  const platform = await startPlatformProcess({ label: 'tools' });
  try {
    const admin = await rootSession(platform.baseUrl, platform.credentials);
    const { baseUrl, orgId, token } = admin;
    const tool = await call(
      baseUrl,
      'create tool',
      `/v1/${orgId}/tool/`,
      { token, body: { name: `bench_${Date.now()}`, description: 'Greets.', tags: {} } },
      201,
    );
    const published = await call(
      baseUrl,
      'publish',
      `/v1/${orgId}/tool/${tool.id}/version`,
      { token, body: { project_path: 'samples/greeting', bump_type: 'major' } },
      201,
    );
    const deadline = Date.now() + 60_000;
    for (;;) {
      const listed = await call(baseUrl, 'list versions', `/v1/${orgId}/tool/${tool.id}/version`, { token }, 200);
      if (listed.tool_versions[0]?.status === 'deployed') break;
      if (Date.now() > deadline) throw new Error('the published version was not deployed within a minute');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const invokePath = `/v1/${orgId}/tool/${tool.id}/version/${published.new_version}/invoke`;
    const started = performance.now();
    await call(
      baseUrl,
      'cold invoke',
      invokePath,
      { token, body: { inputs: [{ input_parameters: { name: 'Cold' } }] } },
      200,
    );
    const coldInvocationMs = performance.now() - started;
    const warm: number[] = [];
    for (let index = 0; index < 8; index += 1) {
      const at = performance.now();
      await call(
        baseUrl,
        'warm invoke',
        invokePath,
        { token, body: { inputs: [{ input_parameters: { name: 'Warm' } }] } },
        200,
      );
      warm.push(performance.now() - at);
    }
    const plain = await createService(admin);
    const withTool = await createService(admin, toolCallStateMachineVersion(tool.id as string));
    const turnWithoutTool = percentiles(await turnLatency(admin, platform.credentials, plain));
    const turnWithTool = percentiles(await turnLatency(admin, platform.credentials, withTool));
    return {
      coldInvocationMs,
      warmInvocation: percentiles(warm),
      turnWithoutTool,
      turnWithTool,
      addedByToolCallMs: turnWithTool.p50 - turnWithoutTool.p50,
    };
  } finally {
    await platform.stop();
  }
};

const ms = (value: number) => `${value.toFixed(0)} ms`;

export const printToolFigures = (figures: ToolFigures): void => {
  console.log(`invocation over HTTP, cold (first run of a new version): ${ms(figures.coldInvocationMs)}`);
  console.log(
    `invocation over HTTP, warm: p50 ${ms(figures.warmInvocation.p50)}, max ${ms(figures.warmInvocation.max)} (${figures.warmInvocation.count} runs)`,
  );
  console.log(
    `turn through a decision state: p50 ${ms(figures.turnWithoutTool.p50)}, max ${ms(figures.turnWithoutTool.max)}`,
  );
  console.log(
    `turn through a tool-call state: p50 ${ms(figures.turnWithTool.p50)}, max ${ms(figures.turnWithTool.max)}`,
  );
  console.log(`latency a tool call adds to a turn (local runtime, p50 difference): ${ms(figures.addedByToolCallMs)}`);
};
