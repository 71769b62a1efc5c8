import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeWav, pcmFromFrames } from '#shared/speech/audio';
import { latestSignInLink, signInLinkCount } from '../integration/support/app-visitor';
import { api, harness } from '../integration/support/client';
import { createService, startConversation } from '../integration/support/conversations';
import { createOrganization, createUserSession, type Session } from '../integration/support/identity';
import { type HumanRecording, librivoxRecordings } from '../support/realtime-client';
import { launchWithMicrophone } from './browser-support';

/**
 * The chat page's talk mode in headless Chromium, its microphone Chromium's fake capture device
 * playing a LibriVox recording (human speech) followed by silence, looped: the page streams it
 * over the live voice session's socket, shows the transcripts, and plays the agent's audio.
 */

let browser: Browser;
let orgId: string;
let member: Session & { email: string };
let conversationId: string;

const appUrl = (path: string): string => `http://${orgId}.localhost:${new URL(harness().baseUrl).port}${path}`;

/** "he was not an ill disposed young man", then 2 s of silence, as the WAV Chromium loops. */
const writeMicrophoneRecording = async (): Promise<string> => {
  const recording = librivoxRecordings().find((candidate) => candidate.id.endsWith('0880')) as HumanRecording;
  const pcm = Buffer.concat([recording.pcm, Buffer.alloc(2 * 16_000 * 2)]);
  const path = join(await mkdtemp(join(tmpdir(), 'talk-microphone-')), 'microphone.wav');
  await writeFile(path, encodeWav(pcmFromFrames(pcm, { sampleRate: 16_000, channels: 1, sampleWidth: 2 })));
  return path;
};

beforeAll(async () => {
  const microphone = await writeMicrophoneRecording();
  browser = await launchWithMicrophone(microphone);
  let admin: Session;
  ({ orgId, session: admin } = await createOrganization());
  const { serviceId } = await createService(admin);
  member = await createUserSession(admin, 'DefaultUserRole', { first_name: 'Ada' });
  ({ conversationId } = await startConversation(member, { service_id: serviceId }));
});

afterAll(async () => {
  await browser?.close();
});

describe('the chat page talk mode', () => {
  it("streams the microphone over the voice session, shows what was heard and the agent's spoken reply", async () => {
    // Prepare
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(appUrl('/'));
    const before = await signInLinkCount(member.email);
    await page.fill('#email', member.email);
    await page.press('#email', 'Enter');
    await page.getByText('a link is on its way').waitFor();
    await page.goto(await latestSignInLink(member.email, before));
    await page.goto(appUrl(`/conversations/${conversationId}`));
    const replies = await page.locator('#transcript .message.agent').count();
    const sockets: string[] = [];
    page.on('websocket', (socket) => sockets.push(socket.url()));

    // Act
    await page.getByRole('button', { name: 'Talk' }).click();
    await page.getByText('Listening').waitFor({ timeout: 30_000 });
    const heard = page.locator('#transcript .message.user').last();
    await heard.waitFor({ timeout: 60_000 });
    await page.locator('#transcript .message.agent').nth(replies).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Stop talking' }).click();

    // Assess
    expect(sockets).toEqual([expect.stringContaining(`/v1/${orgId}/conversation/voice-session?conversation_id=`)]);
    await expect(heard.textContent()).resolves.toMatch(/young/);
    await expect(page.locator('#transcript .message.agent').nth(replies).textContent()).resolves.not.toBe('');
    const messages = await api(`/v1/${orgId}/conversation/${conversationId}/messages/`, {
      token: member.token,
      query: { sort_by: '+created_at' },
    });
    const spoken = (messages.body.messages as { message_type: string; format: string }[]).filter(
      (message) => message.message_type === 'user-message',
    );
    expect(spoken[0]?.format).toBe('voice');
    await context.close();
  });
});
