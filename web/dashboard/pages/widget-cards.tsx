import type { Settings } from '../types.ts';

type Look = Settings['widget'];
type Rules = Settings['escalation'];

/**
 * Title, colour and welcome message of the widget. Each input reports only its own field: inputs that
 * change before the page renders again (autofill, a fast typist) must not undo each other.
 */
export function AppearanceCard(props: { placeholder: string; look: Look; onChange: (change: Partial<Look>) => void }) {
  const { look, onChange } = props;
  const set = (name: keyof Look) => (event: Event) =>
    onChange({ [name]: (event.currentTarget as HTMLInputElement).value });
  return (
    <div class="card stack">
      <h2>Appearance</h2>
      <label>
        Title
        <input name="title" placeholder={props.placeholder} value={look.title} onInput={set('title')} />
      </label>
      <label>
        Colour
        <span class="row">
          <input type="color" name="color-picker" value={look.color} onInput={set('color')} />
          <input name="color" value={look.color} onInput={set('color')} />
        </span>
      </label>
      <label>
        Welcome message
        <textarea name="welcome_message" rows={2} value={look.welcome_message} onInput={set('welcome_message')} />
      </label>
    </div>
  );
}

/** The sites allowed to open the widget, one origin per line. */
export function OriginsCard({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  return (
    <div class="card stack">
      <h2>Allowed origins</h2>
      <label>
        <span>
          One per line, like <code>https://shop.example</code>; empty allows any site.
        </span>
        <textarea
          name="allowed_origins"
          rows={3}
          value={value}
          onInput={(event) => onChange(event.currentTarget.value)}
        />
      </label>
    </div>
  );
}

/** Smart intent, keywords (edited as one comma-separated text) and the fallback streak. */
export function EscalationCard(props: {
  rules: Rules;
  keywords: string;
  onRules: (rules: Rules) => void;
  onKeywords: (keywords: string) => void;
}) {
  const { rules, onRules } = props;
  return (
    <div class="card stack">
      <h2>Escalation rules</h2>
      <label class="check">
        <input
          type="checkbox"
          name="smart_intent"
          checked={rules.smart_intent}
          onChange={(event) => onRules({ ...rules, smart_intent: event.currentTarget.checked })}
        />
        Escalate when a visitor asks for a human (smart intent)
      </label>
      <label>
        Keywords that escalate (comma-separated)
        <input
          name="keywords"
          value={props.keywords}
          onInput={(event) => props.onKeywords(event.currentTarget.value)}
        />
      </label>
      <label>
        Escalate after this many fallback replies in a row (0: never)
        <input
          name="fallback_streak"
          type="number"
          min={0}
          max={100}
          value={rules.fallback_streak}
          onInput={(event) => onRules({ ...rules, fallback_streak: Number(event.currentTarget.value) || 0 })}
        />
      </label>
    </div>
  );
}
