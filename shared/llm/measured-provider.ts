import type { ChooseOptionRequest, LlmProvider, LlmRequest, LlmUsage } from './provider';

/** What one model call took. */
export interface ModelCallMeasurement {
  /**
   * Milliseconds spent waiting on the provider. For a stream, only the waits for its fragments:
   * the time its reader spends between fragments (speaking them, storing events) is not the model's.
   */
  durationMs: number;
  /** Milliseconds from a stream's start to its first fragment; undefined for other calls and empty streams. */
  firstFragmentMs?: number;
  /** The tokens the provider reported, if it did. */
  usage?: LlmUsage;
}

/**
 * Told of each call as it starts (with the options of a choice); returns what to tell once it
 * has ended (succeeded, failed or abandoned).
 */
export type CallObserver = (
  request: LlmRequest & Partial<Pick<ChooseOptionRequest, 'options'>>,
) => (measurement: ModelCallMeasurement) => void;

/** `provider` with each call measured for `observe`; the request's own `onUsage` is still called. */
export const measuredProvider = (provider: LlmProvider, observe: CallObserver): LlmProvider => {
  const start = <R extends LlmRequest>(request: R) => {
    const ended = observe(request);
    const measurement: ModelCallMeasurement = { durationMs: 0 };
    const measured: R = {
      ...request,
      onUsage: (usage) => {
        measurement.usage = usage;
        request.onUsage?.(usage);
      },
    };
    return { measured, measurement, end: () => ended(measurement) };
  };
  const timed = async <R extends LlmRequest, T>(request: R, call: (request: R) => Promise<T>): Promise<T> => {
    const { measured, measurement, end } = start(request);
    const started = performance.now();
    try {
      return await call(measured);
    } finally {
      measurement.durationMs = performance.now() - started;
      end();
    }
  };
  return {
    name: provider.name,
    async *streamText(request) {
      const { measured, measurement, end } = start(request);
      const started = performance.now();
      const fragments = provider.streamText(measured)[Symbol.asyncIterator]();
      try {
        for (;;) {
          const asked = performance.now();
          const step = await fragments.next().finally(() => {
            measurement.durationMs += performance.now() - asked;
          });
          if (step.done) return;
          measurement.firstFragmentMs ??= performance.now() - started;
          yield step.value;
        }
      } finally {
        // A reader that stops early stops the provider's stream too.
        await fragments.return?.();
        end();
      }
    },
    chooseOption: (request) => timed(request, (measured) => provider.chooseOption(measured)),
    callTools: (request) => timed(request, (measured) => provider.callTools(measured)),
    generateObject: (request) => timed(request, (measured) => provider.generateObject(measured)),
  };
};
