import type { ComponentChildren } from 'preact';
import type { CallToAction, LeadField } from '../types.ts';

/** An editable list of rows: each row's inputs, a Remove button per row, and an Add button. */
function RowList<T>(props: {
  title: string;
  class: string;
  hint?: string;
  items: T[];
  blank: T;
  addLabel: string;
  onChange: (items: T[]) => void;
  row: (item: T, update: (change: Partial<T>) => void) => ComponentChildren;
}) {
  const { items, onChange } = props;
  return (
    <div class={`card stack ${props.class}`}>
      <h2>{props.title}</h2>
      {props.hint && <p class="muted small">{props.hint}</p>}
      {items.map((item, i) => (
        <div key={i} class="row editor-row">
          {props.row(item, (change) => onChange(items.map((x, j) => (j === i ? { ...x, ...change } : x))))}
          <button type="button" class="button small ghost" onClick={() => onChange(items.filter((_, j) => j !== i))}>
            Remove
          </button>
        </div>
      ))}
      <div>
        <button type="button" class="button small" onClick={() => onChange([...items, props.blank])}>
          {props.addLabel}
        </button>
      </div>
    </div>
  );
}

/** The lead form's custom fields (name, email and phone are always on it). */
export function LeadFieldsEditor({
  fields,
  onChange,
}: {
  fields: LeadField[];
  onChange: (fields: LeadField[]) => void;
}) {
  return (
    <RowList
      title="Lead form fields"
      class="lead-fields"
      hint="Name, email and phone are always asked; add your own fields here."
      items={fields}
      blank={{ name: '', label: '', required: false }}
      addLabel="Add field"
      onChange={onChange}
      row={(field, update) => (
        <>
          <input
            aria-label="Field name"
            placeholder="company"
            value={field.name}
            onInput={(event) => update({ name: event.currentTarget.value })}
          />
          <input
            aria-label="Field label"
            placeholder="Company"
            value={field.label}
            onInput={(event) => update({ label: event.currentTarget.value })}
          />
          <label class="check">
            <input
              type="checkbox"
              checked={field.required}
              onChange={(event) => update({ required: event.currentTarget.checked })}
            />
            Required
          </label>
        </>
      )}
    />
  );
}

/** The widget's call-to-action buttons: open a link, send a message, or ask for a human. */
export function CtaEditor({ ctas, onChange }: { ctas: CallToAction[]; onChange: (ctas: CallToAction[]) => void }) {
  return (
    <RowList
      title="Call-to-action buttons"
      class="ctas"
      items={ctas}
      blank={{ id: '', label: '', action: 'escalate' }}
      addLabel="Add button"
      onChange={(items) => onChange(items.map(withTarget))}
      row={(cta, update) => (
        <>
          <input
            aria-label="Button id"
            placeholder="sales"
            value={cta.id}
            onInput={(event) => update({ id: event.currentTarget.value })}
          />
          <input
            aria-label="Button label"
            placeholder="Talk to sales"
            value={cta.label}
            onInput={(event) => update({ label: event.currentTarget.value })}
          />
          <select
            aria-label="Button action"
            value={cta.action}
            onChange={(event) => update({ action: event.currentTarget.value as CallToAction['action'] })}
          >
            <option value="escalate">Ask for a human</option>
            <option value="link">Open a link</option>
            <option value="message">Send a message</option>
          </select>
          {cta.action === 'link' && (
            <input
              aria-label="Button URL"
              placeholder="https://…"
              value={cta.url ?? ''}
              onInput={(event) => update({ url: event.currentTarget.value })}
            />
          )}
          {cta.action === 'message' && (
            <input
              aria-label="Button message"
              placeholder="What does it cost?"
              value={cta.message ?? ''}
              onInput={(event) => update({ message: event.currentTarget.value })}
            />
          )}
        </>
      )}
    />
  );
}

/** Keeps only the target field the action uses (a url on a message button would only confuse). */
function withTarget(cta: CallToAction): CallToAction {
  const { url, message, ...rest } = cta;
  if (cta.action === 'link') return { ...rest, url: url ?? '' };
  if (cta.action === 'message') return { ...rest, message: message ?? '' };
  return rest;
}
