import { PassThrough, Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type yazl from 'yazl';
import { listObjects, readObject, readObjectBytes, type StoredObject } from '../aws/bucket';
import { logger } from '../aws/observability';
import { getConversation } from '../conversation/index';
import {
  bundleLogPrefix,
  type PromptLogBundle,
  parsePromptLogBundle,
  promptLogGuard,
  promptLogRoot,
} from '../conversation/prompt-log';
import type { ConversationRecord } from '../conversation/schemas';
import type { Caller } from '../kernel/caller';
import { NotFoundError } from '../kernel/errors';
import { conversationAttributes, hasPermission, requirePermission } from '../kernel/permissions';
import { requireOrganization } from '../organization/index';

/**
 * The prompt-log download: a zip of the logs under a prefix (relative to the organization's
 * root, `shared/conversation/prompt-log.ts`), written from the past 30 days, at most 1,000,
 * streamed entry by entry and never built in memory. Each log gives `{log_key}-system`,
 * `{log_key}-history` and `{log_key}-metrics` (when the call's metrics were written), or `{log_key}-error` when it cannot be read or the caller may not read
 * it: Conversation:GetInteractionInsights on the conversation it is about, Service:GetService
 * on the service for starters. Logs are stored a scope at a time (one object holding a turn's
 * calls); those written before were an object per part, and are read so.
 */
export const maxPromptLogs = 1000;
const windowMilliseconds = 30 * 24 * 3600 * 1000;
const parts = ['system', 'history'] as const;
/** Written once the call ended; logs from before calls were measured, or of calls cut short, have none. */
const optionalPart = 'metrics';

/** A log to download: an object per part (as logs were first stored), or a call of a scope's stored calls. */
type LogKey = { key: string; hasMetrics: boolean; bundle?: undefined } | { key: string; bundle: string };

/** The folder a prefix names or ends inside: a scope's calls are stored beside its logs' keys. */
const folderOf = (prefix: string): string => prefix.slice(0, prefix.lastIndexOf('/') + 1);

/** Log keys (without their `-system` / `-history` / `-metrics` part) under the prefix, newer than the window, in key order. */
const logKeysUnder = async (prefix: string, since: Date): Promise<LogKey[]> => {
  const separate = new Map<string, boolean>();
  const bundles: string[] = [];
  const collect = (objects: StoredObject[]) => {
    separate.clear();
    bundles.length = 0;
    for (const object of objects) {
      if (object.lastModified < since) continue;
      const scope = bundleLogPrefix(object.key);
      // A scope's calls may fall under the prefix when either contains the other.
      if (scope !== undefined && (scope.startsWith(prefix) || prefix.startsWith(scope))) bundles.push(object.key);
      const match = /^(.*)-(system|history|metrics)$/.exec(object.key);
      if (match?.[1]?.startsWith(prefix))
        separate.set(match[1], separate.get(match[1]) === true || match[2] === optionalPart);
    }
    return separate.size + bundles.length > maxPromptLogs;
  };
  collect(await listObjects(folderOf(prefix), collect));
  const keys: LogKey[] = [...separate].map(([key, hasMetrics]) => ({ key, hasMetrics }));
  for (const bundle of bundles) {
    // A scope's calls are read here for their keys; a bundle that cannot be read gives one `-error`.
    const calls = await readPromptLogBundle(bundle).then(
      ({ calls: stored }) => stored.map((call) => call.key),
      () => [`${bundleLogPrefix(bundle)}calls`],
    );
    keys.push(...calls.filter((key) => key.startsWith(prefix)).map((key) => ({ key, bundle })));
    if (keys.length > maxPromptLogs) break;
  }
  return keys.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).slice(0, maxPromptLogs);
};

const readPromptLogBundle = async (key: string) => parsePromptLogBundle(await readObjectBytes(key));

/** Why the caller may not read a log, or undefined when they may. */
const refusalFor = (caller: Caller, orgId: string) => {
  const conversations = new Map<string, Promise<ConversationRecord | undefined>>();
  return async (logKey: string): Promise<string | undefined> => {
    const guard = promptLogGuard(orgId, logKey);
    if (!guard) return 'This log names no record whose permissions could guard it.';
    if (guard.kind === 'service') {
      return hasPermission(caller, 'Service:GetService', { id: guard.serviceId, service_id: guard.serviceId })
        ? undefined
        : 'Missing required permission Service:GetService.';
    }
    if (!conversations.has(guard.conversationId))
      conversations.set(guard.conversationId, getConversation(orgId, guard.conversationId));
    const conversation = await conversations.get(guard.conversationId);
    if (!conversation) return 'The conversation of this log no longer exists.';
    return hasPermission(caller, 'Conversation:GetInteractionInsights', conversationAttributes(conversation))
      ? undefined
      : 'Missing required permission Conversation:GetInteractionInsights.';
  };
};

/**
 * A log's entries, read whole before any is added (a log is a prompt and a history): a log
 * that cannot be read, or that the caller may not read, is one `-error` entry saying why, so a
 * failure part-way never leaves an entry cut short.
 */
const logEntries = async (
  log: LogKey,
  name: string,
  refusal: (key: string) => Promise<string | undefined>,
  bundleOf: (key: string) => Promise<PromptLogBundle>,
): Promise<[string, Buffer][]> => {
  try {
    const refused = await refusal(log.key);
    if (refused !== undefined) return [[`${name}-error`, Buffer.from(refused, 'utf8')]];
    if (log.bundle !== undefined) {
      const call = (await bundleOf(log.bundle)).calls.find((stored) => stored.key === log.key);
      if (!call) throw new Error(`no call ${log.key} in ${log.bundle}`);
      return [
        [`${name}-system`, Buffer.from(call.system, 'utf8')],
        [`${name}-history`, Buffer.from(call.history, 'utf8')],
        ...(call.metrics === undefined
          ? []
          : [[`${name}-metrics`, Buffer.from(call.metrics, 'utf8')] as [string, Buffer]]),
      ];
    }
    return await Promise.all(
      [...parts, ...(log.hasMetrics ? [optionalPart] : [])].map(async (part): Promise<[string, Buffer]> => {
        const body = await readObject(`${log.key}-${part}`);
        return [`${name}-${part}`, Buffer.concat(await body.toArray())];
      }),
    );
  } catch (error) {
    logger.warn('prompt log not readable', { key: log.key, error: error as Error });
    return [[`${name}-error`, Buffer.from('This log could not be read.', 'utf8')]];
  }
};

/**
 * Adds each log to the zip in turn, holding at most one log in memory and waiting for the zip
 * to take it before reading the next, then ends it: the download is a whole zip whatever fails.
 */
const writeLogs = async (
  zip: yazl.ZipFile,
  root: string,
  logKeys: LogKey[],
  refusal: (key: string) => Promise<string | undefined>,
) => {
  // One scope's calls at a time are held in memory: the last one read.
  let held: { key: string; bundle: Promise<PromptLogBundle> } | undefined;
  const bundleOf = (key: string) => {
    if (held?.key !== key) held = { key, bundle: readPromptLogBundle(key) };
    return held.bundle;
  };
  for (const logKey of logKeys) {
    for (const [entryName, bytes] of await logEntries(logKey, logKey.key.slice(root.length), refusal, bundleOf)) {
      const body = Readable.from([bytes]);
      zip.addReadStream(body, entryName);
      await finished(body);
    }
  }
  zip.end();
};

export const getPromptLogZip = async (orgId: string, caller: Caller, prefix: string): Promise<Readable> => {
  await requireOrganization(orgId);
  requirePermission(caller, 'Admin:GetPromptLogs');
  const root = promptLogRoot(orgId);
  const logKeys = await logKeysUnder(`${root}${prefix}`, new Date(Date.now() - windowMilliseconds));
  if (logKeys.length === 0) throw new NotFoundError('No prompt logs found matching the supplied prefix.');
  // The zip writer serves this download alone: a cold start does not load it.
  const { ZipFile } = (await import('yazl')).default;
  const zip = new ZipFile();
  const output = new PassThrough();
  zip.outputStream.pipe(output);
  zip.on('error', (error: Error) => output.destroy(error));
  writeLogs(zip, root, logKeys, refusalFor(caller, orgId)).catch((error: unknown) => {
    // Each log's failures are entries already; this is the zip writer itself failing.
    logger.error('prompt log zip failed', { error: error as Error });
    output.destroy(error as Error);
  });
  return output;
};
