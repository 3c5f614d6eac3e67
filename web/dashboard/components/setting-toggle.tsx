import { useState } from 'preact/hooks';
import { send } from '../api.ts';
import type { Settings, SettingsPatch } from '../types.ts';
import type { Resource } from '../use-resource.ts';
import { useAction } from '../use-resource.ts';
import { Notice } from './notice.tsx';

/**
 * One on/off setting of a chatbot, saved as soon as it is clicked. The box shows the owner's click
 * while it is saved; a failed save puts back what is stored, with the gateway's reason.
 */
export function SettingToggle(props: {
  settings: Resource<Settings>;
  path: string;
  name: string;
  label: string;
  value: (settings: Settings) => boolean;
  patch: (on: boolean) => SettingsPatch;
  /** What the notice says once it is saved. */
  saved: (on: boolean) => string;
}) {
  const { settings } = props;
  const action = useAction();
  const [saved, setSaved] = useState('');
  const [pending, setPending] = useState<boolean | undefined>(undefined);
  const toggle = (on: boolean) => {
    setSaved('');
    setPending(on);
    void action
      .run(async () => {
        await send('PATCH', props.path, props.patch(on));
        await settings.reload();
        setSaved(props.saved(on));
      })
      .finally(() => setPending(undefined));
  };
  return (
    <div class="stack">
      <Notice>{action.error}</Notice>
      <Notice kind="success">{saved}</Notice>
      <label class="check">
        <input
          type="checkbox"
          name={props.name}
          checked={pending ?? (settings.data ? props.value(settings.data) : false)}
          disabled={!settings.data || action.busy}
          onChange={(event) => toggle(event.currentTarget.checked)}
        />
        {props.label}
      </label>
    </div>
  );
}
