/** The Emscripten module of npm `espeak-ng` (it ships no types): the eSpeak NG command line, run once per instance. */
declare module 'espeak-ng' {
  interface ESpeakNgModule {
    FS: { readFile(path: string): Uint8Array; writeFile(path: string, data: string): void };
  }
  interface ESpeakNgOptions {
    arguments: string[];
    preRun?: ((module: ESpeakNgModule) => void)[];
    /** Instantiates the module's WebAssembly with `imports` and hands the instance to `receive`. */
    instantiateWasm?: (imports: object, receive: (instance: object) => void) => Record<string, never>;
    print?: (line: string) => void;
    printErr?: (line: string) => void;
  }
  const createESpeakNg: (options: ESpeakNgOptions) => Promise<ESpeakNgModule>;
  export default createESpeakNg;
}
