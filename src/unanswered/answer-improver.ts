import type { UnansweredGroup } from '../contract/unanswered.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import type { RetrievalIndex } from '../rag/retrieval-index.ts';
import type { Source } from '../sources/source.ts';
import type { SourceIntake } from '../sources/source-intake.ts';
import type { ConversationStore } from '../store/conversation-store.ts';
import { ANSWERED_ALREADY, type UnansweredStore } from '../store/unanswered-store.ts';
import { parseTimestamp } from '../timestamp.ts';
import { improvedAnswerText, improvedAnswerTitle, MAX_ANSWER_LENGTH } from './improved-answer.ts';
import type { UnansweredRecorder } from './unanswered-recorder.ts';

/** What the owner writes: the right answer, and the source's title (the question when left out). */
export interface ImprovedAnswerInput {
  answer: string;
  title?: string;
}

/** Where a source added by mistake is taken out of retrieval again. */
type SourceIndex = Pick<RetrievalIndex, 'removeSource'>;

/**
 * Improving an answer: the owner's answer to a question becomes a `text` source titled with the
 * question (ingested by the gateways like any other), and the question's group is resolved, linked to
 * the source. From the inbox (a group) or from any AI reply of a transcript (the visitor message
 * before it, and its open group if it has one).
 */
export class AnswerImprover {
  private readonly store: UnansweredStore;
  private readonly recorder: UnansweredRecorder;
  private readonly intake: SourceIntake;
  private readonly conversations: Pick<ConversationStore, 'transcript'>;

  constructor(deps: {
    store: UnansweredStore;
    recorder: UnansweredRecorder;
    intake: SourceIntake;
    conversations: Pick<ConversationStore, 'transcript'>;
  }) {
    this.store = deps.store;
    this.recorder = deps.recorder;
    this.intake = deps.intake;
    this.conversations = deps.conversations;
  }

  /**
   * Answers a group: its examples and the answer become a source, and the group is resolved. A group
   * answered already is a conflict (and one answered meanwhile by another request takes its source
   * back out).
   */
  async answerGroup(
    chatbotId: string,
    groupId: string,
    input: ImprovedAnswerInput,
    index: SourceIndex,
  ): Promise<{ source: Source; group: UnansweredGroup }> {
    const group = await this.store.get(chatbotId, groupId);
    if (group.resolution === 'answered') throw new ConflictError(ANSWERED_ALREADY);
    const answer = checkAnswer(input.answer);
    const title = input.title?.trim() || improvedAnswerTitle(group.question);
    const source = await this.intake.addText(chatbotId, improvedAnswerText(group.examples, answer), title);
    try {
      return { source, group: await this.store.resolve(chatbotId, groupId, 'answered', source.id) };
    } catch (error) {
      await this.intake.remove(source.id, index);
      throw error;
    }
  }

  /** Dismisses a group: resolved without an answer. */
  dismiss(chatbotId: string, groupId: string): Promise<UnansweredGroup> {
    return this.store.resolve(chatbotId, groupId, 'dismissed');
  }

  /**
   * Answers the visitor question before the AI reply written at `createdAt`: the question (and its
   * open group's other questions) and the answer become a source; that group, if any, is resolved.
   */
  async answerReply(
    chatbotId: string,
    sessionId: string,
    createdAt: string,
    input: ImprovedAnswerInput,
  ): Promise<{ source: Source; group: UnansweredGroup | null }> {
    if (parseTimestamp(createdAt) === undefined)
      throw new ValidationError('created_at must be the timestamp of a reply.');
    const { messages } = await this.conversations.transcript(chatbotId, sessionId);
    const at = messages.findIndex((message) => message.role === 'assistant' && message.created_at === createdAt);
    if (at < 0) throw new NotFoundError('Message not found.');
    const question = messages.slice(0, at).findLast((message) => message.role === 'user');
    if (!question) throw new ValidationError('That reply answers no visitor question.');
    const answer = checkAnswer(input.answer);
    const askedAt = parseTimestamp(question.created_at)!;
    const groupId = await this.recorder.findGroup(chatbotId, question.content, { sessionId, askedAt });
    const group = groupId ? await this.store.get(chatbotId, groupId).catch(notFoundAsUndefined) : undefined;
    const questions = [question.content, ...(group?.examples ?? [])];
    const title = input.title?.trim() || improvedAnswerTitle(question.content);
    const source = await this.intake.addText(chatbotId, improvedAnswerText(questions, answer), title);
    if (!group) return { source, group: null };
    try {
      return { source, group: await this.store.resolve(chatbotId, group.id, 'answered', source.id) };
    } catch (error) {
      // Answered or dropped meanwhile: the owner's answer to this reply stands on its own.
      if (error instanceof ConflictError || error instanceof NotFoundError) return { source, group: null };
      throw error;
    }
  }
}

/** The answer as given, trimmed: not empty, at most MAX_ANSWER_LENGTH characters. */
function checkAnswer(answer: string): string {
  const trimmed = answer.trim();
  if (trimmed === '') throw new ValidationError('answer must not be empty.');
  if (trimmed.length > MAX_ANSWER_LENGTH) {
    throw new ValidationError(`answer must be at most ${MAX_ANSWER_LENGTH} characters.`);
  }
  return trimmed;
}

function notFoundAsUndefined(error: unknown): undefined {
  if (error instanceof NotFoundError) return undefined;
  throw error;
}
