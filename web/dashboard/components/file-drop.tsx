import { useRef, useState } from 'preact/hooks';

const ACCEPT = '.pdf,.docx,.pptx,.txt,.md,.csv,.vtt,.srt';

/** A drop zone that also opens the file picker; hands every chosen file to `onFiles`. */
export function FileDrop({ onFiles, busy }: { onFiles: (files: File[]) => void; busy: boolean }) {
  const input = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);
  return (
    <div
      class={`drop-zone ${over ? 'over' : ''}`}
      onDragOver={(event) => {
        event.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(event) => {
        event.preventDefault();
        setOver(false);
        onFiles([...(event.dataTransfer?.files ?? [])]);
      }}
    >
      <p>Drop PDF, DOCX, PPTX, TXT, MD, CSV, VTT or SRT files here (up to 20 MB each)</p>
      <button type="button" class="button" disabled={busy} onClick={() => input.current?.click()}>
        Choose files
      </button>
      <input
        ref={input}
        class="hidden"
        type="file"
        name="files"
        multiple
        accept={ACCEPT}
        onChange={(event) => {
          onFiles([...(event.currentTarget.files ?? [])]);
          event.currentTarget.value = '';
        }}
      />
    </div>
  );
}
