import { useState } from 'preact/hooks';

/** Copies `text` to the clipboard and says so for a moment. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState<'' | 'Copied' | 'Copy failed'>('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('Copied');
    } catch {
      // Clipboard access needs a secure context and permission; the text is selectable beside the button.
      setCopied('Copy failed');
    }
    setTimeout(() => setCopied(''), 2000);
  };
  return (
    <button type="button" class="button small copy" onClick={() => void copy()}>
      {copied || label}
    </button>
  );
}

/** A secret or snippet shown in a monospace box with a copy button. */
export function CopyField({ value, label, class: className }: { value: string; label?: string; class?: string }) {
  return (
    <div class={`copy-field ${className ?? ''}`}>
      <code>{value}</code>
      <CopyButton text={value} label={label} />
    </div>
  );
}
