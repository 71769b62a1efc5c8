/**
 * The microphone's samples as the platform takes speech: 16 kHz mono PCM16, little-endian. Each
 * output sample is the mean of the input samples it covers (a simple low-pass against aliasing),
 * clipped to full scale. Both page scripts carry this one function's source (`browserScript`): the
 * recorder's WAV (`client-script.ts`) and the talk mode's stream (`talk-script.ts`), so it
 * references nothing outside itself.
 */
export function resampleToPcm16(chunks: Float32Array[], inputRate: number): Uint8Array<ArrayBuffer> {
  const input = new Float32Array(chunks.reduce((total, chunk) => total + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    input.set(chunk, offset);
    offset += chunk.length;
  }
  const ratio = inputRate / 16_000;
  const count = Math.floor(input.length / ratio);
  const bytes = new Uint8Array(count * 2);
  const view = new DataView(bytes.buffer);
  for (let index = 0; index < count; index += 1) {
    const from = Math.floor(index * ratio);
    const to = Math.max(from + 1, Math.floor((index + 1) * ratio));
    let sum = 0;
    for (let at = from; at < to; at += 1) sum += input[at] ?? 0;
    const sample = Math.max(-1, Math.min(1, sum / (to - from)));
    view.setInt16(index * 2, sample < 0 ? sample * 0x8000 : sample * 0x7fff, true);
  }
  return bytes;
}
