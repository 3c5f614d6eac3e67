import { h } from '../shared/dom.ts';
import type { LeadField, LeadFrame } from './protocol.ts';

/** The contact form offered when no human is available. */
export interface LeadForm {
  element: HTMLFormElement;
  /** Shows the form with an explanation above the fields. */
  show(intro: string): void;
  hide(): void;
  /** Hides the form unless the visitor has started filling it in or is sending it. */
  withdraw(): void;
  /** Disables the submit button while the server has the submission. */
  setPending(pending: boolean): void;
}

interface FieldSpec {
  name: string;
  label: string;
  required: boolean;
  type: string;
  autocomplete?: string;
}

// None is required on its own: a human needs an email or a phone number to get back, which
// requireContact enforces (as the gateway does).
const STANDARD_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Name', required: false, type: 'text', autocomplete: 'name' },
  { name: 'email', label: 'Email', required: false, type: 'email', autocomplete: 'email' },
  { name: 'phone', label: 'Phone', required: false, type: 'tel', autocomplete: 'tel' },
];

function fieldRow(spec: FieldSpec): { row: HTMLLabelElement; input: HTMLInputElement } {
  const attrs: Record<string, string> = { name: spec.name, type: spec.type };
  if (spec.autocomplete) attrs.autocomplete = spec.autocomplete;
  const input = h('input', { class: 'sb-field', attrs });
  input.required = spec.required;
  const caption = h(
    'span',
    { text: spec.label },
    spec.required ? [h('span', { text: ' *', attrs: { 'aria-hidden': 'true' } })] : [],
  );
  return { row: h('label', { class: 'sb-lead-row' }, [caption, input]), input };
}

/** Blocks submission (with the browser's own message) while both email and phone are empty. */
function requireContact(email: HTMLInputElement, phone: HTMLInputElement): () => void {
  const check = (): void => {
    email.setCustomValidity(email.value.trim() || phone.value.trim() ? '' : 'Enter an email or a phone number.');
  };
  email.addEventListener('input', check);
  phone.addEventListener('input', check);
  check();
  return check;
}

/** Builds the form: name, email and phone, then one text input per custom field (`custom:<name>`). */
export function createLeadForm(customFields: readonly LeadField[], onSubmit: (lead: LeadFrame) => void): LeadForm {
  const specs = [
    ...STANDARD_FIELDS,
    ...customFields.map((field) => ({ ...field, name: `custom:${field.name}`, type: 'text' })),
  ];
  const rows = specs.map(fieldRow);
  const intro = h('p', { class: 'sb-lead-intro' });
  // Not "Send": the message box's button is, and a visitor must tell the two apart.
  const submit = h('button', { class: 'sb-lead-submit', text: 'Send my details', attrs: { type: 'submit' } });
  const form = h('form', { class: 'sb-lead', attrs: { hidden: '' } }, [intro, ...rows.map((r) => r.row), submit]);
  const input = (name: string): HTMLInputElement => rows.find((r) => r.input.name === name)!.input;
  const value = (name: string): string => input(name).value.trim();
  const checkContact = requireContact(input('email'), input('phone'));

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const custom_data: Record<string, string> = {};
    for (const field of customFields) custom_data[field.name] = value(`custom:${field.name}`);
    onSubmit({ type: 'lead', name: value('name'), email: value('email'), phone: value('phone'), custom_data });
  });

  const hide = (): void => {
    form.hidden = true;
    form.reset();
    checkContact();
  };

  return {
    element: form,
    show(text) {
      intro.textContent = text;
      form.hidden = false;
    },
    hide,
    withdraw() {
      const started = rows.some((r) => r.input.value.trim() !== '');
      if (!started && !submit.disabled) hide();
    },
    setPending(pending) {
      submit.disabled = pending;
    },
  };
}
