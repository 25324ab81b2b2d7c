import BasketCore
import Foundation

/// A command: its name, help and options, and what it runs.
struct CommandSpec: Sendable {
    var path: [String]
    var summary: String
    var usage: String
    var details: String = ""
    /// The command's own options (the global ones are ``Option/global``).
    var options: [Option] = []
    /// Whether the command writes to the replica: with a server, what it wrote is sent before it exits.
    var writes = false
    /// Left out of `basket --help` and the man page (plumbing for shell completion).
    var hidden = false
    /// What the command prints on stdout: `-q` silences a report, never data.
    var output: Output = .report
    /// What the command's arguments name, which shell completion offers (`basket completion`).
    var arguments: Arguments = .other
    var run: @Sendable (Context) throws -> Void

    /// What a command's arguments name: the kind `basket __complete KIND` lists.
    enum Arguments: String, Sendable {
        /// Nothing completion offers.
        case other = ""
        /// Items on the list, checked or not.
        case items = "items"
        /// Items to buy (what `check` takes).
        case uncheckedItems = "unchecked-items"
        /// Checked items (what `uncheck` takes).
        case checkedItems = "checked-items"
        /// The lists of this device.
        case lists = "lists"
    }

    enum Output: Sendable {
        /// What was done ("Added Milk"): `-q` leaves it out.
        case report
        /// What was asked for (the list, a search, an invite code): printed with `-q` too.
        case data
        /// Data without a subcommand (`basket members`), a report with one (`basket members rm`).
        case dataWhenBare
    }

    /// The options that take a value (`--to NAME`), for the parser.
    var valueOptions: Set<String> { Set(options.filter { $0.value != nil }.map(\.name)) }
    /// The options that do not (`--yes`).
    var flagOptions: Set<String> { Set(options.filter { $0.value == nil }.map(\.name)) }

    /// `basket COMMAND --help`: the command's own options; the global ones in one line (all of
    /// them in `basket --help`).
    var help: String {
        var text = "OVERVIEW: \(summary)\n\nUSAGE: \(usage)\n"
        if !body.isEmpty { text += "\n\(body)\n" }
        text += "\n" + (path.isEmpty ? Self.globalHelp : Self.globalHint)
        return text
    }

    /// What help says below the usage: the details, then the options, each as declared.
    var body: String {
        let section = options.isEmpty ? "" : "OPTIONS:\n" + options.map(\.helpLines).joined(separator: "\n")
        return Self.laidOut(
            [String(details.reversed().drop(while: \.isNewline).reversed()), section].filter { !$0.isEmpty }.joined(
                separator: "\n"))
    }

    /// Help text with a blank line before each section (OPTIONS:, ARGUMENTS:, SUBCOMMANDS:) and
    /// between a section's indented lines and the prose after them.
    static func laidOut(_ text: String) -> String {
        var lines: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let previous = lines.last ?? ""
            let isHeader = line.hasSuffix(":") && line.allSatisfy { $0.isUppercase || $0 == " " || $0 == ":" }
            let startsProse = !line.isEmpty && !line.hasPrefix(" ") && previous.hasPrefix(" ")
            if !previous.isEmpty && (isHeader || startsProse) { lines.append("") }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    static let globalHint =
        "Global options: "
        + [Option.db, .list, .json, .noSync, .quiet].map {
            ($0.short.map { "\($0)/" } ?? "") + $0.label
        }.joined(separator: ", ") + " ('basket help' says what each does)."

    static let globalHelp =
        "GLOBAL OPTIONS:\n" + Option.global.map(\.helpLines).joined(separator: "\n") + "\n\n" + """
            ENVIRONMENT:
              BASKET_HOME, XDG_DATA_HOME   Where the replica lives (see --db).
              BASKET_PASSWORD              The password for signup and login.
              BASKET_TIMEOUT               Seconds a command waits for the server's answer (default 15).
              BASKET_CLOCK_SKEW_MS         Pretend this device's clock is off by this many milliseconds
                                           (for testing conflicts and clock correction).
              BASKET_CLOCK_MS              Pretend this device's clock reads this Unix time in milliseconds
                                           and stands still (basket-lab replay; BASKET_CLOCK_SKEW_MS adds to it).
            """
}

enum Commands {
    static let globalValueOptions = Set(Option.global.filter { $0.value != nil }.map(\.name))
    static let globalFlagOptions = Set(Option.global.filter { $0.value == nil }.map(\.name))
    /// One-letter spellings, taken where the long option is (`-a` is `--all` for `basket ls`).
    static let shortOptions: [String: String] = Dictionary(
        (Option.global + all.flatMap(\.options)).compactMap { option in option.short.map { ($0, option.name) } }
    ) { first, _ in first }

    /// The short spelling of `option`, if it has one.
    static func short(of option: String) -> String? { shortOptions.first { $0.value == option }?.key }

    static let all: [CommandSpec] = [
        CommandSpec(
            path: ["add"], summary: "Add items to the list.",
            usage:
                "basket add NAME[, NAME…] | basket add - | basket add --from FILE|- [--category C] [--note NOTE] | basket add --due",
            details: """
                ARGUMENTS:
                  NAME             Words are joined; commas, semicolons and newlines separate items:
                                   'basket add oat milk, bread'. A quantity in front ('2 milk', '500 g flour',
                                   '500ml cream', '2 x tomatoes', '1/2 lemon', '1 1/2 cups sugar') or behind
                                   ('milk x2', 'milk 2l', 'flour 500 g', 'ビール3本') is kept apart from the
                                   name; a name already on the list is taken as typed ('7 Up'). An '@' after
                                   a space puts the item in an aisle: 'milk @dairy, bread @bakery' ('#' too,
                                   quoted: a shell takes '#dairy' for a comment); 'dairy' means the list's
                                   aisle of that name, else the catalogue's ('Dairy & eggs').
                  -                Read a recipe or a list from stdin: one item per line, each read as a
                                   NAME is (bullets and numbers in front dropped, '2 onions, chopped' has
                                   the note 'chopped', '(for the cake)' is a note, '2 EL Olivenöl', 'zwei
                                   Flaschen Wasser', '2-3 onions' keep their amounts). The line as typed is
                                   kept with the item when it said more than the name.

                A name already on the list is never added twice: a removed item comes back, a checked
                one is unchecked. Names are matched without case, accents or width ('milk' = 'Milk'),
                and German spellings without umlauts are the words with them ('kaese' = 'Käse'). An
                item without a category takes the catalogue's aisle, in the language of LC_ALL,
                LC_MESSAGES or LANG ('milk' goes to 'Dairy & eggs'). A quantity added to an item
                still to buy is added to its own ('2 milk' then '1 milk': 3; '500 g' and '1 pack':
                '500 g + 1 pack'; units are never converted); 'basket undo' takes it back. Each
                outcome is said: added, brought back, 'milk: now 3', already on the list.
                Empty names, names over 500 characters or 2,048 bytes, control characters and invalid UTF-8
                are refused; nothing is written then.
                """,
            options: [.from, .category, .addNote, .due], writes: true, run: ItemCommands.add),
        CommandSpec(
            path: ["check"], summary: "Cross items off.", usage: "basket check ITEM…",
            details: itemsArgument, writes: true, arguments: .uncheckedItems,
            run: { try ItemCommands.setChecked($0, .check) }),
        CommandSpec(
            path: ["uncheck"], summary: "Put checked items back on the list.", usage: "basket uncheck ITEM…",
            details: itemsArgument, writes: true, arguments: .checkedItems,
            run: { try ItemCommands.setChecked($0, .uncheck) }),
        CommandSpec(
            path: ["toggle"], summary: "Check unchecked items, uncheck checked ones.", usage: "basket toggle ITEM…",
            details: itemsArgument, writes: true, arguments: .items, run: { try ItemCommands.setChecked($0, .toggle) }),
        CommandSpec(
            path: ["rm"], summary: "Remove items (adding one again brings it back).", usage: "basket rm ITEM…",
            details: itemsArgument, writes: true, arguments: .items, run: ItemCommands.remove),
        CommandSpec(
            path: ["clear"], summary: "Remove the checked items from the list (one undo brings them back).",
            usage: "basket clear", writes: true, run: ItemCommands.clear),
        CommandSpec(
            path: ["rename"], summary: "Rename an item.",
            usage: "basket rename ITEM NEW-NAME | basket rename ITEM… --to NEW-NAME",
            details: """
                A new name with the same key ('milk' → 'Milk') changes how the item is written; another key moves
                the item to the new name with its fields, and the old name is removed.
                """,
            options: [.to], writes: true, arguments: .items, run: ItemCommands.rename),
        CommandSpec(
            path: ["set"], summary: "Set or clear an item's quantity, note or category.",
            usage: "basket set ITEM "
                + Field.settableItemFields.map { "[\(Option.field($0).label)]" }.joined(separator: " ")
                + " [--shop SHOP,…] [--aisle AISLE [--at-shop SHOP]]",
            details: "An empty value clears the field. Quantities and categories hold up to 256 bytes, notes up to\n"
                + "4,096; control characters are refused. '--shop Lidl' marks the item for Lidl only (at other\n"
                + "shops 'ls' hides it; '--shop \"\"' lets it be bought anywhere again); '--aisle frozen' on a trip\n"
                + "teaches where the item is at that shop (its category elsewhere stays).",
            options: Field.settableItemFields.map(Option.field) + [.forShop, .aisle, .atShop],
            writes: true, arguments: .items,
            run: ItemCommands.set),
        CommandSpec(
            path: ["undo"], summary: "Undo the last change made on this device (again: the one before).",
            usage: "basket undo",
            details: """
                Writes the values the last command replaced, as new changes that sync like any other: an item it
                added is removed again, one it removed comes back as it was, a check, a rename or a quantity goes
                back. The last 50 commands can be undone, one at a time; in the interactive mode, Ctrl-Z.
                A list removed with 'list rm' cannot be brought back: the undo after it says so and changes
                nothing (asked again, it undoes the change before, on whichever list that was, and names it).
                """,
            writes: true, run: ItemCommands.undo),
        CommandSpec(
            path: ["ls"], summary: "Show the list.",
            usage:
                "basket ls [--unchecked | --checked | --all] [--flat | --plain | --format text|markdown] [--at TIME]"
                + " [--at-shop SHOP [--all-shops]]",
            details: """
                Pulls the list first (with --at too) when the last pull is older than 5 s and the server
                answers within 2 s; otherwise says how old this device's copy is ("As of 12 min ago (why)").
                Items to buy come first, grouped by category in the list's aisle order ('basket aisles'), then
                the other categories, then those without one; then checked ones ([x]), by name. On a terminal
                the catalogue's icon stands before a name it knows. '--format markdown' (or 'text') writes what
                is to buy, by aisle, to paste into a chat or a note: 'basket ls --format markdown | wl-copy'.
                At a shop ('--at-shop Lidl', or on a trip: 'basket shopping start --at Lidl') the list is walked
                in that shop's aisle order, items without an aisle last ("(unknown aisle)"), and items marked for
                other shops are left out ('--all-shops' shows them).
                """,
            options: [.unchecked, .checked, .all, .flat, .at, .plain, .format, .atShop, .allShops], output: .data,
            run: ItemCommands.list),
        CommandSpec(
            path: ["aisles"], summary: "Show or set the order of the shop's aisles (categories) for the list.",
            usage: ListCommands.aislesUsage,
            details: """
                'basket aisles set "produce, dairy, bakery"' makes 'basket ls' (and the interactive mode) walk the
                list in that order; categories not named come after, items without a category last. The order
                syncs like the list's title. 'basket set milk --category dairy' puts an item in an aisle; the
                category stays with the item, so adding milk again later puts it there again.
                With --shop, the order of one of the list's shops ('basket shops'): "\(ShopCommands.shopAislesUsage)".
                Each trip there ('basket shopping start --at Lidl', check items off, 'basket shopping done') moves its
                order a quarter of the way towards the order you checked items off in, so two aisles swap after
                three trips that agree; 'aisles --shop Lidl' says how many trips taught it. A pinned aisle (owners)
                keeps its place in the order set by hand; setting the order by hand starts the learning anew.
                """,
            options: [.forShop], writes: true, output: .dataWhenBare, run: ListCommands.aisles),
        CommandSpec(
            path: ["shops"], summary: "List the list's shops, or add, rename or remove one.",
            usage: ShopCommands.shopsUsage,
            details: """
                A list may have shops, each walked in its own aisle order ('basket aisles --shop Lidl'). Items can be
                marked for some shops only ('basket set butter --shop Lidl'); at another shop 'ls' hides them. Two
                devices adding the same shop offline make one shop. Removing a shop lets the items marked for it
                alone be bought anywhere; adding it again brings it back with its order.
                """,
            writes: true, output: .dataWhenBare, run: ShopCommands.shops),
        CommandSpec(
            path: ["usuals"], summary: "The items you buy again and again, and when each is due.",
            usage: ShopCommands.usualsUsage,
            details: """
                An item checked off on at least three trips (check-offs within 12 hours are one) is a usual: its
                interval is the median gap between the last 16 purchases, it is due that long after the last one.
                Due ones come first: "milk — every week, due since Tuesday". 'basket add --due' adds every due
                usual not on the list; due usuals lead the suggestions of the interactive mode. 'dismiss' says
                "not anymore" (the purchases until then stop counting; 'back' undoes it). Computed on this device
                from the history it holds; nothing new is sent.
                """,
            writes: true, output: .dataWhenBare, run: ShopCommands.usuals),
        CommandSpec(
            path: ["search"], summary: "Find items; offers to add what you typed when no item has that name.",
            usage: "basket search QUERY [--limit N]",
            details: """
                Matches without case, accents or width, best first: the item whose name is the query, then
                names starting with it, words starting with its words ("gr yog"), names containing it (also
                across separators: "cocacola"), typos (one slip in a word of 4 to 7 letters, two from 8), then
                fuzzy subsequences. Tokens: is:checked (is:done), is:unchecked (is:todo), in:CATEGORY, -word or
                !word to exclude, "a phrase", ^word for the start of the name.
                With --json: {"query", "offer": {"name"} or null, "results": [{..., "exact", "tier", "score"}]}.
                Exit status 1 when no item matches (as grep), 0 when one does.
                """,
            options: [.limit], output: .data, run: ItemCommands.search),
        CommandSpec(
            path: ["suggest"],
            summary: "What to add: items bought or removed before, then common groceries matching QUERY.",
            usage: "basket suggest [QUERY] [--limit N]",
            details: """
                First the list's own items bought or removed before, "(bought before)", by how often and how
                recently they were added: each add counts half as much every 14 days. With a QUERY, only those
                matching it (same ranking as search), then names from a bundled catalogue of about 100 common
                groceries the list never had, "(catalogue: LANGUAGE)", in the language of LC_ALL, LC_MESSAGES or
                LANG (ar de en es fa fr id it ja ko pt ru tr zh; else English).
                """,
            options: [Option.limit.saying("At most N suggestions (default 10).")], output: .data,
            run: ItemCommands.suggest),
        CommandSpec(
            path: ["history"], summary: "Every write to an item's fields, which one won and why.",
            usage: "basket history ITEM", details: itemArgument, output: .data, arguments: .items,
            run: ItemCommands.history),
        CommandSpec(
            path: ["changes"], summary: "What changed in the list since a time, who did it and how.",
            usage: "basket changes --since TIME",
            details: """
                Each device's step on an item, oldest first: "bob: checked Milk", "you, this device: renamed
                "Milk" to "Oat milk"", with "(since replaced)" where a later write took its place. From the
                history this device keeps, by when writes were made; says so when compaction left the history
                incomplete. TIME: -90s, -30m, -2h, -3d, -1w, now, 2026-12-04, 2026-12-04 18:30[:05], 18:30
                (today if it has passed, else yesterday: the heading says which), or ISO 8601 with a zone.
                Who: an account's name when the server says whose device it was. Pulls the list first, as
                'ls' does, or says how old this device's copy is.
                """,
            options: [.since], output: .data, run: ItemCommands.changes),
        CommandSpec(
            path: ["list", "new"], summary: "Create a list and make it the current one.",
            usage: "basket list new NAME [--unencrypted | --encrypted]", options: [.unencrypted, .encrypted],
            writes: true,
            run: ListCommands.new),
        CommandSpec(
            path: ["list", "use"], summary: "Make a list the current one.", usage: "basket list use NAME",
            arguments: .lists, run: ListCommands.use),
        CommandSpec(
            path: ["list", "rename"], summary: "Rename the current list (or --list NAME).",
            usage: "basket list rename NEW-NAME", writes: true, run: ListCommands.rename),
        CommandSpec(
            path: ["list", "rm"], summary: "Delete a list (an owner: for everyone) or remove a copy from this device.",
            usage: "basket list rm [NAME] [--yes]",
            details: """
                A shared list you own is deleted on the server with its history, members and invites; the other
                members' next sync says so, and their copies stay (read-only) until they remove them. A list on
                this device only, or no longer shared with you, is removed from this device. An editor or a
                viewer cannot delete a shared list: 'basket leave' leaves it.
                """,
            options: [.yes], arguments: .lists, run: ListCommands.removeList),
        CommandSpec(
            path: ["list", "encrypt"], summary: "Encrypt a plain list end to end (owners).",
            usage: "basket list encrypt [NAME]",
            details: """
                Makes the list's keys here, hands them to every member sealed to their account, and leaves the
                server the list's state sealed: from then on it keeps and relays the list's changes without
                being able to read them, and what it kept in clear goes from its store (not from backups made
                before). Every member's device takes the keys at its next sync; a member whose account has no
                key pair yet must sign in again (or leave) first. A list not shared yet is encrypted here.
                """,
            writes: true, arguments: .lists, run: ListCommands.encrypt),
        CommandSpec(
            path: ["list", "archive"], summary: "Archive a list: read-only on every device, out of the way (owners).",
            usage: "basket list archive [NAME]", writes: true, arguments: .lists,
            run: { try ListCommands.archive($0, true) }),
        CommandSpec(
            path: ["list", "unarchive"], summary: "Bring an archived list back.", usage: "basket list unarchive NAME",
            writes: true, arguments: .lists, run: { try ListCommands.archive($0, false) }),
        CommandSpec(
            path: ["list", "language"], summary: "Show or set the language the list's aisles are named in (owners).",
            usage: ListCommands.languageUsage,
            details: """
                A list names its aisles in one language, the one it was created in, whatever the language of
                the device adding to it: a German list files 'milk' under 'Milchprodukte & Eier' on every
                device. An owner may change it ('basket list language de'); aisles already written keep their
                names. A list made before lists had a language takes the one its aisles are named in.
                """,
            writes: true, run: ListCommands.language),
        CommandSpec(
            path: ["lists"], summary: "Show the lists on this replica (archived ones with --all).",
            usage: "basket lists [--all]", options: [Option.all.saying("Archived lists too.")], output: .data,
            run: ListCommands.lists),
        CommandSpec(
            path: ["export"], summary: "Write every operation this replica knows to a file.",
            usage: "basket export FILE|-",
            details: """
                The file holds operations in Basket's text encoding (docs/encoding.md); importing it on another
                replica merges the two. All lists are exported unless --list is given.
                """,
            output: .data, run: ListCommands.export),
        CommandSpec(
            path: ["import"], summary: "Merge operations exported by another replica.", usage: "basket import FILE|-",
            details: "All operations are applied in one transaction, or none (a bad file changes nothing).",
            writes: true, run: ListCommands.importFile),
        CommandSpec(
            path: ["remote"], summary: "Show or set the sync server.",
            usage: SyncCommands.remoteUsage,
            details: """
                The server and the token live in config.json next to the replica (mode 0600). Use https:// for
                a server on another machine: over plain http the password and token travel in clear (a warning
                says so). Redirects are never followed: the token would go along.
                """,
            options: [.autoSync], output: .dataWhenBare, run: SyncCommands.remote),
        CommandSpec(
            path: ["signup"], summary: "Create an account on the server and sign in.",
            usage: "basket signup NAME [--password-stdin] [--device NAME] [--invite CODE]",
            details: """
                The password never leaves this device: the server gets a secret derived from it. The account
                gets a key pair for encrypted lists, and a recovery code is shown once: write it down.
                """,
            options: [.passwordStdin, .device, .invite],
            run: { try AccountCommands.account($0, signUp: true) }),
        CommandSpec(
            path: ["login"], summary: "Sign in to the server.",
            usage: "basket login NAME [--password-stdin] [--device NAME]",
            details: """
                The account's lists come along, its encrypted lists opened with the keys another device of the
                account left (sealed to the account's key pair, which the password opens).
                """,
            options: [.passwordStdin, .device],
            run: { try AccountCommands.account($0, signUp: false) }),
        CommandSpec(
            path: ["logout"], summary: "Sign out (the token is revoked).",
            usage: "basket logout [--everywhere [--yes]]",
            details: "Lists and unsent changes stay on this device; sign in again to send them.",
            options: [
                .everywhere,
                Option.yes.saying("Do not ask first (on a terminal --everywhere asks; a script is not asked)."),
            ],
            run: AccountCommands.logout),
        CommandSpec(
            path: ["devices"], summary: "The devices signed in to your account; sign one out.",
            usage: AccountCommands.devicesUsage,
            details: """
                SUBCOMMANDS:
                  revoke ID        Sign that device out: its next sync is refused (401); its lists and unsent
                                   changes stay on it until it signs in again.
                A device that is not used for 90 days, or signed in more than a year ago, is signed out by itself.
                """,
            options: [.yes], output: .dataWhenBare, run: AccountCommands.devices),
        CommandSpec(
            path: ["password"], summary: "Change your password; every other device is signed out.",
            usage: "basket password [--password-stdin]",
            options: [
                Option.passwordStdin.saying(
                    "Two lines on stdin: the current password, then the new one (else prompts).")
            ],
            run: AccountCommands.password),
        CommandSpec(
            path: ["recover"], summary: "Forgot your password? Set a new one with your recovery code.",
            usage: "basket recover NAME [--password-stdin] [--device NAME]",
            details: """
                The recovery code shown at signup opens the account's key pair again: the encrypted lists stay
                readable. Every other device is signed out; this one is signed in.
                """,
            options: [
                Option.passwordStdin.saying("Two lines on stdin: the recovery code, then the new password."), .device,
            ],
            run: AccountCommands.recover),
        CommandSpec(
            path: ["delete-account"], summary: "Delete your account on the server, for good.",
            usage: AccountCommands.deleteAccountUsage,
            details: """
                Lists only you are in are deleted from the server; a shared list you are the last owner of
                passes to another member (an editor first); you leave the others. Every device is signed
                out. The lists on this device stay, read-only ('basket list rm' removes them).
                """,
            options: [.passwordStdin, .yes], run: AccountCommands.deleteAccount),
        CommandSpec(
            path: ["sync"], summary: "Send local changes and receive everyone else's.",
            usage: "basket sync [--watch | --discard-refused]",
            details: """
                Lists made on this device are registered on the server; lists joined on another device are fetched.
                When the server cannot be reached the changes stay in the outbox for the next sync. A list the
                server refuses (a full list, say) is named with the server's words on stderr and keeps its
                changes; the other lists are synced all the same ('error' in --json).
                Exit status 1 when the server could not be reached, refused a list, or refused changes that stay here.
                """,
            options: [.watch, .discardRefused], run: SyncCommands.sync),
        CommandSpec(
            path: ["share"], summary: "Print an invite code for the current list.",
            usage: SharingCommands.shareUsage,
            details: """
                The code is shown once; the server keeps only its hash. 'basket invites' lists the invites out.
                With --add-only --name NAME: a key that can only add to the list, for a speaker, a shortcut or a
                home automation (shown once, with a curl line). What it sends waits in the list's inbox until a
                member's device syncs and files it as items ('added by NAME'); it stops working when revoked
                ('basket invites revoke ID') or when its maker leaves the list.
                """,
            options: [.role, .uses, .expires, .addOnly, .keyName], output: .data, run: SharingCommands.share),
        CommandSpec(
            path: ["invites"], summary: "The current list's invites that still work; withdraw one.",
            usage: SharingCommands.invitesUsage,
            details: """
                SUBCOMMANDS:
                  revoke ID        Withdraw the invite: its code stops working.
                An owner sees every invite to the list, an editor its own. An invite goes when it is used up,
                when it expires, and when its maker leaves the list or is removed from it.
                """,
            output: .dataWhenBare, run: SharingCommands.invites),
        CommandSpec(
            path: ["members"], summary: "Who shares the current list, and their roles; remove one or change a role.",
            usage: SharingCommands.membersUsage,
            details: """
                SUBCOMMANDS:
                  rm NAME          Remove a member (owners): their copy stays with them, read-only; the invite
                                   codes they joined with stop working.
                  role NAME ROLE   Make a member an owner, editor or viewer (owners). The last owner cannot step
                                   down; a member made a viewer loses the invites it made.
                Editors may change the list and invite; viewers may only read it (their writes are refused).
                A member who is not an owner may add at most half of what the list may hold.
                """,
            options: [
                .removeTheirItemsSince,
                Option.yes.saying("Do not ask first (on a terminal rm asks; a script is not asked)."),
            ],
            output: .dataWhenBare,
            run: SharingCommands.members),
        CommandSpec(
            path: ["leave"], summary: "Leave the current list (it stays here, read-only).",
            usage: "basket leave [--yes]",
            details: """
                Sends what waits first. The last owner cannot leave while others are members: make one an
                owner first ('basket members role NAME owner'). 'basket list rm' then removes the copy here.
                """,
            options: [.yes], run: SharingCommands.leave),
        CommandSpec(
            path: ["join"], summary: "Join a list with an invite code and make it current.", usage: "basket join CODE",
            run: SharingCommands.join),
        CommandSpec(
            path: ["shopping"], summary: "Say you are going shopping for the current list, or done; who else is.",
            usage: ShoppingCommands.usage,
            details: """
                SUBCOMMANDS:
                  (none)           Who is shopping for the list now, and who finished within the hour.
                  start            Tell the others you are going shopping (at a shop with --at); it ends by
                                   itself after 3 hours.
                  done             Tell the others you are done, with how many items this device checked off
                                   since you started ("Olga bought 12 items").
                The others see it in 'basket ls', 'basket status' and 'basket sync --watch', on the phone's
                list, and as a push notification when they asked for one.
                """,
            options: [.shop], output: .dataWhenBare, run: ShoppingCommands.shopping),
        CommandSpec(
            path: ["status"], summary: "Pending changes, last sync, server and clock offset.", usage: "basket status",
            output: .data, run: SyncCommands.status),
        CommandSpec(
            path: ["doctor"], summary: "Check the replica file; rebuild a damaged one.", usage: "basket doctor",
            details: """
                Checks the replica file (SQLite's quick_check). When it is damaged (a disk error, a cut-off
                copy), the file is moved aside as FILE.damaged-DATE, a new one is made with everything that
                can still be read (the changes not yet synced first), and every list of your account is
                pulled again from the server, where those changes are then pushed. Without a server only
                what could be read is kept.
                """,
            run: DoctorCommand.run),
        CommandSpec(
            path: ["completion"], summary: "Print a shell completion script (bash, zsh or fish).",
            usage: "basket completion bash|zsh|fish",
            details: """
                Completes commands and options, and the names of items and lists from the replica. Install:
                  bash   basket completion bash > ~/.local/share/bash-completion/completions/basket
                  zsh    basket completion zsh > "${fpath[1]}/_basket"
                  fish   basket completion fish > ~/.config/fish/completions/basket.fish
                Scripts/install.sh installs all three. In zsh, 'source <(basket completion zsh)' works too.
                """,
            output: .data, run: Completion.script),
        CommandSpec(
            path: ["__complete"], summary: "Names for shell completion.",
            usage: "basket __complete commands|items|lists",
            hidden: true, output: .data, run: Completion.names),
        CommandSpec(
            path: ["__man"], summary: "The man page, in roff.", usage: "basket __man", hidden: true,
            output: .data, run: Completion.manPage),
        CommandSpec(
            path: ["help"], summary: "Show help: of basket, or of a command.", usage: "basket help [COMMAND]",
            output: .data, run: HelpCommand.run),
    ]

    static let itemsArgument = """
        ARGUMENTS:
          ITEM…            One item or several: 'basket check milk bread', 'basket check oat milk, eggs'.
                           The whole text is one item when it is an item's exact name ('oat milk'); else each
                           piece between commas, or each argument, names one. Names are matched without case
                           or accents, exact names first, else by a unique search hit; when one name matches
                           no item or several, they are listed and nothing changes. Several items change in
                           one step: one 'basket undo' takes it back.
          -                Read the names from standard input, one per line (at most 1 MiB): what
                           'basket ls --plain' prints, chosen with fzf or grep.
        """

    static let itemArgument = """
        ARGUMENTS:
          ITEM             The item's name (words are joined). Matched by name without case or accents,
                           else by a unique search hit; when several items match, they are listed and nothing changes.
        """

    static let root = CommandSpec(
        path: [], summary: "Basket: an offline-first shared shopping list.",
        usage: "basket [--db PATH] [--list NAME] [--json] [COMMAND [ARGS]]",
        details: "With no command on a terminal: the interactive search. Type to narrow the list; ↑/↓ move;\n"
            + "Enter adds what you typed ('tea, 2 milk' adds two) or, when an item has exactly that name, toggles\n"
            + "it; the closest item is just below the create row ('did you mean?'): ↓ then Enter takes it. Tab\n"
            + "completes a name or an is: token; Ctrl-S shows one part of the list at a time (to buy, checked, each\n"
            + "aisle); Ctrl-U clears; Ctrl-Z undoes the last change on this list; Esc, Ctrl-D or Ctrl-C (exit status\n"
            + "130) leaves. With a server, each change is sent as it is made, others' appear while it is open,\n"
            + "and the last line says synced, sending, or can't reach the server with how many changes wait.\n"
            + "NO_COLOR turns colour off. Without a terminal it prints the list.\n\n"
            + "COMMANDS:\n"
            + all.filter { !$0.hidden }.map {
                "  " + $0.path.joined(separator: " ").padding(toLength: 15, withPad: " ", startingAt: 0) + $0.summary
            }
            .joined(separator: "\n")
            + "\n\nSee 'basket help COMMAND' (or 'basket COMMAND --help') for a command's options.\n\n"
            + "EXIT STATUS:\n  0 done; 1 failed (and: a search found nothing, a sync left changes the server refused);\n"
            + "  64 a usage error; 130 interrupted (Ctrl-C).",
        run: { _ in })

    /// Finds the command named by the first positional words; global options may come before it.
    static func find(_ arguments: [String]) -> (path: [String], command: CommandSpec?, rest: [String]) {
        var rest = arguments
        var leading: [String] = []
        // Skip global options before the command name.
        while let first = rest.first, first.hasPrefix("-"), first != "-" {
            leading.append(rest.removeFirst())
            let long = shortOptions[first] ?? first
            if globalValueOptions.contains(long), !rest.isEmpty { leading.append(rest.removeFirst()) }
        }
        guard let name = rest.first else { return ([], nil, leading) }
        if rest.count >= 2, let spec = all.first(where: { $0.path == [name, rest[1]] }) {
            return (spec.path, spec, leading + rest.dropFirst(2))
        }
        if let spec = all.first(where: { $0.path == [name] }) {
            return (spec.path, spec, leading + rest.dropFirst())
        }
        if name == "list" {
            let group = CommandSpec(
                path: ["list"], summary: "Manage lists.",
                usage: "basket list new|use|rename|rm|archive|unarchive|language NAME",
                details:
                    "SUBCOMMANDS:\n  new NAME       Create a list and use it.\n  use NAME       Make a list current.\n"
                    + "  rename NAME    Rename the current list.\n  rm [NAME]      Delete a list (see 'basket list rm --help').\n"
                    + "  archive [NAME] Archive a list (read-only, hidden).\n  unarchive NAME Bring it back.",
                run: { context in
                    throw UsageError(
                        message: context.arguments.positionals.isEmpty
                            ? "'basket list' needs a subcommand"
                            : "unknown subcommand '\(context.arguments.positionals[0])'",
                        usage: "basket list new|use|rename|rm|archive|unarchive NAME")
                })
            return (["list"], group, leading + rest.dropFirst())
        }
        return ([], nil, leading + rest)
    }
}
