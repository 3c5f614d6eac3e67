import { h } from './dom.ts';

/**
 * The sign-in form: a password-type `input[name="token"]`, a submit button, and `div.sc-error` with `error`
 * (the server's reason the last token was refused). `onSubmit` gets the trimmed token.
 */
export function createSignInView(error: string, onSubmit: (token: string) => void): HTMLElement {
  const input = h('input', {
    class: 'sc-token',
    attrs: { name: 'token', type: 'password', required: '', autocomplete: 'off', spellcheck: 'false', id: 'sc-token' },
  });
  const form = h('form', { class: 'sc-signin' }, [
    h('h1', { text: 'Switchboard agent console' }),
    h('label', { text: 'Agent token', attrs: { for: 'sc-token' } }),
    input,
    h('div', { class: 'sc-error', text: error, attrs: { role: 'alert' } }),
    h('button', { text: 'Sign in', attrs: { type: 'submit' } }),
  ]);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (token) onSubmit(token);
  });
  return form;
}
