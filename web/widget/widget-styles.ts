const DEFAULT_COLOR = '#2563eb';

/**
 * The theme as CSS custom properties: the chatbot's colour (a hex colour, else the default) and a text
 * colour that stays readable on it.
 */
export function themeVariables(color: string): Record<'--sb-color' | '--sb-on-color', string> {
  const digits = /^#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i.exec(color)?.[1];
  if (!digits) return themeVariables(DEFAULT_COLOR);
  const hex = digits.length <= 4 ? digits.replace(/./g, '$&$&') : digits;
  const [r, g, b] = [0, 2, 4].map((at) => parseInt(hex.slice(at, at + 2), 16)) as [number, number, number];
  // YIQ brightness: cheap, and good enough to choose between dark and white text.
  const light = (r * 299 + g * 587 + b * 114) / 1000 >= 160;
  return { '--sb-color': `#${digits}`, '--sb-on-color': light ? '#111827' : '#ffffff' };
}

// Pixel units only, so the host page's root font size cannot leak in. On phones the open panel covers the
// screen (its header closes it), and inputs get 16 px text because iOS zooms into any input with less.
/** The widget's whole stylesheet, injected into its shadow root. */
export const WIDGET_CSS = `
:host { all: initial; }
[hidden] { display: none !important; }
.sb-root { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: #111827; }
.sb-root *, .sb-root *::before, .sb-root *::after { box-sizing: border-box; }
button, input, textarea { font: inherit; color: inherit; margin: 0; }
button { cursor: pointer; }
button:disabled { opacity: 0.6; cursor: default; }
button:focus-visible { outline: 2px solid #111827; outline-offset: 2px; }

.sb-bubble { position: fixed; right: 20px; bottom: 20px; z-index: 2147483000; width: 56px; height: 56px;
  display: flex; align-items: center; justify-content: center; padding: 0; border: 0; border-radius: 50%;
  background: var(--sb-color); color: var(--sb-on-color); box-shadow: 0 4px 16px rgba(0, 0, 0, 0.25); }
.sb-bubble svg { width: 28px; height: 28px; fill: currentColor; }

.sb-panel { position: fixed; right: 20px; bottom: 88px; z-index: 2147483000; width: 370px;
  height: min(600px, calc(100vh - 108px)); display: flex; flex-direction: column; overflow: hidden;
  background: #ffffff; border-radius: 12px; box-shadow: 0 8px 32px rgba(0, 0, 0, 0.2); }
.sb-header { display: flex; align-items: center; gap: 8px; padding: 12px 16px;
  background: var(--sb-color); color: var(--sb-on-color); }
.sb-title { flex: 1; font-size: 16px; font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.sb-close { flex: none; display: flex; align-items: center; justify-content: center; min-width: 32px; min-height: 32px;
  margin: -4px -8px -4px 0; padding: 0; border: 0; border-radius: 6px; background: transparent; font-size: 24px; line-height: 1; }
.sb-close:focus-visible { outline-color: currentColor; }

.sb-messages { flex: 1 1 auto; min-height: 80px; overflow-y: auto; display: flex; flex-direction: column; gap: 8px;
  padding: 12px; background: #f9fafb; }
.sb-message, .sb-welcome { max-width: 85%; padding: 8px 12px; border-radius: 12px; white-space: pre-wrap;
  overflow-wrap: anywhere; }
.sb-user { align-self: flex-end; background: var(--sb-color); color: var(--sb-on-color); border-bottom-right-radius: 4px; }
.sb-assistant, .sb-welcome { align-self: flex-start; background: #ffffff; border: 1px solid #e5e7eb;
  border-bottom-left-radius: 4px; }
.sb-agent { align-self: flex-start; background: #ecfdf5; border: 1px solid #a7f3d0; border-bottom-left-radius: 4px; }
.sb-time { display: block; margin-top: 2px; font-size: 11px; line-height: 1.2; text-align: right; opacity: 0.75; }
.sb-streaming::after { content: "▍"; margin-left: 1px; opacity: 0.6; animation: sb-blink 1s infinite; }
.sb-cite { margin-left: 1px; font-size: 10px; font-weight: 600; color: var(--sb-color); }
.sb-sources { display: flex; flex-wrap: wrap; gap: 4px; margin-top: 6px; white-space: normal; }
.sb-source { display: inline-flex; align-items: center; gap: 4px; max-width: 100%; padding: 2px 8px;
  border: 1px solid #e5e7eb; border-radius: 12px; background: #f9fafb; font-size: 12px; color: #374151;
  text-decoration: none; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
a.sb-source:hover { border-color: var(--sb-color); }
.sb-source-n { font-weight: 600; color: var(--sb-color); }
.sb-rate { display: flex; justify-content: flex-end; gap: 2px; margin-top: 2px; }
.sb-rate button { display: flex; padding: 3px; border: 0; border-radius: 6px; background: transparent; color: #9ca3af; }
.sb-rate button:hover { color: #4b5563; }
.sb-rate button[aria-pressed="true"] { color: var(--sb-color); }
.sb-rate svg { width: 14px; height: 14px; fill: currentColor; }
.sb-rate-down svg { transform: rotate(180deg); }
.sb-offer { margin-top: 6px; white-space: normal; }
.sb-author { display: flex; align-items: center; gap: 6px; margin-bottom: 4px; font-size: 12px; font-weight: 600;
  color: #047857; }
.sb-avatar { display: inline-flex; align-items: center; justify-content: center; width: 22px; height: 22px;
  border-radius: 50%; background: #047857; color: #ffffff; font-size: 11px; line-height: 1; }
.sb-event { align-self: center; max-width: 90%; padding: 2px 10px; border-radius: 10px; background: #e5e7eb;
  color: #374151; font-size: 12px; text-align: center; }

.sb-typing { display: flex; align-items: center; gap: 8px; padding: 4px 16px 8px; background: #f9fafb; }
.sb-dots { display: flex; gap: 4px; }
.sb-dots span { width: 6px; height: 6px; border-radius: 50%; background: #9ca3af; animation: sb-blink 1.2s infinite; }
.sb-dots span:nth-child(2) { animation-delay: 0.2s; }
.sb-dots span:nth-child(3) { animation-delay: 0.4s; }
.sb-typing-who { font-size: 12px; color: #6b7280; }
.sb-typing-who:empty { display: none; }
@keyframes sb-blink { 0%, 80%, 100% { opacity: 0.3; } 40% { opacity: 1; } }
@media (prefers-reduced-motion: reduce) { .sb-dots span, .sb-streaming::after { animation: none; } }

.sb-actions, .sb-ctas { display: flex; flex-wrap: wrap; gap: 6px; }
.sb-actions { padding: 8px 12px 0; }
.sb-ctas:empty { display: none; }
.sb-chip { padding: 4px 12px; border: 1px solid var(--sb-color); border-radius: 16px; background: #ffffff; font-size: 13px; }

.sb-lead { align-self: stretch; flex: none; display: flex; flex-direction: column; gap: 8px; padding: 12px;
  border: 1px solid #e5e7eb; border-radius: 12px; background: #ffffff; }
.sb-lead-intro { margin: 0; }
.sb-lead-row { display: flex; flex-direction: column; gap: 2px; font-size: 13px; }
.sb-field, .sb-input { border: 1px solid #d1d5db; border-radius: 8px; padding: 8px 10px; background: #ffffff; }
.sb-field:focus, .sb-input:focus { outline: 2px solid var(--sb-color); outline-offset: -1px; }
.sb-send, .sb-lead-submit { padding: 8px 14px; border: 0; border-radius: 8px; font-weight: 600;
  background: var(--sb-color); color: var(--sb-on-color); }
.sb-lead-submit { align-self: flex-start; }

.sb-notice { padding: 6px 16px; font-size: 13px; background: #fffbeb; color: #374151; }
.sb-notice:empty { display: none; }
.sb-composer { display: flex; align-items: flex-end; gap: 8px; padding: 10px 12px 12px; }
.sb-input { flex: 1; min-height: 38px; max-height: 120px; line-height: 20px; resize: none; }

@media (max-width: 480px) {
  .sb-panel { inset: 0; width: auto; height: auto; border-radius: 0; }
  .sb-bubble { right: 16px; bottom: 16px; }
  .sb-close { min-width: 44px; min-height: 44px; margin: -10px -12px -10px 0; }
  .sb-panel:not([hidden]) + .sb-bubble { display: none; }
  .sb-input, .sb-field { font-size: 16px; }
}
`;
