/** The Emscripten module of npm `@echogarden/fvad-wasm` (it ships no types): libfvad's C API on its heap. */
declare module '@echogarden/fvad-wasm' {
  interface FvadModule {
    _fvad_new(): number;
    _fvad_free(handle: number): void;
    _fvad_set_mode(handle: number, mode: number): number;
    _fvad_set_sample_rate(handle: number, rate: number): number;
    _fvad_process(handle: number, frame: number, samples: number): number;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    HEAPU8: Uint8Array;
  }
  const loadFvad: () => Promise<FvadModule>;
  export default loadFvad;
}
