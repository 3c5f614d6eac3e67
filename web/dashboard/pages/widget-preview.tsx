import type { Chatbot, Settings } from '../types.ts';

/**
 * A live preview of the widget as visitors will see it, drawn from the settings being edited (not
 * yet saved): title bar in the colour, the welcome message, the call-to-action buttons and the lead
 * form's fields. It is a picture, not the widget itself, so trying it costs no messages.
 */
export function WidgetPreview({
  chatbot,
  settings,
}: {
  chatbot: Chatbot;
  settings: Omit<Settings, 'chatbot_id' | 'retrieval'>;
}) {
  const { widget, ctas, lead_fields: fields } = settings;
  const color = /^#[0-9a-fA-F]{6}$/.test(widget.color) ? widget.color : '#2563eb';
  return (
    <div class="preview" aria-label="Widget preview">
      <div class="preview-panel">
        <div class="preview-header" style={{ background: color }}>
          {widget.title || chatbot.name}
        </div>
        <div class="preview-body">
          {widget.welcome_message && <div class="preview-message">{widget.welcome_message}</div>}
          <div class="preview-message visitor" style={{ background: color }}>
            Hi! I have a question.
          </div>
          {ctas.length > 0 && (
            <div class="preview-ctas">
              {ctas.map((cta) => (
                <span key={cta.id} class="preview-cta" style={{ borderColor: color, color }}>
                  {cta.label || cta.id}
                </span>
              ))}
            </div>
          )}
          <div class="preview-lead">
            <strong>Leave your details</strong>
            {[
              'Name',
              'Email',
              'Phone',
              ...fields.map((field) => `${field.label || field.name}${field.required ? ' *' : ''}`),
            ].map((label) => (
              <span key={label} class="preview-input">
                {label}
              </span>
            ))}
          </div>
        </div>
        <div class="preview-input-row">
          <span class="preview-input grow">Type a message…</span>
          <span class="preview-send" style={{ background: color }}>
            Send
          </span>
        </div>
      </div>
      <div class="preview-bubble" style={{ background: color }} />
    </div>
  );
}
