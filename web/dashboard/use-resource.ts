import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get } from './api.ts';

/** A resource read from the management API, with its loading state, last error and a reload. */
export interface Resource<T> {
  data: T | undefined;
  error: string;
  loading: boolean;
  reload: () => Promise<void>;
}

/**
 * Reads `path` when the component mounts or the path changes; `pollMs`, when given and `poll(data)`
 * says so, reads it again on that interval (sources being ingested, deliveries being retried).
 */
export function useResource<T>(path: string, options: { pollMs?: number; poll?: (data: T) => boolean } = {}) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState('');
  const [loading, setLoading] = useState(true);
  // Only the latest read may land: a slow answer for the previous path (chatbot A, after the page
  // moved on to chatbot B) or an older poll must not overwrite what a later read brought.
  const latest = useRef(0);
  const reload = useCallback(async () => {
    const read = ++latest.current;
    try {
      const value = await get<T>(path);
      if (read !== latest.current) return;
      setData(value);
      setError('');
    } catch (caught) {
      if (read !== latest.current) return;
      setError(caught instanceof ApiError ? caught.detail : String(caught));
    } finally {
      if (read === latest.current) setLoading(false);
    }
  }, [path]);
  useEffect(() => {
    setLoading(true);
    setData(undefined);
    void reload();
  }, [reload]);
  const { pollMs, poll } = options;
  const polling = pollMs !== undefined && data !== undefined && (poll?.(data) ?? true);
  useEffect(() => {
    if (!polling) return;
    const timer = setInterval(() => void reload(), pollMs);
    return () => clearInterval(timer);
  }, [polling, pollMs, reload]);
  return { data, error, loading, reload } satisfies Resource<T>;
}

/** Runs an action, keeping its error text (the API's detail) and whether it is running. */
export function useAction(): {
  busy: boolean;
  error: string;
  setError: (error: string) => void;
  run: <T>(action: () => Promise<T>) => Promise<T | undefined>;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const run = useCallback(async <T>(action: () => Promise<T>) => {
    setBusy(true);
    setError('');
    try {
      return await action();
    } catch (caught) {
      setError(caught instanceof ApiError ? caught.detail : String(caught));
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, setError, run };
}
