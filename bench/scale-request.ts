/**
 * autocannon's `setupRequest` for the scale benchmark (`require()`d by each load worker thread): every
 * request is for a conversation drawn at random from SESSIONS, as a load balancer without stickiness
 * spreads a conversation's messages over every gateway, and of a chatbot drawn at random from
 * SCALE_TARGETS (the environment the worker threads share with the benchmark).
 */

import type autocannon from 'autocannon';
import { chatBody, SESSIONS } from './chat-request.ts';

/** A chatbot's chat path and its owner's key. */
export interface ScaleTarget {
  path: string;
  authorization: string;
}

export const TARGETS_ENV = 'SCALE_TARGETS';

const targets = JSON.parse(process.env[TARGETS_ENV] ?? '[]') as ScaleTarget[];

function setupRequest(request: autocannon.RequestParams): autocannon.RequestParams {
  const target = targets[Math.floor(Math.random() * targets.length)];
  const body = chatBody(Math.floor(Math.random() * SESSIONS));
  if (target === undefined) return { ...request, body };
  return { ...request, body, path: target.path, headers: { ...request.headers, authorization: target.authorization } };
}

export { setupRequest as 'module.exports' };
