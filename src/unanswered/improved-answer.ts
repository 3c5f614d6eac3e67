import { MAX_TITLE_LENGTH } from '../sources/source.ts';

/** An improved answer is at most this long (a text source holds much more; an answer is a reply). */
export const MAX_ANSWER_LENGTH = 10_000;

/**
 * The text of the source an improved answer becomes: the questions visitors asked (the group's
 * examples, the representative first), then the owner's answer. Retrieval finds it when the question
 * or a paraphrase of it is asked again: the questions' words are in the text (and the first is the
 * source's title, which both engines weigh double), and the passage reads as a question and its
 * answer in the prompt. Measured in `npm run eval` (the improved-answer split).
 */
export function improvedAnswerText(questions: readonly string[], answer: string): string {
  const asked = [...new Set(questions.map((question) => question.trim()).filter(Boolean))];
  const lines = asked.map((question, i) => `${i === 0 ? 'Question' : 'Also asked'}: ${question}`);
  return `${lines.join('\n')}\n\nAnswer: ${answer.trim()}`;
}

/** The title a question gives its improved answer's source: the question, cut to a source title's length. */
export function improvedAnswerTitle(question: string): string {
  const title = question.trim().replace(/\s+/g, ' ');
  return title.length <= MAX_TITLE_LENGTH ? title : `${title.slice(0, MAX_TITLE_LENGTH - 1).trimEnd()}…`;
}
