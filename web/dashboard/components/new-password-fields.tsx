/** A new password typed twice (at least 12 characters), for the invitation and first-run pages. */
export function NewPasswordFields(props: {
  password: string;
  repeat: string;
  onPassword: (value: string) => void;
  onRepeat: (value: string) => void;
  label?: string;
}) {
  return (
    <>
      <label>
        {props.label ?? 'Password'}
        <input
          name="password"
          type="password"
          autocomplete="new-password"
          minLength={12}
          required
          value={props.password}
          onInput={(event) => props.onPassword(event.currentTarget.value)}
        />
      </label>
      <label>
        Repeat it
        <input
          name="repeat"
          type="password"
          autocomplete="new-password"
          required
          value={props.repeat}
          onInput={(event) => props.onRepeat(event.currentTarget.value)}
        />
      </label>
    </>
  );
}
