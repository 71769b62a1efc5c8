/** Keys pressed (DTMF) are the caller's turn once `#` ends them, this pause does, or there are this many. */
const keysPauseMs = 2_000;
const maxKeysPerTurn = 32;

export interface Keypad {
  /** A key the caller pressed: `#` or the pause or the count submits those pressed so far. */
  press(digit: string): void;
  /** Forgets keys pressed and not yet a turn (the session leaves or ends). */
  drop(): void;
}

/**
 * Keys pressed and not yet a turn: `#`, a pause or {@link maxKeysPerTurn} of them make them one
 * (`submit("Pressed 4 2")`). `firstKey` hears the first key of a turn (a key pressed over the agent
 * stops it, as speech does).
 */
export const createKeypad = (handlers: { submit(text: string): void; firstKey(): void }): Keypad => {
  let keys: string[] = [];
  let pause: NodeJS.Timeout | undefined;
  const drop = () => {
    clearTimeout(pause);
    keys = [];
  };
  const submit = () => {
    const pressed = keys;
    drop();
    handlers.submit(`Pressed ${pressed.length > 0 ? pressed.join(' ') : '#'}`);
  };
  return {
    drop,
    press(digit) {
      if (keys.length === 0) handlers.firstKey();
      clearTimeout(pause);
      if (digit !== '#') keys.push(digit);
      if (digit === '#' || keys.length >= maxKeysPerTurn) return submit();
      pause = setTimeout(submit, keysPauseMs);
      pause.unref();
    },
  };
};
