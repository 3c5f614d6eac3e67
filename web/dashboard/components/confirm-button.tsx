import { useState } from 'preact/hooks';

/**
 * A destructive action asked twice: the first click turns the button into "Confirm" and "Cancel"
 * (no browser dialog, which would block the page and cannot be styled).
 */
export function ConfirmButton(props: {
  label: string;
  confirm: string;
  onConfirm: () => void | Promise<void>;
  disabled?: boolean;
  class?: string;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button
        type="button"
        class={`button ${props.class ?? 'danger'}`}
        disabled={props.disabled}
        onClick={() => setAsking(true)}
      >
        {props.label}
      </button>
    );
  }
  return (
    <span class="confirm">
      <button
        type="button"
        class="button danger"
        onClick={() => {
          setAsking(false);
          void props.onConfirm();
        }}
      >
        {props.confirm}
      </button>
      <button type="button" class="button ghost" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
