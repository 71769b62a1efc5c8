import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useLocalAws } from '../../tests/unit/local/use-local-aws';
import { UnauthorizedError } from '../kernel/errors';
import {
  appSessionLive,
  endAppSession,
  issueTalkToken,
  openAppSession,
  talkTokenLifetimeSeconds,
  verifyTalkToken,
} from './app-sessions';
import { claimedPurpose, verifyAccessToken } from './tokens';

useLocalAws();

beforeAll(async () => {
  process.env.SIGNING_KEY_FILE = join(await mkdtemp(join(tmpdir(), 'app-sessions-test-')), 'signing-key.json');
  delete process.env.SIGNING_KEY_SECRET_ARN;
});

describe('app sessions', () => {
  it('opens a session whose cookie token names it, live for its user until it is ended', async () => {
    // Prepare
    const issued = await openAppSession('acme', 'user-1');
    const { appSessionId } = await verifyAccessToken(issued.token);
    if (appSessionId === undefined) throw new Error('the cookie token names no session');
    const liveBefore = await appSessionLive('acme', appSessionId, 'user-1');

    // Act
    await endAppSession('acme', appSessionId);

    // Assess
    expect(liveBefore).toBe(true);
    expect(await appSessionLive('acme', appSessionId, 'user-1')).toBe(false);
  });

  it("is not another user's, nor another organization's", async () => {
    const { appSessionId } = await verifyAccessToken((await openAppSession('acme', 'user-1')).token);
    expect(await appSessionLive('acme', appSessionId as string, 'user-2')).toBe(false);
    expect(await appSessionLive('other', appSessionId as string, 'user-1')).toBe(false);
  });
});

describe('talk tokens', () => {
  it('names its session and conversation, lives 5 minutes, and is no access token', async () => {
    // Act
    const issued = await issueTalkToken({
      orgId: 'acme',
      userId: 'user-1',
      appSessionId: 'session-1',
      conversationId: 'conversation-1',
    });

    // Assess
    expect(issued.expiresIn).toBe(talkTokenLifetimeSeconds);
    expect(talkTokenLifetimeSeconds).toBe(300);
    expect(claimedPurpose(issued.token)).toBe('talk');
    expect(await verifyTalkToken(issued.token)).toMatchObject({
      orgId: 'acme',
      userId: 'user-1',
      appSessionId: 'session-1',
      conversationId: 'conversation-1',
    });
    await expect(verifyAccessToken(issued.token)).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('is issued only in a session, and an access token does not pass for one', async () => {
    const outside = issueTalkToken({ orgId: 'acme', userId: 'user-1', appSessionId: '', conversationId: 'c' });
    await expect(outside).rejects.toBeInstanceOf(UnauthorizedError);
    const cookieToken = (await openAppSession('acme', 'user-1')).token;
    await expect(verifyTalkToken(cookieToken)).rejects.toBeInstanceOf(UnauthorizedError);
  });
});
