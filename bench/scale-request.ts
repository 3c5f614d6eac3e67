/**
 * autocannon's `setupRequest` for the scale benchmark (`require()`d by each load worker thread): every
 * request is for a conversation drawn at random from SESSIONS, as a load balancer without stickiness
 * spreads a conversation's messages over every gateway.
 */

import type autocannon from 'autocannon';
import { chatBody, SESSIONS } from './chat-request.ts';

function setupRequest(request: autocannon.RequestParams): autocannon.RequestParams {
  return { ...request, body: chatBody(Math.floor(Math.random() * SESSIONS)) };
}

export { setupRequest as 'module.exports' };
