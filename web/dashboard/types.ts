/**
 * The management API's response and request bodies under the names the dashboard uses: all of them
 * are the contract's (src/contract/), which the server's routes are checked against too.
 */

export type {
  Account,
  InviteBody,
  SessionInfo,
  SetupBody,
  SetupState,
  SignInBody,
} from '../../src/contract/account.ts';
export { PROVIDER_SETTING } from '../../src/contract/provider.ts';
export type { ProviderStatus, ProviderTest, ProviderTestBody } from '../../src/contract/provider.ts';
export type { ApiKey, CreatedApiKey as CreatedKey, NewApiKeyBody } from '../../src/contract/api-key.ts';
export type { AgentView as Agent, CreatedAgent, NewAgentBody } from '../../src/contract/agent.ts';
export type { CannedReply, CannedReplyPatchBody, NewCannedReplyBody } from '../../src/contract/canned-reply.ts';
export type {
  ChatbotPatchBody,
  DashboardChatbot as Chatbot,
  NewChatbotBody,
  Provider,
} from '../../src/contract/chatbot.ts';
export type {
  CallToAction,
  ChatbotSettingsView as Settings,
  LeadField,
  OfficeHours,
  RetentionSettings,
  SettingsPatchBody as SettingsPatch,
  Weekday,
} from '../../src/contract/chatbot-settings.ts';
export type {
  ConnectionOffer as ConnectionService,
  DashboardConnection as Connection,
  NewConnectionBody,
} from '../../src/contract/connection.ts';
export type {
  ConversationErased,
  DashboardConversation as ConversationSummary,
  DashboardTranscript as Transcript,
  Message,
  MessageDelivery,
  PreviewSession,
  PreviewSessionBody,
} from '../../src/contract/conversation.ts';
export type { KnowledgeStatus, RetrievedPassages as Retrieved } from '../../src/contract/knowledge.ts';
export type { Lead, LeadName } from '../../src/contract/lead.ts';
export type {
  ChannelsStatus as Channels,
  TelegramConnectBody,
  TelegramStatus,
  WhatsAppCloudConnectBody,
  WhatsAppCloudStatus,
  WhatsAppLinkBody,
  WhatsAppStatus,
  WhatsAppTransport,
} from '../../src/contract/messaging-channels.ts';
export type {
  DashboardConnectorType as ConnectorType,
  DashboardSource as Source,
  NewSourceBody,
  Refresh,
  SourcePatchBody,
  SyncRecord,
  SyncStarted,
} from '../../src/contract/source.ts';
export type {
  ImproveAnswerBody,
  ImprovedAnswer,
  ImproveReplyBody,
  UnansweredGroup,
  UnansweredReason,
} from '../../src/contract/unanswered.ts';
export type { Usage } from '../../src/contract/usage.ts';
export { EVENT_NAMES, LIFECYCLE_EVENT_NAMES, SPEC_EVENT_NAMES } from '../../src/contract/webhook.ts';
export type {
  Delivery,
  DeliveryAttempt as Attempt,
  NewWebhookBody,
  TestEventBody,
  Webhook,
  WebhookPatchBody,
  WebhookWithSecret,
} from '../../src/contract/webhook.ts';
export type { WidgetConfig } from '../../src/contract/widget-protocol.ts';
