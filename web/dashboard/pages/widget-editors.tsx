import type { ComponentChildren } from 'preact';
import type { CallToAction, LeadField } from '../types.ts';

/**
 * An editable list of rows: each row's inputs, a Remove button per row, the row's message when it
 * cannot be saved as it is, and an Add button. Editing a row clears its message.
 */
function RowList<T>(props: {
  title: string;
  class: string;
  hint?: string;
  items: T[];
  blank: T;
  addLabel: string;
  errors: Record<number, string>;
  onChange: (items: T[], errors: Record<number, string>) => void;
  row: (item: T, update: (change: Partial<T>) => void) => ComponentChildren;
}) {
  const { items, errors, onChange } = props;
  const without = (i: number) => Object.fromEntries(Object.entries(errors).filter(([row]) => Number(row) !== i));
  // Rows after a removed one move up, and their messages with them.
  const shifted = (removed: number) =>
    Object.fromEntries(
      Object.entries(errors)
        .filter(([row]) => Number(row) !== removed)
        .map(([row, message]) => [Number(row) > removed ? Number(row) - 1 : Number(row), message]),
    );
  return (
    <div class={`card stack ${props.class}`}>
      <h2>{props.title}</h2>
      {props.hint && <p class="muted small">{props.hint}</p>}
      {items.map((item, i) => (
        <div key={i} class={`editor-item${errors[i] ? ' invalid' : ''}`}>
          <div class="row editor-row">
            {props.row(item, (change) =>
              onChange(
                items.map((x, j) => (j === i ? { ...x, ...change } : x)),
                without(i),
              ),
            )}
            <button
              type="button"
              class="button small ghost"
              onClick={() =>
                onChange(
                  items.filter((_, j) => j !== i),
                  shifted(i),
                )
              }
            >
              Remove
            </button>
          </div>
          {errors[i] && (
            <p class="error-text row-error" role="alert">
              {errors[i]}
            </p>
          )}
        </div>
      ))}
      <div>
        <button type="button" class="button small" onClick={() => onChange([...items, props.blank], errors)}>
          {props.addLabel}
        </button>
      </div>
    </div>
  );
}

/** The lead form's custom fields (name, email and phone are always on it). */
export function LeadFieldsEditor({
  fields,
  errors,
  onChange,
}: {
  fields: LeadField[];
  errors: Record<number, string>;
  onChange: (fields: LeadField[], errors: Record<number, string>) => void;
}) {
  return (
    <RowList
      title="Lead form fields"
      class="lead-fields"
      hint="Name, email and phone are always asked; add your own fields here."
      items={fields}
      blank={{ name: '', label: '', required: false }}
      addLabel="Add field"
      errors={errors}
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

/**
 * The widget's call-to-action buttons: open a link, send a message, or ask for a human. The owner
 * writes only what visitors see; each button's id is made from its label when it is first saved.
 */
export function CtaEditor({
  ctas,
  errors,
  onChange,
}: {
  ctas: CallToAction[];
  errors: Record<number, string>;
  onChange: (ctas: CallToAction[], errors: Record<number, string>) => void;
}) {
  return (
    <RowList
      title="Call-to-action buttons"
      class="ctas"
      hint="Buttons visitors can tap under the chat. A button left empty is not saved."
      items={ctas}
      blank={{ id: '', label: '', action: 'escalate' }}
      addLabel="Add button"
      errors={errors}
      onChange={onChange}
      row={(cta, update) => (
        <>
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
