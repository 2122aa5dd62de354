// Job slots: a consume asks for no more messages than there are free slots.

export class Semaphore {
  #free: number;
  #waiters: (() => void)[] = [];

  constructor(permits: number) {
    this.#free = permits;
  }

  tryAcquire(): boolean {
    if (this.#free === 0) return false;
    this.#free--;
    return true;
  }

  /** Resolves true with a slot, or false when `signal` fires first. */
  acquire(signal?: AbortSignal): Promise<boolean> {
    if (this.tryAcquire()) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const grant = () => {
        signal?.removeEventListener("abort", cancel);
        resolve(true);
      };
      const cancel = () => {
        this.#waiters = this.#waiters.filter((w) => w !== grant);
        resolve(false);
      };
      this.#waiters.push(grant);
      signal?.addEventListener("abort", cancel, { once: true });
    });
  }

  release(n = 1): void {
    for (let i = 0; i < n; i++) {
      const next = this.#waiters.shift();
      if (next) next();
      else this.#free++;
    }
  }
}
