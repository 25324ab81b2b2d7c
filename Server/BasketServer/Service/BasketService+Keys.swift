import BasketCore
import HTTPServer

/// Keys of lists encrypted end to end (docs/encryption.md), kept and handed on, never opened:
/// each account's key pair (its private key wrapped on a device), the recovery code's way back
/// from a forgotten password, and members' envelopes of a list's keys.
extension BasketService {
    /// `GET /v1/account/keys`: the account's public key and its private key wrapped under the
    /// password's key, for a device that just signed in. 404 when the account has none yet.
    func accountKeys(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        guard let keys = try store.accountKeys(of: account.id) else {
            throw HTTPError.notFound("this account has no key pair yet")
        }
        return answer(Wire.AccountKeys(publicKey: keys.publicKey, wrappedKey: keys.wrappedKey))
    }

    /// `PUT /v1/account/keys`: keeps the key pair a device made, confirmed with the password (a
    /// stolen token alone cannot give an account keys its owner cannot open). Made once: sent
    /// again, the public key must be the same (409 `keys_exist` otherwise).
    func setAccountKeys(_ request: HTTPRequest, _ responder: Responder) throws {
        try confirmedWithPassword(request, responder, Wire.KeySetup.self, password: \.password) {
            [self] _, body, account in
            do {
                try store.setAccountKeys(
                    StoredAccountKeys(
                        publicKey: body.publicKey, wrappedKey: body.wrappedKey, recoveryKey: body.recoveryKey,
                        recoveryHash: Hex.encode(Secrets.sha256(body.recoverySecret))),
                    of: account.id)
            } catch StoreError.keysExist {
                throw HTTPError(.keysExist, "this account has another key pair: it is made once")
            }
            return answer(Wire.AccountKeys(publicKey: body.publicKey))
        }
    }

    /// `POST /v1/account/recovery` (no token): what the recovery code signs in with, checked as
    /// a password is (counted against the address and the name). Without a new password, the
    /// answer is the public key and the private key wrapped under the recovery code's key; with
    /// one and its wrap, the password is replaced, every device signed out, and this one signed
    /// in. An unknown name, an account without keys and a wrong code are the same 401.
    func recover(_ request: HTTPRequest, _ responder: Responder) throws {
        try JSONBody.requireJSONContentType(request, stated: true)
        let body = try JSONBody.decode(Wire.Recovery.self, from: request)
        let name = body.name.lowercased()
        if let newPassword = body.newPassword { try Self.checkNewPassword(newPassword) }
        let address = clientAddress(request)
        try signInAttempt(responder, name: name, address: address, { try store.account(named: name) }) {
            [self] found in
            let keys = try found.flatMap { try store.accountKeys(of: $0.id) }
            let expected = keys.flatMap { Hex.bytes($0.recoveryHash) } ?? Array(repeating: 0, count: 32)
            let matches = Secrets.constantTimeEqual(Secrets.sha256(body.recoverySecret), expected)
            guard let account = found, let keys, matches else {
                logins.failed(name, address, now: configuration.monotonicClock())
                throw HTTPError(.invalidCredentials, "wrong account name or recovery code")
            }
            logins.succeeded(name, address)
            guard let newPassword = body.newPassword, let wrappedKey = body.wrappedKey else {
                return answer(Wire.AccountKeys(publicKey: keys.publicKey, recoveryKey: keys.recoveryKey))
            }
            _ = try store.setPassword(
                hash: Passwords.hash(newPassword, iterations: configuration.passwordIterations), wrappedKey: wrappedKey,
                of: account.id)
            _ = try store.revokeTokens(of: account.id, keeping: nil)
            sessions.forget(account: account.id)
            Self.dismissRevoked(account.id, watchers: watchers, store: store)
            let token = Passwords.newToken()
            let id = Secrets.randomHex(bytes: 8)
            try store.saveToken(
                hash: Passwords.tokenHash(token), id: id, account: account.id,
                device: body.device.flatMap { $0.isEmpty ? nil : $0 } ?? "unnamed device",
                createdAt: Int64(configuration.clock()))
            return answer(Wire.NewToken(token: token, account: account.name, id: id), status: 201)
        }
    }

    /// `GET /v1/lists/{id}/envelope`: the list's keys sealed to the asking member's public key.
    func listEnvelope(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        let list = try listID(request)
        do {
            let stored = try store.envelope(of: list, for: account.id)
            return answer(
                Wire.ListEnvelope(
                    envelope: stored.envelope, keyEpoch: stored.keyEpoch, rotationDue: stored.rotationDue))
        } catch StoreError.noSuchList {
            throw HTTPError.notFound("no such list")
        }
    }

    /// `PUT /v1/lists/{id}/envelopes`: a member's device leaves the list's keys sealed to members'
    /// public keys: its own account's (any member), anyone's (owners). All or none.
    /// With `epoch`, a rotation (an owner, or an editor while one is due): every member with a key
    /// pair gets the new epoch, which the list then takes alone (``KeyStore``).
    func deliverEnvelopes(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        let list = try listID(request)
        let body = try JSONBody.decode(Wire.EnvelopeDelivery.self, from: request)
        let envelopes = body.envelopes.map {
            Wire.EnvelopeDelivery.Envelope(account: $0.account.lowercased(), envelope: $0.envelope)
        }
        do {
            try store.deliverEnvelopes(envelopes, to: list, by: account.id, rotatingTo: body.epoch)
        } catch StoreError.noSuchList {
            throw HTTPError.notFound("no such list")
        } catch StoreError.notEncrypted {
            throw HTTPError(.notEncrypted, "this list is not encrypted end to end: it has no keys to hand on")
        } catch StoreError.noSuchMember {
            throw HTTPError(
                .forbidden,
                body.epoch == nil
                    ? "an envelope goes to a member of the list; a member who is not an owner leaves its own only"
                    : "a new key is made by an owner, or by an editor after a member left; envelopes go to members")
        } catch StoreError.staleKey(let keyEpoch) {
            throw HTTPError(
                .staleKey,
                "the list's newest key is \(keyEpoch): a rotation makes a newer one and leaves it to every member"
                    + " with a key pair (the members may have changed: ask them again)")
        } catch StoreError.noPublicKey {
            throw HTTPError(.invalidEnvelope, "a member this envelope is for has no key pair yet")
        }
        return HTTPResponse(status: 204)
    }

    /// `GET /v1/lists/{id}/snapshot`: the newest snapshot of an encrypted list, for a member; 204
    /// when none was made.
    func listSnapshot(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        let list = try listID(request)
        do {
            guard let snapshot = try store.snapshot(of: list, for: account.id) else { return HTTPResponse(status: 204) }
            return answer(snapshot)
        } catch StoreError.noSuchList {
            throw HTTPError.notFound("no such list")
        }
    }

    /// `PUT /v1/lists/{id}/snapshot`: an owner's device keeps the state of an encrypted list at a
    /// position of its log, sealed (docs/encryption.md, "Snapshots"); the server checks its form,
    /// its key epoch and its position, and keeps the newest.
    func putSnapshot(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        let list = try listID(request)
        // Its form was checked as it was decoded (`Wire.SnapshotRequest.check()`): its epoch is read
        // from the header, not by decoding up to 3 MiB again.
        let body = try JSONBody.decode(Wire.SnapshotRequest.self, from: request)
        let keyEpoch = try Self.keyEpoch(ofSnapshot: body.snapshot)
        do {
            try store.putSnapshot(
                body.snapshot, keyEpoch: keyEpoch, at: body.cursor, of: list, by: account.id,
                time: Int64(configuration.clock()))
        } catch StoreError.noSuchList {
            throw HTTPError.notFound("no such list")
        } catch StoreError.noSuchMember {
            throw HTTPError(.ownerOnly, "only an owner's device makes a list's snapshot")
        } catch StoreError.notEncrypted {
            throw HTTPError(.notEncrypted, "this list is not encrypted end to end: a device pulls its log")
        } catch StoreError.rotationDue {
            throw HTTPError(.rotationRequired, "a member left: the list's key is renewed before a snapshot")
        } catch StoreError.staleKey(let keyEpoch) {
            throw HTTPError(.staleKey, "a snapshot is sealed under the list's newest key, \(keyEpoch)")
        } catch StoreError.snapshotTooLarge(let limit) {
            throw HTTPError(
                .invalidSnapshot,
                "a snapshot holds part of the list's log: at most \(limit) bytes here (the log's and 64 KiB)")
        } catch StoreError.beyondLog(let lastSeq) {
            throw HTTPError(.invalidParameter, "the list's log ends at \(lastSeq): a snapshot's cursor is within it")
        }
        return HTTPResponse(status: 204)
    }

    /// `POST /v1/lists/{id}/encryption`: an owner's device makes a plain list encrypted end to end
    /// (docs/encryption.md, "Converting a plain list"): the keys it made reach every member, the
    /// list's state at the end of its log stays as a snapshot, and the plain log goes. Answers the
    /// log's new epoch.
    func encryptList(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        let list = try listID(request)
        let body = try JSONBody.decode(Wire.Conversion.self, from: request)
        let keyEpoch = try Self.keyEpoch(ofSnapshot: body.snapshot)
        let envelopes = body.envelopes.map {
            Wire.EnvelopeDelivery.Envelope(account: $0.account.lowercased(), envelope: $0.envelope)
        }
        let epoch: String
        do {
            epoch = try store.convert(
                list, by: account.id, at: body.cursor, snapshot: body.snapshot, keyEpoch: keyEpoch,
                envelopes: envelopes, time: Int64(configuration.clock()))
        } catch StoreError.noSuchList {
            throw HTTPError.notFound("no such list")
        } catch StoreError.noSuchMember {
            throw HTTPError(.ownerOnly, "only an owner encrypts a list; envelopes go to its members")
        } catch StoreError.listEncrypted {
            throw HTTPError(.listEncrypted, "this list is already encrypted end to end")
        } catch StoreError.logMoved(let lastSeq) {
            throw HTTPError(
                .logMoved, "the list's log has moved on to \(lastSeq): pull, then encrypt the list as it is now")
        } catch StoreError.membersWithoutKeys(let names) {
            throw HTTPError(
                .memberWithoutKeys,
                "\(names.count) member(s) have no key pair yet (\(names.prefix(5).joined(separator: ", "))): each signs"
                    + " in again on a current version, or leaves the list, before it is encrypted")
        } catch StoreError.staleKey {
            throw HTTPError(
                .staleKey, "a conversion's keys are epoch 0, with an envelope for every member (ask them again)")
        } catch StoreError.snapshotTooLarge(let limit) {
            throw HTTPError(
                .invalidSnapshot, "the list's state is at most \(limit) bytes here (its log's and 64 KiB)")
        }
        return answer(Wire.Conversion.Answer(epoch: epoch))
    }

    /// The key epoch a snapshot names in its header (its form was checked as it was decoded).
    static func keyEpoch(ofSnapshot snapshot: String) throws -> Int64 {
        guard let keyEpoch = Sealed.snapshotEpoch(of: snapshot) else {
            throw HTTPError(.invalidSnapshot, "a snapshot is 'n1.', its key epoch, '.' and base64url")
        }
        return Int64(keyEpoch)
    }
}
