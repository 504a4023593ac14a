/**
 * The isolate's state, in one object: every value an isolate keeps from one request to the next lives
 * in a named slot here — parsed settings, the catalog memo, the health snapshot memo, the key cache, the preset cache, the keys derived for sealing (src/crypto/aes-gcm.ts),
 * the accounts' ledger clients, the endpoints' failure streaks, presented catalog pages, the Stripe client. Each slot's
 * value is made on first use and bounds itself (the module that declares the slot says how).
 * `reset()` forgets every slot, as a fresh isolate would start: the one door tests use.
 */
export type Slot<T> = {
  readonly name: string;
  /** The value, made on first use. */
  get(): T;
  /** Forgets this slot's value: the next `get` makes a new one. */
  reset(): void;
};

class IsolateState {
  private readonly values = new Map<string, unknown>();
  private readonly declared = new Set<string>();

  /** Declares a slot (once per name, at module load). */
  slot<T>(name: string, make: () => T): Slot<T> {
    if (this.declared.has(name)) throw new Error(`isolate slot declared twice: ${name}`);
    this.declared.add(name);
    const values = this.values;
    return {
      name,
      get(): T {
        if (!values.has(name)) values.set(name, make());
        return values.get(name) as T;
      },
      reset(): void {
        values.delete(name);
      },
    };
  }

  /** The slots declared so far. */
  get slots(): string[] {
    return [...this.declared];
  }

  /** Forgets every slot's value: the isolate starts afresh. */
  reset(): void {
    this.values.clear();
  }
}

export const isolate = new IsolateState();
