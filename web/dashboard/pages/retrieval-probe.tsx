import { useState } from 'preact/hooks';
import { get } from '../api.ts';
import { Notice } from '../components/notice.tsx';
import type { Chatbot, Retrieved } from '../types.ts';
import { useAction } from '../use-resource.ts';

/**
 * Ask a question and see the passages the chatbot would put in its prompt, best first, each with its
 * rank and which of the two searches found it (matching words, similar meaning, or both): the fused
 * scores behind the order mean nothing to an owner.
 */
export function RetrievalProbe({ chatbot }: { chatbot: Chatbot }) {
  const [question, setQuestion] = useState('');
  const [found, setFound] = useState<Retrieved | undefined>(undefined);
  const action = useAction();
  const ask = async (event: Event) => {
    event.preventDefault();
    const query = encodeURIComponent(question);
    const result = await action.run(() => get<Retrieved>(`/chatbots/${chatbot.id}/retrieve?query=${query}&k=5`));
    if (result) setFound(result);
  };
  return (
    <div class="card stack retrieval-probe">
      <h2>Try a question</h2>
      <form class="inline-form" onSubmit={(event) => void ask(event)}>
        <label>
          Question
          <input name="query" required value={question} onInput={(event) => setQuestion(event.currentTarget.value)} />
        </label>
        <button class="button" type="submit" disabled={action.busy}>
          Find passages
        </button>
      </form>
      <Notice>{action.error}</Notice>
      {found &&
        (found.results.length === 0 ? (
          <p class="empty">Nothing in the sources matches yet.</p>
        ) : (
          <ol class="passages">
            {found.results.map((hit) => (
              <li key={hit.chunk_id}>
                <span class="rank">#{hit.rank}</span> <strong>{hit.title || hit.url || 'Untitled'}</strong>{' '}
                {foundBy(hit).map((way) => (
                  <span key={way} class="badge found-by">
                    {way}
                  </span>
                ))}
                <p>{hit.content}</p>
              </li>
            ))}
          </ol>
        ))}
    </div>
  );
}

/** Which searches found a passage, in the owner's words. */
function foundBy(hit: Retrieved['results'][number]): string[] {
  return [hit.text && 'Matched words', hit.vector && 'Similar meaning'].filter((way) => typeof way === 'string');
}
