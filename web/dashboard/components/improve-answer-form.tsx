import { useState } from 'preact/hooks';
import type { ImproveAnswerBody } from '../types.ts';

/**
 * The owner's right answer to a visitor question: the answer, and the title of the text source it
 * becomes (the question when left empty). `onSave` says whether it was saved; the form keeps what
 * was typed when it was not.
 */
export function ImproveAnswerForm(props: {
  question: string;
  busy: boolean;
  onSave: (body: ImproveAnswerBody) => Promise<boolean>;
  onCancel: () => void;
}) {
  const [answer, setAnswer] = useState('');
  const [title, setTitle] = useState('');
  return (
    <form
      class="stack improve-answer"
      onSubmit={(event) => {
        event.preventDefault();
        const body: ImproveAnswerBody = title.trim() ? { answer, title } : { answer };
        void props.onSave(body);
      }}
    >
      <label>
        Right answer
        <textarea
          name="answer"
          rows={4}
          required
          maxLength={10000}
          value={answer}
          onInput={(event) => setAnswer(event.currentTarget.value)}
        />
      </label>
      <label>
        Source title
        <input
          name="title"
          maxLength={300}
          placeholder={props.question}
          value={title}
          onInput={(event) => setTitle(event.currentTarget.value)}
        />
      </label>
      <p class="muted small">
        Saved as a text source titled with the question, with the questions visitors asked: the chatbot answers from it
        once it is ingested.
      </p>
      <div class="actions">
        <button class="button primary" type="submit" disabled={props.busy}>
          Save answer
        </button>
        <button class="button ghost" type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
