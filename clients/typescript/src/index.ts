// taisce-client: a typed client for the Taisce API (memory for AI agents).
export { Taisce } from "./client.js";
export type {
  AliasEntry,
  AliasPage,
  FactPage,
  PageOptions,
  CredentialList,
  EntityEntry,
  EntityList,
  ErasureAnswer,
  Fact,
  ForUser,
  Health,
  Status,
  ListEntitiesOptions,
  ListMessagesOptions,
  ListedCredential,
  ListedMessage,
  Merged,
  MessageList,
  MessageWithPassages,
  MintedCredential,
  Neighbourhood,
  NewFact,
  NewMessage,
  Proposals,
  Recall,
  RecallControls,
  RecallRequest,
  Role,
  TaisceOptions,
} from "./client.js";
export { TaisceError, TaisceNetworkError, apiError } from "./errors.js";
export type { ErrorCode, ErrorDetail } from "./errors.js";
export type { components, operations, paths } from "./schema.js";
