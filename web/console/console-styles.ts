// Laptop: the list on the left, the open conversation filling the rest, each scrolling on its own.
// Phone (≤ 720 px): the page scrolls, the list (capped in height) above the conversation. Inputs get 16 px
// text there because iOS zooms into any input with less.
/** The console's whole stylesheet, injected into the page's head. */
export const CONSOLE_CSS = `
[hidden] { display: none !important; }
*, *::before, *::after { box-sizing: border-box; }
html, body { margin: 0; height: 100%; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: #111827;
  background: #f3f4f6; }
button, input, textarea { font: inherit; color: inherit; margin: 0; }
button { cursor: pointer; padding: 6px 14px; border: 1px solid #d1d5db; border-radius: 8px; background: #ffffff; }
button:disabled { opacity: 0.55; cursor: default; }
button:focus-visible, .sc-item:focus-visible { outline: 2px solid #2563eb; outline-offset: 2px; }
input, textarea { border: 1px solid #d1d5db; border-radius: 8px; padding: 8px 10px; background: #ffffff; }
input:focus, textarea:focus { outline: 2px solid #2563eb; outline-offset: -1px; }
textarea:disabled { background: #f3f4f6; }
#app { height: 100%; display: flex; flex-direction: column; }

.sc-signin { width: min(360px, calc(100% - 32px)); margin: 12vh auto 0; padding: 24px; display: flex;
  flex-direction: column; gap: 10px; background: #ffffff; border-radius: 12px; box-shadow: 0 4px 24px rgba(0, 0, 0, 0.08); }
.sc-signin h1 { margin: 0 0 8px; font-size: 20px; }
.sc-signin label { font-weight: 600; }
.sc-signin button[type="submit"], .sc-reply button[type="submit"], .sc-takeover { border-color: #2563eb;
  background: #2563eb; color: #ffffff; font-weight: 600; }
.sc-error { color: #b91c1c; }
.sc-error:empty, .sc-notice:empty, .sc-status:empty { display: none; }

.sc-topbar { display: flex; align-items: center; gap: 12px; padding: 8px 16px; background: #111827; color: #f9fafb; }
.sc-brand { font-weight: 700; }
.sc-agent-name { flex: 1; color: #d1d5db; }
.sc-connection { font-size: 12px; color: #fcd34d; }
.sc-connection[data-state="ready"] { color: #86efac; }
.sc-notice { font-size: 12px; color: #fca5a5; }
.sc-signout { padding: 4px 12px; background: transparent; color: inherit; border-color: #4b5563; }

.sc-main { flex: 1; min-height: 0; display: grid; grid-template-columns: minmax(260px, 360px) 1fr; }
.sc-sidebar { min-height: 0; overflow-y: auto; background: #ffffff; border-right: 1px solid #e5e7eb; }
.sc-list { list-style: none; margin: 0; padding: 0; }
.sc-list-empty, .sc-placeholder { margin: 0; padding: 24px 16px; color: #6b7280; }
.sc-item { display: flex; flex-direction: column; gap: 2px; padding: 10px 16px; border-bottom: 1px solid #f3f4f6;
  cursor: pointer; }
.sc-item:hover { background: #f9fafb; }
.sc-item.sc-selected { background: #eff6ff; box-shadow: inset 3px 0 0 #2563eb; }
.sc-item-head, .sc-item-meta, .sc-badges { display: flex; gap: 8px; align-items: baseline; min-width: 0; }
.sc-source { flex: none; font-size: 11px; font-weight: 600; letter-spacing: 0.04em; text-transform: uppercase;
  color: #4b5563; }
.sc-visitor { flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-weight: 600; }
.sc-time { flex: none; font-size: 12px; color: #6b7280; }
.sc-bot { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.sc-item-meta { font-size: 12px; color: #6b7280; }
.sc-preview { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; color: #374151; }
.sc-escalated, .sc-held, .sc-conversation-escalated, .sc-conversation-holder { padding: 1px 8px; border-radius: 10px;
  font-size: 12px; font-weight: 600; }
.sc-escalated, .sc-conversation-escalated { background: #fee2e2; color: #991b1b; }
.sc-held, .sc-conversation-holder { background: #e0e7ff; color: #3730a3; }
.sc-held.sc-held-mine { background: #dcfce7; color: #166534; }

.sc-pane { min-height: 0; display: flex; flex-direction: column; }
.sc-conversation { flex: 1; min-height: 0; display: flex; flex-direction: column; background: #ffffff; }
.sc-conversation-header { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; padding: 12px 16px;
  border-bottom: 1px solid #e5e7eb; }
.sc-conversation-details { flex: 1; display: flex; flex-wrap: wrap; align-items: baseline; gap: 6px 10px; min-width: 0; }
.sc-conversation-visitor { margin: 0; font-size: 16px; overflow-wrap: anywhere; }
.sc-conversation-contact { color: #374151; overflow-wrap: anywhere; }
.sc-conversation-source { font-size: 11px; font-weight: 600; text-transform: uppercase; color: #4b5563; }
.sc-conversation-bot, .sc-conversation-time { color: #6b7280; }
.sc-conversation-session { font-family: ui-monospace, monospace; font-size: 12px; color: #6b7280; overflow-wrap: anywhere; }
.sc-actions { display: flex; gap: 8px; }
.sc-transcript { flex: 1; min-height: 120px; overflow-y: auto; display: flex; flex-direction: column; gap: 8px;
  padding: 16px; background: #f9fafb; }
.sc-transcript-note { margin: auto; color: #6b7280; }
.sc-unread { min-width: 20px; padding: 0 6px; border-radius: 10px; background: #2563eb; color: #ffffff;
  font-size: 12px; font-weight: 600; text-align: center; }
.sc-entry { display: flex; flex-direction: column; gap: 2px; }
.sc-sources { align-self: flex-end; display: flex; flex-wrap: wrap; justify-content: flex-end; gap: 4px; max-width: 75%; }
.sc-source { padding: 1px 8px; border: 1px solid #e5e7eb; border-radius: 10px; background: #ffffff; font-size: 12px;
  color: #374151; text-decoration: none; }
a.sc-source:hover { border-color: #2563eb; }
.sc-rating { align-self: flex-end; font-size: 12px; color: #6b7280; }
.sc-rating-up::before { content: "👍 "; }
.sc-rating-down::before { content: "👎 "; }
.sc-streaming::after { content: "▍"; opacity: 0.6; }
.sc-msg { max-width: 75%; padding: 8px 12px; border-radius: 12px; white-space: pre-wrap; overflow-wrap: anywhere; }
.sc-msg::before { content: attr(data-role); display: block; font-size: 11px; font-weight: 600;
  letter-spacing: 0.04em; text-transform: uppercase; opacity: 0.7; }
.sc-msg.sc-user { align-self: flex-start; background: #ffffff; border: 1px solid #e5e7eb; border-bottom-left-radius: 4px; }
.sc-msg.sc-assistant { align-self: flex-end; background: #eef2ff; border-bottom-right-radius: 4px; }
.sc-msg.sc-agent { align-self: flex-end; background: #dcfce7; border-bottom-right-radius: 4px; }
.sc-status { padding: 6px 16px; font-size: 13px; background: #fffbeb; color: #374151; border-top: 1px solid #fde68a; }
.sc-reply { display: flex; align-items: flex-end; gap: 8px; padding: 10px 16px 14px; border-top: 1px solid #e5e7eb; }
.sc-reply textarea { flex: 1; min-height: 44px; max-height: 200px; resize: vertical; }
.sc-reply-box { flex: 1; min-width: 0; position: relative; display: flex; flex-direction: column; gap: 6px; }
.sc-reply-actions { display: flex; flex-direction: column; gap: 6px; }
.sc-canned { position: absolute; left: 0; right: 0; bottom: 100%; z-index: 2; margin: 0 0 6px; padding: 4px 0;
  list-style: none; max-height: 240px; overflow-y: auto; background: #ffffff; border: 1px solid #d1d5db;
  border-radius: 8px; box-shadow: 0 6px 20px rgba(0, 0, 0, 0.12); }
.sc-canned-item { display: flex; gap: 10px; align-items: baseline; padding: 6px 12px; cursor: pointer; }
.sc-canned-item.sc-active { background: #eff6ff; box-shadow: inset 3px 0 0 #2563eb; }
.sc-canned-shortcut { flex: none; font-family: ui-monospace, monospace; font-weight: 600; color: #1d4ed8; }
.sc-canned-text { min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; color: #374151; }
.sc-canned-empty { padding: 6px 12px; color: #6b7280; }
.sc-suggestion-offer { padding: 8px 10px; border: 1px solid #c7d2fe; border-radius: 8px; background: #eef2ff; }
.sc-suggestion-question { margin: 0 0 4px; font-weight: 600; }
.sc-suggestion-text { margin: 0 0 8px; max-height: 120px; overflow-y: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
.sc-suggestion-actions { display: flex; gap: 8px; }

@media (max-width: 720px) {
  #app { height: auto; min-height: 100%; }
  .sc-topbar { flex-wrap: wrap; }
  .sc-main { display: block; }
  .sc-sidebar { max-height: 40vh; border-right: 0; border-bottom: 1px solid #e5e7eb; }
  .sc-conversation { min-height: 85vh; }
  .sc-transcript { max-height: 60vh; }
  .sc-msg { max-width: 90%; }
  input, textarea { font-size: 16px; }
}
`;
