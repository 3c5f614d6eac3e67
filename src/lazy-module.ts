/**
 * A library imported the first time it is used rather than when its importer loads. The CLI runs one
 * command per process and most commands use none of the HTTP client, the Telegram library, the
 * spinner or the QR code encoder (together about a quarter of a command's start-up); a gateway uses
 * Baileys (15.5 MB of heap) only once a linked device connects.
 */
export interface LazyModule<T> {
  /** Imports the library once; a failed import is tried again by the next call. */
  load(): Promise<T>;
  /** The library, for code that runs only after `load` has resolved. */
  loaded(): T;
}

export function lazyModule<T>(name: string, importModule: () => Promise<T>): LazyModule<T> {
  let module: T | undefined;
  let loading: Promise<T> | undefined;
  return {
    load() {
      loading ??= importModule().then(
        (imported) => (module = imported),
        (error: unknown) => {
          loading = undefined;
          throw error;
        },
      );
      return loading;
    },
    loaded() {
      if (module === undefined) throw new Error(`${name} is used before it was loaded`);
      return module;
    },
  };
}
