// The sync API on this origin (docs/api.md). Answers are untrusted: bodies are read up to a
// bound, JSON is checked for the fields used, and errors carry the server's code.
import { readAtMost } from "./bounded.js";

/**
 * @typedef {{ method: string, pattern: string }} Route
 */

/** The statuses the clients act on that are not an error's (an error's is in ERRORS). */
export const STATUS = Object.freeze({ noContent: 204 });

/**
 * Every route of the API, by the name its Swift twin has (BasketCore's Wire.Route): requests
 * name one of these, never a path written out, and the conformance vectors hold the table to the
 * Swift one. A `{name}` in a pattern is one path segment the caller fills.
 */
export const ROUTES = Object.freeze({
  health: { method: "GET", pattern: "/healthz" },
  metrics: { method: "GET", pattern: "/metrics" },
  time: { method: "GET", pattern: "/v1/time" },
  signUp: { method: "POST", pattern: "/v1/accounts" },
  login: { method: "POST", pattern: "/v1/tokens" },
  devices: { method: "GET", pattern: "/v1/tokens" },
  logoutEverywhere: { method: "DELETE", pattern: "/v1/tokens" },
  logout: { method: "DELETE", pattern: "/v1/tokens/current" },
  revokeDevice: { method: "DELETE", pattern: "/v1/tokens/{id}" },
  account: { method: "GET", pattern: "/v1/account" },
  deleteAccount: { method: "DELETE", pattern: "/v1/account" },
  changePassword: { method: "POST", pattern: "/v1/account/password" },
  accountKeys: { method: "GET", pattern: "/v1/account/keys" },
  setAccountKeys: { method: "PUT", pattern: "/v1/account/keys" },
  recover: { method: "POST", pattern: "/v1/account/recovery" },
  createList: { method: "POST", pattern: "/v1/lists" },
  lists: { method: "GET", pattern: "/v1/lists" },
  deleteList: { method: "DELETE", pattern: "/v1/lists/{id}" },
  members: { method: "GET", pattern: "/v1/lists/{id}/members" },
  setRole: { method: "PUT", pattern: "/v1/lists/{id}/members/{account}" },
  removeMember: { method: "DELETE", pattern: "/v1/lists/{id}/members/{account}" },
  envelope: { method: "GET", pattern: "/v1/lists/{id}/envelope" },
  deliverEnvelopes: { method: "PUT", pattern: "/v1/lists/{id}/envelopes" },
  snapshot: { method: "GET", pattern: "/v1/lists/{id}/snapshot" },
  putSnapshot: { method: "PUT", pattern: "/v1/lists/{id}/snapshot" },
  encrypt: { method: "POST", pattern: "/v1/lists/{id}/encryption" },
  invite: { method: "POST", pattern: "/v1/lists/{id}/invites" },
  invites: { method: "GET", pattern: "/v1/lists/{id}/invites" },
  revokeInvite: { method: "DELETE", pattern: "/v1/lists/{id}/invites/{invite}" },
  join: { method: "POST", pattern: "/v1/invites" },
  previewInvite: { method: "POST", pattern: "/v1/invites/preview" },
  push: { method: "POST", pattern: "/v1/lists/{id}/ops" },
  pull: { method: "GET", pattern: "/v1/lists/{id}/ops" },
  shopping: { method: "GET", pattern: "/v1/lists/{id}/shopping" },
  startShopping: { method: "PUT", pattern: "/v1/lists/{id}/shopping" },
  stopShopping: { method: "DELETE", pattern: "/v1/lists/{id}/shopping" },
  makeAddKey: { method: "POST", pattern: "/v1/lists/{id}/keys" },
  addKeys: { method: "GET", pattern: "/v1/lists/{id}/keys" },
  revokeAddKey: { method: "DELETE", pattern: "/v1/lists/{id}/keys/{key}" },
  putInInbox: { method: "POST", pattern: "/v1/lists/{id}/inbox" },
  inbox: { method: "GET", pattern: "/v1/lists/{id}/inbox" },
  takeFromInbox: { method: "DELETE", pattern: "/v1/lists/{id}/inbox/{entry}" },
  pushKey: { method: "GET", pattern: "/v1/push/key" },
  subscribePush: { method: "POST", pattern: "/v1/push/subscriptions" },
  pushSubscriptions: { method: "GET", pattern: "/v1/push/subscriptions" },
  unsubscribePush: { method: "DELETE", pattern: "/v1/push/subscriptions/{id}" },
});

/**
 * The path of `route` with each `{…}` filled, in order, by `segments`, each escaped as one
 * segment (Wire.Route.path in Swift).
 * @param {Route} route
 * @param {string[]} segments
 */
export function pathOf(route, segments) {
  let next = 0;
  const path = route.pattern.replace(/\{[a-z]+\}/g, () => {
    if (next >= segments.length) throw new Error(`${route.method} ${route.pattern} needs more values`);
    return encodeURIComponent(segments[next++]);
  });
  if (next !== segments.length) throw new Error(`${route.method} ${route.pattern} takes ${next} values`);
  return path;
}

/**
 * Every error the API answers with, by the name its Swift twin has (BasketCore's Wire.ErrorCode),
 * with the body's code and the status: the sync and the screens match on these, never on a code
 * written out, and the conformance vectors hold the table to the Swift one.
 */
export const ERRORS = Object.freeze({
  badRequest: { code: "bad_request", status: 400 },
  invalidJSON: { code: "invalid_json", status: 400 },
  unknownField: { code: "unknown_field", status: 400 },
  missingField: { code: "missing_field", status: 400 },
  wrongType: { code: "wrong_type", status: 400 },
  tooLong: { code: "too_long", status: 400 },
  controlCharacter: { code: "control_character", status: 400 },
  invalidName: { code: "invalid_name", status: 400 },
  invalidTitle: { code: "invalid_title", status: 400 },
  weakPassword: { code: "weak_password", status: 400 },
  invalidID: { code: "invalid_id", status: 400 },
  invalidRole: { code: "invalid_role", status: 400 },
  invalidOps: { code: "invalid_ops", status: 400 },
  wrongList: { code: "wrong_list", status: 400 },
  batchTooLarge: { code: "batch_too_large", status: 400 },
  invalidParameter: { code: "invalid_parameter", status: 400 },
  clockSkew: { code: "clock_skew", status: 400 },
  invalidEndpoint: { code: "invalid_endpoint", status: 400 },
  invalidKeys: { code: "invalid_keys", status: 400 },
  invalidEnvelope: { code: "invalid_envelope", status: 400 },
  invalidSnapshot: { code: "invalid_snapshot", status: 400 },
  unauthorized: { code: "unauthorized", status: 401 },
  tokenExpired: { code: "token_expired", status: 401 },
  invalidCredentials: { code: "invalid_credentials", status: 401 },
  forbidden: { code: "forbidden", status: 403 },
  ownerOnly: { code: "owner_only", status: 403 },
  signupClosed: { code: "signup_closed", status: 403 },
  inviteRequired: { code: "invite_required", status: 403 },
  invalidInvite: { code: "invalid_invite", status: 403 },
  encryptionRequired: { code: "encryption_required", status: 403 },
  tooManyLists: { code: "too_many_lists", status: 403 },
  tooManyMembers: { code: "too_many_members", status: 403 },
  tooManyInvites: { code: "too_many_invites", status: 403 },
  tooManyItems: { code: "too_many_items", status: 403 },
  listTooLarge: { code: "list_too_large", status: 403 },
  tooManyReplicas: { code: "too_many_replicas", status: 403 },
  memberShareFull: { code: "member_share_full", status: 403 },
  notFound: { code: "not_found", status: 404 },
  methodNotAllowed: { code: "method_not_allowed", status: 405 },
  accountExists: { code: "account_exists", status: 409 },
  listExists: { code: "list_exists", status: 409 },
  lastOwner: { code: "last_owner", status: 409 },
  identityConflict: { code: "identity_conflict", status: 409 },
  replicaTaken: { code: "replica_taken", status: 409 },
  keysExist: { code: "keys_exist", status: 409 },
  rewrapRequired: { code: "rewrap_required", status: 409 },
  notEncrypted: { code: "not_encrypted", status: 409 },
  rotationRequired: { code: "rotation_required", status: 409 },
  staleKey: { code: "stale_key", status: 409 },
  listEncrypted: { code: "list_encrypted", status: 409 },
  logMoved: { code: "log_moved", status: 409 },
  memberWithoutKeys: { code: "member_without_keys", status: 409 },
  bodyTooLarge: { code: "body_too_large", status: 413 },
  unsupportedMediaType: { code: "unsupported_media_type", status: 415 },
  rateLimited: { code: "rate_limited", status: 429 },
  tooManyWatches: { code: "too_many_watches", status: 429 },
  internal: { code: "internal", status: 500 },
  busy: { code: "busy", status: 503 },
  shuttingDown: { code: "shutting_down", status: 503 },
  unavailable: { code: "unavailable", status: 503 },
  storageFull: { code: "storage_full", status: 507 },
});

/** Answers larger than this are refused (a pulled page is about 1 MiB at most). */
export const MAX_ANSWER_BYTES = 8 << 20;

/** An answer of the server that is an error: `status`, `code` and `message` as it sent them. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   * @param {Record<string, any>} [body] the whole answer (some errors carry more: a role, a list)
   */
  constructor(status, code, message, body = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.body = body;
  }

  /**
   * Whether the server answered with one of `errors` (entries of ERRORS).
   * @param {...{ code: string }} errors
   */
  is(...errors) {
    return errors.some((e) => e.code === this.code);
  }
}

/** The server could not be reached (offline, or it is down). */
export class Unreachable extends Error {
  /** @param {unknown} cause */
  constructor(cause) {
    super("the server cannot be reached");
    this.cause = cause;
  }
}

/**
 * @param {Response} response
 * @returns {Promise<string>}
 */
async function readBounded(response) {
  const length = Number(response.headers.get("content-length") ?? "0");
  if (length > MAX_ANSWER_BYTES) throw new ApiError(response.status, "answer_too_large", "the server's answer is too large");
  if (!response.body) return "";
  const bytes = await readAtMost(response.body, MAX_ANSWER_BYTES);
  if (bytes === null) throw new ApiError(response.status, "answer_too_large", "the server's answer is too large");
  return new TextDecoder().decode(bytes);
}

/**
 * One request to `route`, its `{…}` filled by `segments` and `query` after a "?": `body` is sent
 * as JSON, the answer parsed as JSON (null for 204). Throws ApiError for an error answer,
 * Unreachable when there is no answer.
 * @param {Route} route
 * @param {string[]} segments
 * @param {{ body?: any, token?: string | null, signal?: AbortSignal, timeout?: number, query?: string }} options
 * @returns {Promise<any>}
 */
export async function request(route, segments = [], { body, token, signal, timeout = 15000, query = "" } = {}) {
  const method = route.method;
  const path = pathOf(route, segments) + (query ? "?" + query : "");
  /** @type {Record<string, string>} */
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = "Bearer " + token;
  const controller = new AbortController();
  const abort = () => controller.abort();
  signal?.addEventListener("abort", abort);
  const timer = setTimeout(abort, timeout);
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: controller.signal,
      cache: "no-store",
      credentials: "omit",
      redirect: "error",
    });
  } catch (error) {
    clearTimeout(timer);
    signal?.removeEventListener("abort", abort);
    if (signal?.aborted) throw new DOMException("aborted", "AbortError");
    throw new Unreachable(error);
  }
  try {
    const text = await readBounded(response);
    if (response.status === STATUS.noContent) return null;
    let json = null;
    try {
      json = text === "" ? null : JSON.parse(text);
    } catch {
      json = null;
    }
    // The server's store is away for a moment (a restart, a failover): nothing was done, and the
    // sync retries it as it retries any outage (as the Swift client does after two quick tries).
    if (response.status === ERRORS.unavailable.status) throw new Unreachable(new Error(`the server answered ${response.status}`));
    if (!response.ok) {
      const code = typeof json?.error === "string" ? json.error : `http_${response.status}`;
      // A server's words are shown to the user: at most 500 characters, no control characters.
      const message = typeof json?.message === "string"
        ? json.message.replace(/\p{Cc}/gu, " ").slice(0, 500)
        : `the server answered ${response.status}`;
      throw new ApiError(response.status, code, message, json ?? {});
    }
    if (json === null || typeof json !== "object") throw new ApiError(response.status, "bad_answer", "the server's answer is not JSON");
    return json;
  } catch (error) {
    if (error instanceof ApiError || error instanceof Unreachable) throw error;
    if (signal?.aborted) throw new DOMException("aborted", "AbortError");
    throw new Unreachable(error);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", abort);
  }
}
