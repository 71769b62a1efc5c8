import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createResidentRecognizer, dithered, missingRecognizerMessage, streamBlockBytes } from './pocketsphinx';
import { SpeechUnavailableError } from './provider';

/**
 * The pool around the recognizer's processes, with a stand-in for the Python program: it speaks
 * the same protocol (a ready line, then requests of a letter, a 4-byte length and the audio in, one
 * JSON line out per request; a stream's words are the text of its audio so far) and
 * answers what it was sent, or takes 200 ms, hangs or dies when the audio says so. The real recognizer is
 * exercised by tests/integration/conversation/voice.test.ts.
 */
const standIn = `#!/usr/bin/env node
let buffered = Buffer.alloc(0);
let heard = '';
const answer = (value) => process.stdout.write(JSON.stringify(value) + '\\n');
if (process.env.STAND_IN_MISSING) { answer({ error: 'no library' }); process.exit(3); }
if (process.env.STAND_IN_BROKEN) { answer({ error: 'invalid decoder settings' }); process.exit(2); }
if (process.env.STAND_IN_STARTS) require('node:fs').appendFileSync(process.env.STAND_IN_STARTS, process.pid + '\\n');
answer({ ready: true });
process.stdin.on('data', (chunk) => {
  buffered = Buffer.concat([buffered, chunk]);
  while (buffered.length >= 5 && buffered.length >= 5 + buffered.readUInt32LE(1)) {
    const op = String.fromCharCode(buffered[0]);
    const length = buffered.readUInt32LE(1);
    // The recognizer dithers what it sends: the low bit of each sample is noise, the high byte the text.
    const bytes = buffered.subarray(5, 5 + length);
    const text = Buffer.from(bytes.filter((_, index) => index % 2 === 1)).toString();
    buffered = buffered.subarray(5 + length);
    if (process.env.STAND_IN_REQUESTS) require('node:fs').appendFileSync(process.env.STAND_IN_REQUESTS, op + text.replace(/\\.+/g, '') + '\\n');
    if (text.startsWith('hang')) continue;
    if (text.startsWith('slow')) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    if (text === 'die') process.exit(1);
    if (op === 'S') { heard = ''; answer({ partial: '' }); continue; }
    if (op === 'A') { heard += text; answer({ partial: heard }); continue; }
    if (op === 'E') { heard += text; answer({ text: heard + ' by ' + process.pid }); continue; }
    answer({ text: text + ' by ' + process.pid });
  }
});
`;

let directory: string;
let python: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'recognizer-'));
  python = join(directory, 'python3');
  await writeFile(python, standIn);
  await chmod(python, 0o755);
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** Text as PCM the stand-in reads back: each character in the high byte of a sample. */
const utterance = (text: string): Buffer => {
  const pcm = Buffer.alloc(text.length * 2);
  [...text].forEach((character, index) => {
    pcm.writeUInt8(character.charCodeAt(0), index * 2 + 1);
  });
  return pcm;
};

const heardBy = (answer: string) => answer.split(' by ');

/** A block of a stream (100 ms) that the stand-in takes 200 ms to answer. */
const slowBlock = (index: number) => utterance(`slow${index}`.padEnd(streamBlockBytes / 2, '.'));

describe('createResidentRecognizer', () => {
  it('decodes concurrent utterances one at a time in one process, each answered with its own words', async () => {
    // Prepare
    const recognizer = createResidentRecognizer({ python, poolSize: 1 });

    // Act
    const answers = await Promise.all(['one', 'two', 'three'].map((text) => recognizer.recognize(utterance(text))));
    recognizer.close();

    // Assess
    expect(answers.map((answer) => heardBy(answer)[0])).toEqual(['one', 'two', 'three']);
    expect(new Set(answers.map((answer) => heardBy(answer)[1])).size).toBe(1);
  });

  it('replaces a process that does not answer in time', async () => {
    // Prepare
    // Only 'hang' (4 samples, 0.25 ms of audio) has a short deadline: a busy machine does not fail the others.
    const deadlineMs = (audioMs: number) => (audioMs < 0.3 ? 300 : 60_000);
    const recognizer = createResidentRecognizer({ python, poolSize: 1, deadlineMs });
    const before = heardBy(await recognizer.recognize(utterance('warm up')))[1];

    // Act
    const wedged = recognizer.recognize(utterance('hang'));
    await expect(wedged).rejects.toThrow(new SpeechUnavailableError('The recognizer did not answer in time.', true));
    const after = await recognizer.recognize(utterance('again'));
    recognizer.close();

    // Assess
    expect(heardBy(after)[0]).toBe('again');
    expect(heardBy(after)[1]).not.toBe(before);
  });

  it('replaces a process that dies, failing only the utterance it was decoding', async () => {
    // Prepare
    const recognizer = createResidentRecognizer({ python, poolSize: 1 });

    // Act
    const [died, next] = await Promise.allSettled([
      recognizer.recognize(utterance('die')),
      recognizer.recognize(utterance('next')),
    ]);
    recognizer.close();

    // Assess
    expect(died).toMatchObject({ status: 'rejected', reason: { retryable: true } });
    expect(next).toMatchObject({ status: 'fulfilled' });
    expect(heardBy((next as PromiseFulfilledResult<string>).value)[0]).toBe('next');
  });

  it('says the recognizer is not installed when the interpreter or the library is missing', async () => {
    // Prepare
    const noInterpreter = createResidentRecognizer({ python: join(directory, 'no-such-python') });
    process.env.STAND_IN_MISSING = '1';
    const noLibrary = createResidentRecognizer({ python });

    // Act
    const results = await Promise.allSettled([
      noInterpreter.recognize(utterance('hello')),
      noLibrary.recognize(utterance('hello')),
    ]);
    delete process.env.STAND_IN_MISSING;

    // Assess
    for (const result of results) {
      expect(result).toMatchObject({
        status: 'rejected',
        reason: { message: missingRecognizerMessage, retryable: false },
      });
    }
  });
});

describe('createResidentRecognizer, streaming', () => {
  it('decodes an utterance as it arrives, telling the words so far block by block, and the words at its end', async () => {
    // Prepare
    const recognizer = createResidentRecognizer({ python, poolSize: 1 });
    const partials: string[] = [];
    const stream = recognizer.stream((words) => partials.push(words));
    // 1,600 samples is a block: each character of the stand-in's text is one sample.
    const block = (character: string) => utterance(character.repeat(streamBlockBytes / 2));

    // Act
    stream.write(block('a'));
    await vi.waitFor(() => expect(partials).toHaveLength(1));
    stream.write(block('b').subarray(0, streamBlockBytes / 2));
    stream.write(block('b').subarray(streamBlockBytes / 2));
    stream.write(utterance('c'));
    await vi.waitFor(() => expect(partials).toHaveLength(2));
    const final = await stream.finish();
    recognizer.close();

    // Assess
    const a = 'a'.repeat(streamBlockBytes / 2);
    const b = 'b'.repeat(streamBlockBytes / 2);
    expect(partials).toEqual([a, a + b]);
    expect(heardBy(final)[0]).toBe(`${a + b}c`);
  });

  it('keeps its process until its utterance ends: a whole utterance waits for it, and is decoded after', async () => {
    // Prepare
    const recognizer = createResidentRecognizer({ python, poolSize: 1 });
    const stream = recognizer.stream(() => {});
    stream.write(utterance('streamed'));
    let decoded = false;

    // Act
    const whole = recognizer.recognize(utterance('whole')).then((text) => {
      decoded = true;
      return text;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const waited = !decoded;
    const final = await stream.finish();
    const after = await whole;
    recognizer.close();

    // Assess
    expect(waited).toBe(true);
    expect(heardBy(final)[0]).toBe('streamed');
    expect(heardBy(after)).toEqual(['whole', heardBy(final)[1]]);
  });

  it('fails an utterance whose process was replaced while it was being decoded, instead of waiting forever', async () => {
    // Prepare
    // A block of audio (100 ms) that the stand-in never answers has a short deadline.
    const deadlineMs = (audioMs: number) => (audioMs > 99 && audioMs < 101 ? 300 : 60_000);
    const recognizer = createResidentRecognizer({ python, poolSize: 1, deadlineMs });
    await recognizer.recognize(utterance('warm up'));
    // The stream takes the loaded process at once; its first block is sent and never answered.
    const stream = recognizer.stream(() => {});
    stream.write(utterance('hang'.padEnd(streamBlockBytes / 2, '.')));

    // Act
    const final = stream.finish();

    // Assess
    await expect(final).rejects.toBeInstanceOf(SpeechUnavailableError);
    expect(heardBy(await recognizer.recognize(utterance('next')))[0]).toBe('next');
    recognizer.close();
  });

  it('decodes a stream that is behind one request at a time: what came meanwhile goes as one request, and its process is kept', async () => {
    // Prepare: blocks of audio (100 ms) that take the stand-in 200 ms each, as on a busy machine, given 1 s each.
    const deadlineMs = (audioMs: number) => (audioMs > 99 && audioMs < 101 ? 1_000 : 60_000);
    const recognizer = createResidentRecognizer({ python, poolSize: 1, deadlineMs });
    const before = heardBy(await recognizer.recognize(utterance('warm up')))[1];
    const stream = recognizer.stream(() => {});

    // Act: ten blocks at once (queued in the process, the last would be answered 2 s after it was sent).
    for (let block = 0; block < 10; block += 1) stream.write(slowBlock(block));
    const final = await stream.finish();
    recognizer.close();

    // Assess
    const [words, by] = heardBy(final);
    expect(words?.match(/slow\d/g)).toEqual(Array.from({ length: 10 }, (_, block) => `slow${block}`));
    expect(by).toBe(before);
  });

  it('decodes nothing more of a cancelled stream than what it had sent', async () => {
    // Prepare
    const requests = join(directory, 'requests');
    await writeFile(requests, '');
    process.env.STAND_IN_REQUESTS = requests;
    const recognizer = createResidentRecognizer({ python, poolSize: 1 });
    await recognizer.recognize(utterance('warm up'));
    const stream = recognizer.stream(() => {});
    for (let block = 0; block < 10; block += 1) stream.write(slowBlock(block));

    // Act
    stream.cancel();
    await recognizer.recognize(utterance('next'));
    delete process.env.STAND_IN_REQUESTS;
    recognizer.close();

    // Assess
    expect((await readFile(requests, 'utf8')).split('\n').filter(Boolean)).toEqual([
      'Uwarm up',
      'S',
      'Aslow0',
      'E',
      'Unext',
    ]);
  });

  it('keeps a process loaded for each reserved session and a spare, and ends the extra ones once released', async () => {
    // Prepare
    const starts = join(directory, 'starts');
    await writeFile(starts, '');
    process.env.STAND_IN_STARTS = starts;
    const recognizer = createResidentRecognizer({ python, poolSize: 8 });
    const started = async () => (await readFile(starts, 'utf8')).split('\n').filter(Boolean);

    // Act
    const releases = [recognizer.reserve(), recognizer.reserve()];
    await vi.waitFor(async () => expect(await started()).toHaveLength(3));
    const streams = [recognizer.stream(() => {}), recognizer.stream(() => {})];
    streams.forEach((stream, index) => {
      stream.write(utterance(`session ${index}`));
    });
    const finals = await Promise.all(streams.map((stream) => stream.finish()));
    const startedWhileSpeaking = (await started()).length;
    for (const release of releases) release();
    const after = heardBy(await recognizer.recognize(utterance('after')))[1];
    delete process.env.STAND_IN_STARTS;
    recognizer.close();

    // Assess
    expect(finals.map((final) => heardBy(final)[0])).toEqual(['session 0', 'session 1']);
    expect(new Set(finals.map((final) => heardBy(final)[1])).size).toBe(2);
    // The two utterances took processes already loaded, and the spare is there: none started for them.
    expect(startedWhileSpeaking).toBe(3);
    expect(await started()).toContain(after);
  });

  it('gives its process back when cancelled', async () => {
    // Prepare
    const recognizer = createResidentRecognizer({ python, poolSize: 1 });
    const stream = recognizer.stream(() => {});
    stream.write(utterance('abandoned'));

    // Act
    stream.cancel();
    const next = await recognizer.recognize(utterance('next'));
    recognizer.close();

    // Assess
    expect(heardBy(next)[0]).toBe('next');
  });
});

describe('createResidentRecognizer, when its process cannot start', () => {
  it('fails the waiting utterances instead of starting process after process', async () => {
    // Prepare
    process.env.STAND_IN_BROKEN = '1';
    const recognizer = createResidentRecognizer({ python });

    // Act
    const heard = recognizer.recognize(utterance('hello'));
    delete process.env.STAND_IN_BROKEN;

    // Assess
    await expect(heard).rejects.toMatchObject({ message: 'The recognizer stopped (exit 2).', retryable: true });
  });
});

describe('dithered', () => {
  it('adds one to about a quarter of the samples, the same ones every time', () => {
    // Prepare
    const silence = Buffer.alloc(2 * 4_000);

    // Act
    const once = dithered(silence);
    const twice = dithered(silence);

    // Assess
    expect(once.equals(twice)).toBe(true);
    const raised = Array.from({ length: 4_000 }, (_, index) => once.readInt16LE(index * 2)).filter((v) => v === 1);
    expect(raised.length).toBeGreaterThan(800);
    expect(raised.length).toBeLessThan(1_200);
  });
});
