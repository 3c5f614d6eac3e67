import { useState } from 'preact/hooks';

/** A one-field form that names something new (an API key, an agent). */
export function CreateNamed(props: {
  label: string;
  placeholder: string;
  submit: string;
  busy: boolean;
  class: string;
  onCreate: (name: string) => Promise<boolean>;
}) {
  const [name, setName] = useState('');
  return (
    <form
      class={`inline-form ${props.class}`}
      onSubmit={(event) => {
        event.preventDefault();
        void props.onCreate(name).then((created) => created && setName(''));
      }}
    >
      <label>
        {props.label}
        <input
          name="name"
          required
          maxLength={100}
          placeholder={props.placeholder}
          value={name}
          onInput={(event) => setName(event.currentTarget.value)}
        />
      </label>
      <button class="button primary" type="submit" disabled={props.busy}>
        {props.submit}
      </button>
    </form>
  );
}
