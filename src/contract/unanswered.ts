/**
 * The unanswered-questions inbox and improved answers, as the dashboard and the CLI see them. Part of
 * the contract: type-only and browser-safe (see README.md beside this file).
 */
import type { DashboardSource } from './source.ts';

/**
 * Why a visitor question landed in the inbox: the reply was the fallback message (`fallback`), it
 * was answered from passages below the relevance floor (`low_relevance`), the chatbot answers only
 * from its sources and found none (`sources_only`), the visitor rated the reply down
 * (`thumbs_down`), or the conversation was escalated to a human after it (`escalated`).
 */
export type UnansweredReason = 'fallback' | 'low_relevance' | 'sources_only' | 'thumbs_down' | 'escalated';

/** `open` until the owner answers or dismisses it. */
export type UnansweredStatus = 'open' | 'resolved';

/** How a resolved group was resolved: an improved answer (a text source), or dismissed. */
export type UnansweredResolution = 'answered' | 'dismissed';

/**
 * One group of near-duplicate visitor questions (`GET /dashboard/api/chatbots/{id}/unanswered`, one
 * element). `count` counts the times the question was asked (a question that gets a fallback reply,
 * a thumbs-down and an escalation counts once, with three reasons); `reasons` counts those times per
 * reason.
 */
export interface UnansweredGroup {
  id: string;
  /** The group's representative: the first question asked of it. */
  question: string;
  count: number;
  /** When a question of the group was first and last asked. */
  first_seen_at: string;
  last_seen_at: string;
  reasons: Partial<Record<UnansweredReason, number>>;
  /** Distinct questions of the group, the representative first (at most five). */
  examples: string[];
  /**
   * The session of the latest conversation that asked it (to open its transcript); '' once that
   * conversation was deleted (retention, an erasure request).
   */
  session_id: string;
  status: UnansweredStatus;
  /** Set once resolved. */
  resolution?: UnansweredResolution;
  resolved_at?: string;
  /** The text source of an `answered` group. */
  source_id?: string;
}

/** `POST …/unanswered/{group}/answer`: the right answer, and the source's title (the question by default). */
export interface ImproveAnswerBody {
  answer: string;
  title?: string;
}

/**
 * `POST …/conversations/{session_id}/answer`: the right answer to the visitor question before the AI
 * reply written at `created_at`.
 */
export interface ImproveReplyBody extends ImproveAnswerBody {
  created_at: string;
}

/**
 * What improving an answer made: the new text source, and the group it resolved (`null` from a
 * transcript when the question is in no open group).
 */
export interface ImprovedAnswer {
  source: DashboardSource;
  group: UnansweredGroup | null;
}
