import type { Readable } from 'node:stream';
import { contentTypeOf, presignedReadUrl, readObject, writeObject } from '../aws/bucket';
import { type ConversationPartition, retentionTags } from './retention';

/**
 * The raw audio of voice messages, in the artifact bucket under
 * `voice-audio/{org}/{conversation}/{message}`: the organization's prefix, so erasing the
 * organization erases it. The object's content type says what it holds.
 */
export const voiceAudioRoot = (orgId: string): string => `voice-audio/${orgId}/`;

const voiceAudioKey = (orgId: string, conversationId: string, messageId: string): string =>
  `${voiceAudioRoot(orgId)}${conversationId}/${messageId}`;

/** What a message source URL serves: the Python SDK accepts exactly these two. */
export type AudioContentType = 'audio/wav' | 'audio/mpeg';

export interface MessageAudio {
  bytes: Buffer;
  contentType: AudioContentType;
}

export const storeMessageAudio = async (
  conversation: ConversationPartition,
  messageId: string,
  audio: MessageAudio,
): Promise<void> => {
  await writeObject(
    voiceAudioKey(conversation.org_id, conversation.id, messageId),
    audio.bytes,
    audio.contentType,
    retentionTags(conversation),
  );
};

const shortLivedSeconds = 15 * 60;
const longLivedSeconds = 12 * 60 * 60;

/** A presigned GET of the message's audio, or undefined when none is stored. */
export const messageAudioUrl = async (
  orgId: string,
  conversationId: string,
  messageId: string,
  longLived: boolean,
): Promise<{ url: string; expires_at: string; content_type: AudioContentType } | undefined> => {
  const key = voiceAudioKey(orgId, conversationId, messageId);
  const contentType = await contentTypeOf(key);
  if (contentType === undefined) return undefined;
  const expiresIn = longLived ? longLivedSeconds : shortLivedSeconds;
  const url = await presignedReadUrl(key, expiresIn);
  return {
    url,
    expires_at: new Date(Date.now() + expiresIn * 1000).toISOString(),
    content_type: contentType === 'audio/mpeg' ? 'audio/mpeg' : 'audio/wav',
  };
};

/** The message's audio as a stream with its type, or undefined when none is stored (the console plays it). */
export const readMessageAudio = async (
  orgId: string,
  conversationId: string,
  messageId: string,
): Promise<{ body: Readable; contentType: AudioContentType } | undefined> => {
  const key = voiceAudioKey(orgId, conversationId, messageId);
  const contentType = await contentTypeOf(key);
  if (contentType === undefined) return undefined;
  return { body: await readObject(key), contentType: contentType === 'audio/mpeg' ? 'audio/mpeg' : 'audio/wav' };
};
