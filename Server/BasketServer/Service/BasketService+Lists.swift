import BasketCore
import Foundation
import HTTPServer

/// Lists, members and invites.
extension BasketService {
    func listID(_ request: HTTPRequest) throws -> ListID {
        guard let raw = request.pathParameters["id"], let id = ListID(hex: raw.lowercased()) else {
            throw HTTPError.notFound("no such list")
        }
        return id
    }

    /// The caller's role on the list; a list the caller is not a member of does not exist for them.
    func membership(_ request: HTTPRequest) throws -> (AccountRecord, ListID, Role) {
        let account = try authenticate(request)
        let list = try listID(request)
        guard let role = try store.role(of: account.id, in: list) else { throw HTTPError.notFound("no such list") }
        return (account, list, role)
    }

    static func wire(_ m: MembershipRecord) -> Wire.Membership {
        Wire.Membership(id: m.list, role: m.role, epoch: m.epoch, cursor: m.cursor, encrypted: m.encrypted)
    }

    /// Refuses a new list (made or joined) for an account that has ``Configuration/maxListsPerAccount``
    /// (lists it is a member of, and lists it made that still exist: making lists and leaving them
    /// to others is no way around it).
    func checkListQuota(_ count: Int) throws {
        guard count < configuration.maxListsPerAccount else {
            throw HTTPError(
                .tooManyLists,
                "this account has \(count) lists, the most this server keeps for one account; leave or remove one first"
            )
        }
    }

    func createList(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        let body = try JSONBody.decode(Wire.NewList.self, from: request)
        guard let list = ListID(hex: body.id.lowercased()) else {
            throw HTTPError.badRequest("'id' is 32 hex digits (the list id the client made)", code: .invalidID)
        }
        let memberships = try store.memberships(of: account.id)
        if let existing = memberships.first(where: { $0.list == list }) {
            return answer(Self.wire(existing))  // creating twice is harmless
        }
        let encrypted = body.encrypted ?? false
        if configuration.requireEncryption && !encrypted {
            throw HTTPError(
                .encryptionRequired,
                "this server keeps lists encrypted end to end only; make the list with 'encrypted': true")
        }
        try checkListQuota(try store.listCount(of: account.id))
        do {
            return answer(Self.wire(try store.createList(list, owner: account.id, encrypted: encrypted)), status: 201)
        } catch StoreError.listExists {
            throw HTTPError(.listExists, "a list with this id exists; join it with an invite")
        }
    }

    func listLists(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        let lists = Wire.Lists(lists: try store.memberships(of: account.id).map(Self.wire))
        return .body(lists.jsonBytes(), contentType: "application/json")
    }

    func listMembers(_ request: HTTPRequest) throws -> HTTPResponse {
        let (_, list, _) = try membership(request)
        return answer(
            Wire.Members(
                members: try store.members(of: list).map {
                    Wire.Member(
                        account: $0.account, role: $0.role, replicas: $0.replicas.map(\.description),
                        publicKey: $0.publicKey)
                }))
    }

    /// Removes a member (an owner removing anyone, or a member leaving). The removed member's
    /// invites to the list are withdrawn and its parked long-polls on the list answered at once.
    /// The last member leaving deletes the list (``ListStore/removeMember(_:from:withdrawingInvitesItUsed:)``).
    func removeMember(_ request: HTTPRequest) throws -> HTTPResponse {
        let (account, list, role) = try membership(request)
        let name = request.pathParameters["account"]?.lowercased() ?? ""
        guard let target = try store.account(named: name), try store.role(of: target.id, in: list) != nil else {
            throw HTTPError.notFound("'\(name.prefix(64))' is not a member of this list")
        }
        guard target.id == account.id || role == .owner else {
            throw HTTPError(.forbidden, "only an owner can remove other members")
        }
        let deleted: Bool
        do {
            // Removed by an owner: the codes it joined with go too (it could come back as a new
            // account with a multi-use one); leaving keeps them for the others they were for.
            deleted = try store.removeMember(
                target.id, from: list, withdrawingInvitesItUsed: target.id != account.id)
        } catch StoreError.lastOwner {
            throw HTTPError(.lastOwner, "the last owner cannot leave while others are members")
        }
        if deleted {
            watchers.dismissAll(list: list, with: HTTPError.notFound("no such list").response)
        } else {
            watchers.dismiss(account: target.id, list: list, with: HTTPError.notFound("no such list").response)
        }
        return HTTPResponse(status: 204)
    }

    /// Gives a member another role: an owner's call. Making the last owner an editor or viewer
    /// is refused (409 last_owner): a list always has someone who can manage it.
    func changeRole(_ request: HTTPRequest) throws -> HTTPResponse {
        let (_, list, role) = try membership(request)
        guard role == .owner else { throw HTTPError(.forbidden, "only an owner can change roles") }
        let body = try JSONBody.decode(Wire.RoleChange.self, from: request)
        guard let newRole = Role(rawValue: body.role) else {
            throw HTTPError.badRequest("'role' is owner, editor or viewer", code: .invalidRole)
        }
        let name = request.pathParameters["account"]?.lowercased() ?? ""
        guard let target = try store.account(named: name), try store.role(of: target.id, in: list) != nil else {
            throw HTTPError.notFound("'\(name.prefix(64))' is not a member of this list")
        }
        do {
            try store.setRole(newRole, of: target.id, in: list)
        } catch StoreError.lastOwner {
            throw HTTPError(
                .lastOwner,
                "the list's last owner cannot become \(newRole == .viewer ? "a" : "an") \(newRole.rawValue); make another member an owner first"
            )
        } catch StoreError.noSuchMember {
            throw HTTPError.notFound("'\(name.prefix(64))' is not a member of this list")
        }
        // Its long-polls end (on other instances through the store's notification), so its
        // devices ask again as what it is now.
        Self.endWatches(of: target.id, on: list, watchers: watchers, store: store, configuration: configuration)
        return answer(Wire.Member(account: target.name, role: newRole))
    }

    /// Deletes a list with its log, members and invites: an owner's call. Every parked long-poll
    /// on it is answered 404 at once; the members' next sync finds it gone.
    func deleteList(_ request: HTTPRequest) throws -> HTTPResponse {
        let (_, list, role) = try membership(request)
        guard role == .owner else { throw HTTPError(.forbidden, "only an owner can delete the list") }
        guard try store.deleteList(list) else { throw HTTPError.notFound("no such list") }
        watchers.dismissAll(list: list, with: HTTPError.notFound("no such list").response)
        return HTTPResponse(status: 204)
    }

    // MARK: Invites

    static func wire(_ invite: InviteRecord) -> Wire.Invite {
        Wire.Invite(
            id: invite.id, role: invite.role, createdBy: invite.createdBy, created: invite.created,
            expiresAt: invite.expires, usesLeft: invite.usesLeft)
    }

    /// An invite code to the list: single-use unless `uses` says more (at most
    /// ``Configuration/maxInviteUses``), valid for `expiresIn` seconds (default
    /// ``Configuration/inviteSeconds``, at most ``Configuration/maxInviteSeconds``). The code is
    /// shown once; the store keeps its hash.
    func createInvite(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        let list = try listID(request)
        guard let access = try store.access(of: account.id, in: list) else { throw HTTPError.notFound("no such list") }
        let role = access.role
        let body = try JSONBody.decode(Wire.InviteRequest.self, from: request)
        guard let invited = Role(rawValue: body.role ?? Role.editor.rawValue) else {
            throw HTTPError.badRequest("'role' is owner, editor or viewer", code: .invalidRole)
        }
        func within(_ value: Int64?, _ key: Wire.InviteRequest.CodingKeys, _ range: ClosedRange<Int64>) throws -> Int64?
        {
            guard let value else { return nil }
            guard range.contains(value) else {
                throw HTTPError.badRequest(
                    "'\(key.rawValue)' must be a whole number in \(range.lowerBound)...\(range.upperBound)",
                    code: .invalidParameter)
            }
            return value
        }
        let uses = try within(body.uses, .uses, 1...Int64(configuration.maxInviteUses)) ?? 1
        let seconds =
            try within(body.expiresIn, .expiresIn, 60...Int64(configuration.maxInviteSeconds))
            ?? Int64(configuration.inviteSeconds)
        guard role != .viewer, invited <= role else {
            throw HTTPError(.forbidden, "a \(role.rawValue) cannot invite as \(invited.rawValue)")
        }
        let title: String?
        var keyEpoch: Int64?
        if access.encrypted {
            // An encrypted list's title travels sealed, under the keys the code carries; its text
            // is for the link's holder alone. Its epoch must be the list's newest (the store checks).
            if let sealed = body.title {
                guard let parsed = Sealed.parse(sealed) else {
                    throw HTTPError.badRequest(
                        "'title' of an encrypted list's invite is the title sealed (\(Sealed.prefix)…) under the keys"
                            + " the code carries", code: .invalidTitle)
                }
                keyEpoch = Int64(parsed.epoch)
            }
            title = body.title
        } else {
            do throws(ItemName.Problem) {
                title = try body.title.map { raw throws(ItemName.Problem) in try ItemName.clean(raw, for: .title) }
            } catch {
                throw HTTPError.badRequest("'title' is not a list title: \(error)", code: .invalidTitle)
            }
        }
        let code = Passwords.inviteCode()
        let id = Secrets.randomHex(bytes: 8)
        let now = Int64(configuration.clock())
        let expires = now + seconds * 1000
        do {
            try store.saveInvite(
                hash: Passwords.codeHash(code), id: id, list: list, role: invited, createdBy: account.id,
                createdAt: now, expiresAt: expires, uses: Int(uses),
                limits: InviteLimits(
                    perList: configuration.maxInvitesPerList, perMember: configuration.maxInvitesPerMember),
                title: title, keyEpoch: keyEpoch)
        } catch StoreError.noSuchMember, StoreError.noSuchList {
            // Removed or demoted since the role was read above.
            throw HTTPError(.forbidden, "this account may no longer invite to the list as \(invited.rawValue)")
        } catch StoreError.rotationDue {
            throw HTTPError(
                .rotationRequired,
                "a member left this encrypted list or was removed: it needs a new key before anyone is invited")
        } catch StoreError.staleKey(let keyEpoch) {
            throw HTTPError(
                .staleKey,
                "this invite carries a key the list no longer uses (its newest is \(keyEpoch)): take the new key"
                    + " from the account's envelope, then invite")
        } catch StoreError.tooManyInvites {
            throw HTTPError(
                .tooManyInvites,
                "the list has \(configuration.maxInvitesPerList) working invites, or this account "
                    + "\(configuration.maxInvitesPerMember): withdraw some first ('basket invites')")
        }
        return answer(
            Wire.NewInvite(code: code, id: id, role: invited, list: list, expiresAt: expires, usesLeft: Int(uses)),
            status: 201)
    }

    /// The list's working invites: an owner sees every one, an editor its own; a viewer none (403).
    func listInvites(_ request: HTTPRequest) throws -> HTTPResponse {
        let (account, list, role) = try membership(request)
        guard role != .viewer else { throw HTTPError(.forbidden, "a viewer has no invites to see") }
        let invites = try store.invites(of: list, now: Int64(configuration.clock()))
            .filter { role == .owner || $0.createdBy == account.name }
        return answer(Wire.Invites(invites: invites.map(Self.wire)))
    }

    /// Withdraws an invite: its maker, or an owner.
    func revokeInvite(_ request: HTTPRequest) throws -> HTTPResponse {
        let (account, list, role) = try membership(request)
        let id = request.pathParameters["invite"] ?? ""
        let visible = try store.invites(of: list, now: Int64(configuration.clock()))
            .first { $0.id == id && (role == .owner || $0.createdBy == account.name) }
        guard visible != nil, try store.revokeInvite(id: id, of: list) != nil else {
            throw HTTPError.notFound("this list has no invite '\(id.prefix(32))' of yours")
        }
        return HTTPResponse(status: 204)
    }

    /// What an invite code is for (list, title, role, maker), for a signed-in account to decide
    /// whether to join: the code travels in the body, as for joining. An unknown, used-up or
    /// expired code is a 404, as for joining; failed look-ups count against the address as
    /// failed sign-ins do, so codes cannot be guessed by asking.
    func previewInvite(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        let code = try JSONBody.decode(Wire.InviteCode.self, from: request).code
        let address = clientAddress(request)
        try checkAddress(address, "too many unknown codes from this address")
        guard
            let preview = try store.invitePreview(
                hash: Passwords.codeHash(code), now: Int64(configuration.clock()), for: account.id)
        else {
            logins.count(address, now: configuration.monotonicClock())
            throw HTTPError.notFound("no such invite: it is unknown, used up, withdrawn or expired")
        }
        return answer(preview)
    }

    /// Joins the list an invite is for. The code travels in the body, never in a URL (URLs end up
    /// in access logs and browser histories). A member already keeps its role (roles change only
    /// through ``changeRole(_:)``) and the invite keeps its use.
    func redeemInvite(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        let code = try JSONBody.decode(Wire.InviteCode.self, from: request).code
        try checkListQuota(try store.listCount(of: account.id))
        let hash = Passwords.codeHash(code)
        let now = Int64(configuration.clock())
        do {
            let joined = try store.redeemInvite(
                hash: hash, account: account.id, now: now, maxMembers: configuration.maxMembersPerList)
            return answer(Self.wire(joined))
        } catch StoreError.noSuchInvite {
            throw HTTPError.notFound("no such invite: it is unknown, used up, withdrawn or expired")
        } catch StoreError.tooManyMembers {
            throw HTTPError(
                .tooManyMembers, "the list has \(configuration.maxMembersPerList) members, the most it can have"
            )
        }
    }
}
