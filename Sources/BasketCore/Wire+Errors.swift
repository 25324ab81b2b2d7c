extension Wire {
    /// Every error the API answers with, as the body's `error`, and its HTTP status: the server
    /// throws these, both clients match on them (the web client's copy in `api.js` is held to
    /// this list by the conformance vectors), and a test holds docs/api.md's table of errors to
    /// it. A client meets a code it does not know (a newer server's) as a string: see
    /// ``ErrorCode/init(rawValue:)``.
    public enum ErrorCode: String, CaseIterable, Sendable {
        /// A request HTTP cannot read (a malformed line or header).
        case badRequest = "bad_request"
        /// The body is not JSON, not an object, or not UTF-8.
        case invalidJSON = "invalid_json"
        /// A field the request does not have.
        case unknownField = "unknown_field"
        /// A field the request needs is not there.
        case missingField = "missing_field"
        /// A field of another JSON type.
        case wrongType = "wrong_type"
        /// A string field over its byte limit.
        case tooLong = "too_long"
        /// A control character in a string field.
        case controlCharacter = "control_character"
        /// An account name that breaks the rules.
        case invalidName = "invalid_name"
        /// An invite's list title that breaks the rules of a title.
        case invalidTitle = "invalid_title"
        /// A password shorter than 8 characters.
        case weakPassword = "weak_password"
        /// A list id that is not 32 hex digits.
        case invalidID = "invalid_id"
        /// A role that is none of owner, editor, viewer.
        case invalidRole = "invalid_role"
        /// An operations encoding that cannot be read or breaks a rule (the message names the line).
        case invalidOps = "invalid_ops"
        /// An operation of another list.
        case wrongList = "wrong_list"
        /// A push of more than 10,000 operations.
        case batchTooLarge = "batch_too_large"
        /// A query parameter out of range or not a number.
        case invalidParameter = "invalid_parameter"
        /// A timestamp more than 5 minutes ahead of the server's clock.
        case clockSkew = "clock_skew"
        /// A push subscription's endpoint the server will not post to (not https, not public).
        case invalidEndpoint = "invalid_endpoint"
        /// A push subscription's keys that are not a P-256 key and a 16-byte secret, or an
        /// account's key pair, wrapped key or recovery secret not in their form (docs/encryption.md).
        case invalidKeys = "invalid_keys"
        /// A list's keys sealed to a member (`e1.…`) not in their form, or to a member without a key pair.
        case invalidEnvelope = "invalid_envelope"
        /// A list's snapshot (`n1.…`) not in its form, or over 3 MiB (docs/encryption.md).
        case invalidSnapshot = "invalid_snapshot"
        /// No token, or an unknown or revoked one.
        case unauthorized
        /// A token idle for 90 days or older than a year.
        case tokenExpired = "token_expired"
        /// A wrong name or password.
        case invalidCredentials = "invalid_credentials"
        /// What the account's role on the list does not allow.
        case forbidden
        /// Archiving or unarchiving by a member who is not an owner.
        case ownerOnly = "owner_only"
        /// The server takes no new accounts.
        case signupClosed = "signup_closed"
        /// The server takes new accounts only with a signup invite.
        case inviteRequired = "invite_required"
        /// A signup invite that does not work.
        case invalidInvite = "invalid_invite"
        /// The server keeps encrypted lists only (`--require-encryption`): a plain one was asked for.
        case encryptionRequired = "encryption_required"
        /// Quotas: nothing of the request was stored.
        case tooManyLists = "too_many_lists"
        /// See ``tooManyLists``.
        case tooManyMembers = "too_many_members"
        /// See ``tooManyLists``.
        case tooManyInvites = "too_many_invites"
        /// See ``tooManyLists``.
        case tooManyItems = "too_many_items"
        /// See ``tooManyLists``.
        case listTooLarge = "list_too_large"
        /// See ``tooManyLists``.
        case tooManyReplicas = "too_many_replicas"
        /// A member who is not an owner holds half of the list's items or bytes.
        case memberShareFull = "member_share_full"
        /// No such route, list (or not a member of it), or working invite.
        case notFound = "not_found"
        /// A method the route does not take.
        case methodNotAllowed = "method_not_allowed"
        /// The account name is taken.
        case accountExists = "account_exists"
        /// The list id is taken.
        case listExists = "list_exists"
        /// The list's last owner cannot leave or be demoted.
        case lastOwner = "last_owner"
        /// A pushed operation's identity is stored with another value.
        case identityConflict = "identity_conflict"
        /// A new operation's replica id belongs to another account on this list.
        case replicaTaken = "replica_taken"
        /// The account has another key pair already: a key pair is made once, then only wrapped again.
        case keysExist = "keys_exist"
        /// A password change of an account with a key pair that does not wrap its private key again.
        case rewrapRequired = "rewrap_required"
        /// Keys sealed to members of a list that is not encrypted end to end.
        case notEncrypted = "not_encrypted"
        /// An encrypted list awaits a new key (a member left or was removed): a remaining owner's or
        /// editor's device rotates it, then pushes go again.
        case rotationRequired = "rotation_required"
        /// Sealed under a key epoch the list does not take (the device lacks its newest key), or a
        /// rotation to an epoch that is not the newest, or leaving a member out.
        case staleKey = "stale_key"
        /// The list is encrypted end to end: a conversion of it, or a plain push to it (it was
        /// converted since the device last heard: it takes the keys from its envelope, changes its
        /// copy and seals its writes).
        case listEncrypted = "list_encrypted"
        /// A conversion made at a position the list's log has moved past: the device pulls and
        /// converts again.
        case logMoved = "log_moved"
        /// A conversion while a member has no key pair yet: no envelope could reach it.
        case memberWithoutKeys = "member_without_keys"
        /// A body over the route's limit.
        case bodyTooLarge = "body_too_large"
        /// A body sent with another `Content-Type` than `application/json`.
        case unsupportedMediaType = "unsupported_media_type"
        /// Too many sign-ins or signups from one address (`Retry-After` says when).
        case rateLimited = "rate_limited"
        /// Too many long-polls parked by one account.
        case tooManyWatches = "too_many_watches"
        /// Something failed on the server (its log has the cause).
        case `internal`
        /// A queue or budget of the server is full (`Retry-After: 1`).
        case busy
        /// The server is stopping.
        case shuttingDown = "shutting_down"
        /// The database cannot be reached for a moment (`Retry-After: 2`); nothing was stored.
        case unavailable
        /// The server's disk is full; nothing was stored.
        case storageFull = "storage_full"

        /// The HTTP status the API answers this error with.
        public var status: Int {
            switch self {
            case .badRequest, .invalidJSON, .unknownField, .missingField, .invalidEndpoint, .invalidKeys, .wrongType,
                .tooLong, .controlCharacter,
                .invalidName,
                .invalidTitle, .weakPassword, .invalidID, .invalidRole, .invalidOps, .wrongList, .batchTooLarge,
                .invalidParameter,
                .clockSkew, .invalidEnvelope, .invalidSnapshot:
                400
            case .unauthorized, .tokenExpired, .invalidCredentials: 401
            case .forbidden, .ownerOnly, .signupClosed, .inviteRequired, .invalidInvite, .encryptionRequired,
                .tooManyLists, .tooManyMembers,
                .tooManyInvites, .tooManyItems, .listTooLarge, .tooManyReplicas, .memberShareFull:
                403
            case .notFound: 404
            case .methodNotAllowed: 405
            case .accountExists, .listExists, .lastOwner, .identityConflict, .replicaTaken, .keysExist, .rewrapRequired,
                .notEncrypted, .rotationRequired, .staleKey, .listEncrypted, .logMoved, .memberWithoutKeys:
                409
            case .bodyTooLarge: 413
            case .unsupportedMediaType: 415
            case .rateLimited, .tooManyWatches: 429
            case .internal: 500
            case .busy, .shuttingDown, .unavailable: 503
            case .storageFull: 507
            }
        }
    }
}
