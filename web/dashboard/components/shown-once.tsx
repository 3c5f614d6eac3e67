import { CopyField } from './copy-button.tsx';

/** A credential displayed this one time, with a copy button and the warning that goes with it. */
export function ShownOnce({ title, value, onDone }: { title: string; value: string; onDone: () => void }) {
  return (
    <div class="card shown-once" role="status">
      <h2>{title}</h2>
      <p>Copy it now: it is shown only once and cannot be retrieved later.</p>
      <CopyField value={value} class="secret-value" />
      <button type="button" class="button ghost" onClick={onDone}>
        Done
      </button>
    </div>
  );
}
