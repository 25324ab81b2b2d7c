import BasketCore
import Foundation

/// One option of the command line, declared once: its spelling, the value it takes, its
/// one-letter spelling and what it does. The parser, a command's help, shell completion and the
/// man page are drawn from it, and a command reads it by it (`context.arguments.has(.yes)`), never
/// by a string of its own.
struct Option: Sendable {
    /// The long spelling: `--quantity`.
    let name: String
    /// What the value is called in help (`Q`, `TIME`, `on|off`); nil for a flag.
    let value: String?
    /// The one-letter spelling (`-y`), taken where the long one is.
    let short: String?
    /// What it does, as help says it (lines apart by "\n").
    let about: String

    init(_ name: String, value: String? = nil, short: String? = nil, _ about: String) {
        self.name = name
        self.value = value
        self.short = short
        self.about = about
    }

    /// The same option, said otherwise for one command (`--yes` asks before different things).
    func saying(_ about: String) -> Option { Option(name, value: value, short: short, about) }

    /// How help lists it: "  -u, --unchecked  Only items still to buy.", a long spelling with
    /// its text on the next line.
    var helpLines: String {
        let label = (short.map { "\($0), " } ?? "") + self.label
        let indent = String(repeating: " ", count: 19)
        let lead =
            label.count <= 15
            ? "  " + label + String(repeating: " ", count: 17 - label.count) : "  " + label + "\n" + indent
        return lead + about.split(separator: "\n").joined(separator: "\n" + indent)
    }

    /// The option as a usage line writes it: `--to NAME`, `--yes`.
    var label: String { name + (value.map { " \($0)" } ?? "") }

    /// The first sentence of what it does, for a shell's completion menu.
    var summary: String {
        let text = about.split(separator: "\n").joined(separator: " ")
        return text.range(of: ". ").map { String(text[..<$0.lowerBound]) + "." } ?? text
    }
}

extension Option {
    // MARK: Every command's

    static let db = Option(
        "--db", value: "PATH",
        "The replica: a directory (basket.sqlite inside) or a .sqlite/.db file.\n"
            + "Default: $BASKET_HOME, else $XDG_DATA_HOME/basket, else ~/.local/share/basket.")
    static let list = Option("--list", value: "NAME", short: "-l", "Work on this list instead of the current one.")
    static let json = Option("--json", "Print one JSON object and nothing else (docs/cli-json.md has each shape).")
    static let noSync = Option(
        "--no-sync",
        "Keep this command's changes here, also from a running 'sync --watch', until\n"
            + "'basket sync' (or a write without --no-sync) sends them (see 'basket remote').")
    static let quiet = Option(
        "--quiet", short: "-q", "Print no report of what was done (\"Added milk\"); data and errors still print.")
    static let help = Option("--help", short: "-h", "Show help ('basket help COMMAND' too).")
    static let version = Option("--version", "Show the version.")

    /// The options every command takes, in the order help lists them.
    static let global: [Option] = [.db, .list, .json, .noSync, .quiet, .help, .version]

    // MARK: Items

    static let from = Option(
        "--from", value: "FILE", "Read names from FILE ('-' for stdin), one per line, taken verbatim.")
    static let category = Option("--category", value: "C", "Put every item named in this aisle (category).")
    static let addNote = Option.field(.note).saying("A note for every item added ('for: lasagne').")
    static let to = Option("--to", value: "NAME", "The new name (then every argument before it is the item).")
    static let unchecked = Option("--unchecked", short: "-u", "Only items still to buy.")
    static let checked = Option("--checked", short: "-c", "Only items crossed off.")
    static let all = Option("--all", short: "-a", "Everything, removed items included.")
    static let flat = Option("--flat", "One list by name, without the aisle groups.")
    static let format = Option(
        "--format", value: "FORMAT",
        "The items to buy as text to copy or share, by aisle: 'text' (- 2 milk) or\n'markdown' (- [ ] 2 milk).")
    static let plain = Option(
        "--plain",
        "Names only, one per line, nothing else: for pipes\n('basket ls --plain -u | fzf | basket check -').")
    static let at = Option(
        "--at", value: "TIME",
        """
        The list as it stood then, from the history this device keeps: every write
        made at or before TIME that it holds (one made offline earlier and received
        later is in). TIME: -2h, -30m, -3d, 2026-12-04 18:30, 18:30 (today if
        it has passed, else yesterday: the heading says which), ISO 8601.
        Says so when compaction left the history incomplete.
        """)
    static let since = Option("--since", value: "TIME", "The changes made since TIME (below: how to write it).")
    static let shop = Option(
        "--at", value: "SHOP",
        "The shop you are going to: the others see it; one of the list's shops\n('basket shops') is walked in its order, which learns from the trip."
    )
    static let forShop = Option(
        "--shop", value: "SHOP",
        "The shop (one of 'basket shops'); for 'set', the shops the item is bought at,\nseparated by commas ('' for anywhere)."
    )
    static let atShop = Option(
        "--at-shop", value: "SHOP", "The list as you walk this shop: in its aisle order, items for other shops hidden.")
    static let allShops = Option("--all-shops", "At a shop, the items marked for other shops too.")
    static let aisle = Option(
        "--aisle", value: "AISLE",
        "Where the item is at the shop you are at (a trip, or --at-shop): taught for\nthat shop, its category elsewhere stays."
    )
    static let due = Option("--due", "Add every usual that is due and not on the list ('basket usuals').")
    static let addOnly = Option(
        "--add-only", "A key that can only add to the list (a speaker, a shortcut, a home\nautomation), not an invite.")
    static let encrypted = Option(
        "--encrypted",
        "Encrypted end to end, as every new list is unless --unencrypted: the server keeps\nand relays the list's changes but can read none of them (docs/encryption.md)."
    )
    static let unencrypted = Option(
        "--unencrypted",
        "Not encrypted end to end: the server can read the list (a server set to require\nencryption refuses it)."
    )
    static let keyName = Option("--name", value: "NAME", "With --add-only: what the key is for (\"Kitchen speaker\").")
    static let limit = Option("--limit", value: "N", short: "-n", "At most N results.")
    /// `basket set`'s option for a field of an item (`--quantity QUANTITY`).
    static func field(_ field: Field) -> Option {
        Option(
            "--" + field.rawValue, value: field.rawValue.uppercased(), "The item's \(field.rawValue) (empty: cleared).")
    }

    // MARK: Accounts and sync

    static let autoSync = Option(
        "--auto-sync", value: "on|off",
        """
        With a server, every command that changes a list sends the change before
        it exits (waiting about 2 s; what is not sent by then waits for the next sync),
        and the interactive mode sends each change at once. On by default; off keeps
        changes here until 'basket sync' (one command: --no-sync).
        """)
    static let passwordStdin = Option(
        "--password-stdin", "The password is the first line of stdin (else $BASKET_PASSWORD, else a prompt).")
    static let device = Option(
        "--device", value: "NAME", "How this device appears in 'basket devices' (default: \"basket on HOSTNAME\").")
    static let invite = Option(
        "--invite", value: "CODE", "A signup invite, for a server that takes new accounts only with one.")
    static let everywhere = Option("--everywhere", "Sign out every device of the account, this one included.")
    static let yes = Option("--yes", short: "-y", "Do not ask first (on a terminal it asks; a script is not asked).")
    static let watch = Option(
        "--watch", short: "-w",
        """
        Stay connected to the current list and print changes as they arrive (Ctrl-C stops);
        what other basket processes write to it is sent within a second, except
        what they wrote with --no-sync.
        """)
    static let discardRefused = Option(
        "--discard-refused",
        """
        Drop the changes the server refuses (made as a viewer, or to a list no longer
        shared with you; 'basket status' lists them) and put those lists back to the
        server's state, so that every device shows the same.
        """)

    // MARK: Sharing

    static let role = Option(
        "--role", value: "ROLE", short: "-r",
        "editor (default: may change the list), viewer (may only read it) or owner.")
    static let uses = Option("--uses", value: "N", "How many people may join with the code (default 1, at most 100).")
    static let expires = Option(
        "--expires", value: "TIME", "How long it works: 30m, 12h, 2d (default 7 days, at most 30d).")
    static let removeTheirItemsSince = Option(
        "--remove-their-items-since", value: "TIME",
        "With rm: also remove the items they added since TIME (-2h, 18:30,\n"
            + "2026-12-04, …), in one step 'basket undo' takes back.")
}
