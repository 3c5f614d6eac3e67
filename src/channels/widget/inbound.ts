import type { Rating } from '../../contract/conversation.ts';
import type { WidgetClientFrame } from '../../contract/widget-protocol.ts';
import { checkMessageText } from '../../conversations/message-text.ts';
import { ValidationError } from '../../errors.ts';
import type { FrameFields } from '../../http/socket-frame.ts';
import type { LeadInput } from '../../leads/lead-capture.ts';

/** What a visitor's frame asks for, in the project's own terms. */
export type WidgetCommand =
  | { kind: 'message'; content: string }
  | { kind: 'escalate' }
  | { kind: 'cta'; id: string }
  | { kind: 'lead'; lead: LeadInput }
  | { kind: 'feedback'; createdAt: string; rating: Rating | null };

/**
 * Reads one frame from the widget (DESIGN.md's protocol). A frame of an unknown type or with a bad
 * field is a ValidationError whose detail names the problem; the socket answers it with an error
 * frame and stays open.
 */
export function parseWidgetFrame(fields: FrameFields<WidgetClientFrame>): WidgetCommand {
  switch (fields.type) {
    case 'message':
      return { kind: 'message', content: checkMessageText(fields.content, 'content') };
    case 'escalate':
      return { kind: 'escalate' };
    case 'cta':
      if (typeof fields.id !== 'string' || fields.id.length === 0) throw new ValidationError('id is required.');
      return { kind: 'cta', id: fields.id };
    case 'lead':
      return {
        kind: 'lead',
        lead: { name: fields.name, email: fields.email, phone: fields.phone, custom_data: fields.custom_data },
      };
    case 'feedback':
      if (typeof fields.created_at !== 'string') throw new ValidationError('created_at is required.');
      if (fields.rating !== null && fields.rating !== 'up' && fields.rating !== 'down') {
        throw new ValidationError('rating must be up, down or null.');
      }
      return { kind: 'feedback', createdAt: fields.created_at, rating: fields.rating };
    case undefined:
      throw new ValidationError('type is required.');
    default:
      throw new ValidationError('type must be one of: message, escalate, cta, lead, feedback.');
  }
}
