import Foundation
import Postgres

/// The PostgreSQL schema, as numbered migrations. `basket_schema` holds the version reached;
/// `migrate(_:)` applies the missing ones in one transaction under an advisory lock, so
/// instances starting together take turns and the later ones find the work done.
enum PostgresMigrations {
    /// Any number fixed for this program: the advisory lock's key.
    static let lockKey = 0x6261_736b_6574  // "basket"

    static let migrations: [String] = [
        """
        CREATE TABLE accounts(
            id bigserial PRIMARY KEY,
            name text NOT NULL UNIQUE,
            password text NOT NULL
        );
        CREATE TABLE tokens(
            hash text PRIMARY KEY,
            account bigint NOT NULL REFERENCES accounts(id),
            created bigint NOT NULL
        );
        CREATE TABLE lists(
            no bigserial PRIMARY KEY,
            id bytea NOT NULL UNIQUE,
            epoch text NOT NULL,
            last_seq bigint NOT NULL DEFAULT 0,
            compacted_through bigint NOT NULL DEFAULT 0
        );
        CREATE TABLE members(
            list bigint NOT NULL REFERENCES lists(no),
            account bigint NOT NULL REFERENCES accounts(id),
            role text NOT NULL,
            PRIMARY KEY(list, account)
        );
        CREATE INDEX members_by_account ON members(account);
        CREATE TABLE invites(
            code text PRIMARY KEY,
            list bigint NOT NULL REFERENCES lists(no),
            role text NOT NULL,
            created_by bigint NOT NULL,
            expires bigint NOT NULL
        );
        -- The log. A value is NULL (both columns NULL), a boolean or a text. replica is stored with
        -- its top bit flipped so the signed order is the unsigned order (as in the SQLite store).
        CREATE TABLE ops(
            list bigint NOT NULL,
            seq bigint NOT NULL,
            item bytea NOT NULL,
            field smallint NOT NULL,
            ts bigint NOT NULL,
            replica bigint NOT NULL,
            value_text text,
            value_bool boolean,
            received bigint NOT NULL,
            PRIMARY KEY(list, seq)
        );
        CREATE UNIQUE INDEX ops_identity ON ops(list, ts, replica, item, field);

        -- A push: lock the list's row (concurrent pushes to one list, from any instance, wait
        -- here, so sequence numbers have no gaps), drop operations the log has (and repeats within
        -- the batch), number the rest in request order, move the head, and notify every instance.
        CREATE FUNCTION basket_append(
            p_list bytea, p_items text[], p_fields smallint[], p_ts bigint[], p_replicas bigint[],
            p_texts text[], p_bools boolean[], p_received bigint)
        RETURNS TABLE(accepted bigint, last_seq bigint, epoch text) LANGUAGE plpgsql AS $$
        DECLARE
            v_no bigint;
            v_last bigint;
            v_epoch text;
            v_count bigint;
        BEGIN
            SELECT l.no, l.last_seq, l.epoch INTO v_no, v_last, v_epoch FROM lists l WHERE l.id = p_list FOR UPDATE;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'no such list' USING ERRCODE = 'P0002';
            END IF;
            INSERT INTO ops(list, seq, item, field, ts, replica, value_text, value_bool, received)
            SELECT v_no, v_last + row_number() OVER (ORDER BY f.n), f.item, f.field, f.ts, f.replica, f.vt, f.vb,
                p_received
            FROM (
                SELECT DISTINCT ON (u.t, u.r, u.i, u.f) decode(u.i, 'hex') AS item, u.f AS field, u.t AS ts,
                    u.r AS replica, u.vt, u.vb, u.n
                FROM unnest(p_items, p_fields, p_ts, p_replicas, p_texts, p_bools)
                    WITH ORDINALITY AS u(i, f, t, r, vt, vb, n)
                ORDER BY u.t, u.r, u.i, u.f, u.n) f
            WHERE NOT EXISTS (
                SELECT 1 FROM ops o
                WHERE o.list = v_no AND o.ts = f.ts AND o.replica = f.replica AND o.item = f.item
                    AND o.field = f.field)
            ORDER BY f.n;
            GET DIAGNOSTICS v_count = ROW_COUNT;
            IF v_count > 0 THEN
                UPDATE lists SET last_seq = v_last + v_count WHERE no = v_no;
                PERFORM pg_notify('basket_ops', encode(p_list, 'hex') || ' ' || (v_last + v_count));
            END IF;
            RETURN QUERY SELECT v_count, v_last + v_count, v_epoch;
        END
        $$;
        """,
        // 2: operations compaction dropped, per list, so the store's size in operations is a sum
        // over lists instead of a count over the whole log (a scan on a large table).
        """
        ALTER TABLE lists ADD COLUMN dropped bigint NOT NULL DEFAULT 0;
        \(recountDropped)
        """,
        // 3: tokens with a public id, a device name and a last use; invites stored by their code's
        // hash with a number of uses (the plain-text invites of schema 2 are dropped: they expire
        // within days, and no code may stay readable); signup invites.
        """
        ALTER TABLE tokens ADD COLUMN id text, ADD COLUMN device text NOT NULL DEFAULT '',
            ADD COLUMN last_used bigint NOT NULL DEFAULT 0;
        UPDATE tokens SET id = substr(md5(random()::text || hash), 1, 16), last_used = created;
        ALTER TABLE tokens ALTER COLUMN id SET NOT NULL;
        CREATE UNIQUE INDEX tokens_by_id ON tokens(id);
        CREATE INDEX tokens_by_account ON tokens(account);
        DROP TABLE invites;
        CREATE TABLE invites(
            hash text PRIMARY KEY,
            id text NOT NULL UNIQUE,
            list bigint NOT NULL REFERENCES lists(no),
            role text NOT NULL,
            created_by bigint NOT NULL,
            created bigint NOT NULL,
            expires bigint NOT NULL,
            uses_left integer NOT NULL
        );
        CREATE INDEX invites_by_list ON invites(list);
        -- Who used which invite: a member removed from a list cannot come back with a code they used.
        CREATE TABLE invite_uses(
            hash text NOT NULL,
            account bigint NOT NULL,
            PRIMARY KEY(hash, account)
        );
        CREATE TABLE signup_invites(
            hash text PRIMARY KEY,
            created bigint NOT NULL,
            expires bigint NOT NULL,
            uses_left integer NOT NULL
        );
        -- Quotas: what each list holds, kept up to date by pushes and compaction.
        ALTER TABLE lists ADD COLUMN bytes bigint NOT NULL DEFAULT 0, ADD COLUMN items bigint NOT NULL DEFAULT 0;
        CREATE TABLE list_items(
            list bigint NOT NULL,
            item bytea NOT NULL,
            PRIMARY KEY(list, item)
        );
        \(recountUsage)
        DROP FUNCTION IF EXISTS basket_append(bytea, text[], smallint[], bigint[], bigint[], text[], boolean[], bigint);
        -- A push as before, and a list's items and bytes counted; past a quota the push raises
        -- (P0011 items, P0012 bytes) and nothing of it stays.
        CREATE FUNCTION basket_append(
            p_list bytea, p_items text[], p_fields smallint[], p_ts bigint[], p_replicas bigint[],
            p_texts text[], p_bools boolean[], p_received bigint, p_max_items bigint, p_max_bytes bigint)
        RETURNS TABLE(accepted bigint, last_seq bigint, epoch text) LANGUAGE plpgsql AS $$
        DECLARE
            v_no bigint;
            v_last bigint;
            v_epoch text;
            v_items bigint;
            v_bytes bigint;
            v_count bigint;
            v_added_bytes bigint;
            v_added_items bigint;
        BEGIN
            SELECT l.no, l.last_seq, l.epoch, l.items, l.bytes INTO v_no, v_last, v_epoch, v_items, v_bytes
            FROM lists l WHERE l.id = p_list FOR UPDATE;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'no such list' USING ERRCODE = 'P0002';
            END IF;
            WITH inserted AS (
                INSERT INTO ops(list, seq, item, field, ts, replica, value_text, value_bool, received)
                SELECT v_no, v_last + row_number() OVER (ORDER BY f.n), f.item, f.field, f.ts, f.replica, f.vt, f.vb,
                    p_received
                FROM (
                    SELECT DISTINCT ON (u.t, u.r, u.i, u.f) decode(u.i, 'hex') AS item, u.f AS field, u.t AS ts,
                        u.r AS replica, u.vt, u.vb, u.n
                    FROM unnest(p_items, p_fields, p_ts, p_replicas, p_texts, p_bools)
                        WITH ORDINALITY AS u(i, f, t, r, vt, vb, n)
                    ORDER BY u.t, u.r, u.i, u.f, u.n) f
                WHERE NOT EXISTS (
                    SELECT 1 FROM ops o
                    WHERE o.list = v_no AND o.ts = f.ts AND o.replica = f.replica AND o.item = f.item
                        AND o.field = f.field)
                ORDER BY f.n
                RETURNING ops.item, coalesce(octet_length(ops.value_text), 0) + 64 AS bytes),
            new_items AS (
                INSERT INTO list_items(list, item) SELECT DISTINCT v_no, i.item FROM inserted i
                ON CONFLICT DO NOTHING RETURNING 1)
            SELECT (SELECT count(*) FROM inserted), (SELECT coalesce(sum(bytes), 0) FROM inserted),
                (SELECT count(*) FROM new_items)
            INTO v_count, v_added_bytes, v_added_items;
            IF v_added_items > 0 AND v_items + v_added_items > p_max_items THEN
                RAISE EXCEPTION 'the list would hold too many items' USING ERRCODE = 'P0011';
            END IF;
            IF v_added_bytes > 0 AND v_bytes + v_added_bytes > p_max_bytes THEN
                RAISE EXCEPTION 'the list would hold too many bytes' USING ERRCODE = 'P0012';
            END IF;
            IF v_count > 0 THEN
                UPDATE lists SET last_seq = v_last + v_count, items = v_items + v_added_items,
                    bytes = v_bytes + v_added_bytes WHERE no = v_no;
                PERFORM pg_notify('basket_ops', encode(p_list, 'hex') || ' ' || (v_last + v_count));
            END IF;
            RETURN QUERY SELECT v_count, v_last + v_count, v_epoch;
        END
        $$;
        """,
        // 4: the log as a row per push (``PushRecords``), duplicates found in memory
        // (``ListLogs``): no identity index, no list_items. Existing operations go in rows of up
        // to 1,000 in sequence order; a row's time of receipt is its latest operation's, so
        // compaction drops none of them earlier than before.
        """
        CREATE TABLE pushes(
            list bigint NOT NULL,
            last_seq bigint NOT NULL,
            first_seq bigint NOT NULL,
            count integer NOT NULL,
            received bigint NOT NULL,
            ops bytea NOT NULL,
            PRIMARY KEY(list, last_seq)
        );
        -- Kept out of line without compression: pglz spent more CPU on a push's records than it
        -- saved (random item ids compress little).
        ALTER TABLE pushes ALTER COLUMN ops SET STORAGE EXTERNAL;
        INSERT INTO pushes(list, last_seq, first_seq, count, received, ops)
        SELECT list, max(seq), min(seq), count(*), max(received), string_agg(
            int8send(seq) || item || int2send(field) || int8send(ts) || int8send(replica) || CASE
                WHEN value_text IS NOT NULL THEN
                    '\\x03'::bytea || int4send(octet_length(value_text)) || convert_to(value_text, 'UTF8')
                WHEN value_bool THEN '\\x02'::bytea
                WHEN NOT value_bool THEN '\\x01'::bytea
                ELSE '\\x00'::bytea END, ''::bytea ORDER BY seq)
        FROM ops GROUP BY list, (seq - 1) / \(PushRecords.rowLimit);
        DROP FUNCTION IF EXISTS basket_append(
            bytea, text[], smallint[], bigint[], bigint[], text[], boolean[], bigint, bigint, bigint);
        DROP TABLE list_items;
        DROP TABLE ops;
        """,
        // 5: who made each list (the list quota counts it while it exists), when its epoch began
        // (operations stamped before may be relayed by any member after a restore), and the
        // account each replica id of a list belongs to (the first to push it there); an invite's
        // title (the list's, as its maker's device had it).
        """
        ALTER TABLE lists ADD COLUMN created_by bigint;
        ALTER TABLE lists ADD COLUMN epoch_started bigint NOT NULL DEFAULT 0;
        UPDATE lists SET created_by =
            (SELECT min(account) FROM members WHERE members.list = lists.no AND role = 'owner');
        CREATE TABLE replicas(
            list bigint NOT NULL,
            replica bigint NOT NULL,
            account bigint NOT NULL,
            PRIMARY KEY(list, replica)
        );
        ALTER TABLE invites ADD COLUMN title text;
        """,
        // 6: each member's replica ids in order (the members answer reads a member's first ones; a
        // push counts them against the limits) and lists by who made them (an account's list count):
        // index ranges, each bounded by a limit, instead of scans of every row; what each member who
        // is not an owner added to a list (its share of the list's quotas).
        """
        CREATE INDEX replicas_by_account ON replicas(list, account, replica);
        CREATE INDEX lists_by_creator ON lists(created_by);
        CREATE TABLE member_usage(
            list bigint NOT NULL,
            account bigint NOT NULL,
            items bigint NOT NULL,
            bytes bigint NOT NULL,
            PRIMARY KEY(list, account)
        );
        """,
        // 7: Web Push: the server's VAPID key pair, each device's subscriptions and the lists they
        // hear of, each list's next push. Subscriptions end with their token (a cascade), a list
        // with the subscriber's membership (a trigger) or the list itself (a cascade). Who is
        // shopping for which list (a row per member, ended or expired rows kept until the next).
        """
        CREATE TABLE push_key(
            slot integer PRIMARY KEY CHECK (slot = 1),
            private bytea NOT NULL,
            public bytea NOT NULL,
            created bigint NOT NULL
        );
        CREATE TABLE push_subscriptions(
            id text PRIMARY KEY,
            account bigint NOT NULL,
            token text NOT NULL REFERENCES tokens(hash) ON DELETE CASCADE,
            endpoint text NOT NULL UNIQUE,
            p256dh text NOT NULL,
            auth text NOT NULL,
            kinds bigint NOT NULL,
            created bigint NOT NULL
        );
        CREATE INDEX push_subscriptions_by_account ON push_subscriptions(account, created);
        CREATE INDEX push_subscriptions_by_token ON push_subscriptions(token);
        CREATE TABLE push_lists(
            list bigint NOT NULL REFERENCES lists(no) ON DELETE CASCADE,
            subscription text NOT NULL REFERENCES push_subscriptions(id) ON DELETE CASCADE,
            PRIMARY KEY(list, subscription)
        );
        CREATE INDEX push_lists_by_subscription ON push_lists(subscription);
        CREATE TABLE push_slots(
            list bigint PRIMARY KEY REFERENCES lists(no) ON DELETE CASCADE,
            next bigint NOT NULL
        );
        CREATE FUNCTION push_ends_with_membership() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM push_lists WHERE list = OLD.list
                AND subscription IN (SELECT id FROM push_subscriptions WHERE account = OLD.account);
            RETURN OLD;
        END $$;
        CREATE TRIGGER push_ends_with_membership AFTER DELETE ON members
            FOR EACH ROW EXECUTE FUNCTION push_ends_with_membership();
        CREATE TABLE shopping(
            list bigint NOT NULL REFERENCES lists(no) ON DELETE CASCADE,
            account bigint NOT NULL,
            shop text,
            since bigint NOT NULL,
            until bigint NOT NULL,
            ended bigint,
            bought bigint,
            PRIMARY KEY(list, account)
        );
        CREATE FUNCTION shopping_ends_with_membership() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM shopping WHERE list = OLD.list AND account = OLD.account;
            DELETE FROM add_keys WHERE list = OLD.list AND created_by = OLD.account;
            RETURN OLD;
        END $$;
        CREATE TRIGGER shopping_ends_with_membership AFTER DELETE ON members
            FOR EACH ROW EXECUTE FUNCTION shopping_ends_with_membership();
        CREATE TABLE add_keys(
            id text PRIMARY KEY,
            hash text NOT NULL UNIQUE,
            list bigint NOT NULL REFERENCES lists(no) ON DELETE CASCADE,
            name text NOT NULL,
            created_by bigint NOT NULL,
            created bigint NOT NULL
        );
        CREATE INDEX add_keys_by_list ON add_keys(list);
        CREATE TABLE inbox(
            id text PRIMARY KEY,
            list bigint NOT NULL REFERENCES lists(no) ON DELETE CASCADE,
            name text NOT NULL,
            text text NOT NULL,
            at bigint NOT NULL
        );
        CREATE INDEX inbox_by_list ON inbox(list, at);
        """,
        // Lists encrypted end to end (docs/encryption.md): their registers hold sealed values only.
        """
        ALTER TABLE lists ADD COLUMN encrypted boolean NOT NULL DEFAULT false;
        """,
        // 9: each account's key pair for encrypted lists, its private key wrapped on a device
        // (under the password's key and the recovery code's), the hash of what the recovery code
        // signs in with; each member's envelope of a list's keys, gone with the membership.
        """
        ALTER TABLE accounts ADD COLUMN public_key text, ADD COLUMN wrapped_key text,
            ADD COLUMN recovery_key text, ADD COLUMN recovery_hash text;
        CREATE TABLE envelopes(
            list bigint NOT NULL REFERENCES lists(no) ON DELETE CASCADE,
            account bigint NOT NULL,
            envelope text NOT NULL,
            PRIMARY KEY(list, account)
        );
        CREATE FUNCTION envelope_ends_with_membership() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM envelopes WHERE list = OLD.list AND account = OLD.account;
            RETURN OLD;
        END $$;
        CREATE TRIGGER envelope_ends_with_membership AFTER DELETE ON members
            FOR EACH ROW EXECUTE FUNCTION envelope_ends_with_membership();
        """,  // 10: an encrypted list's key epochs: the newest its members hold (`key_epoch`) and the
        // oldest a push may seal under (`push_epoch`; past `key_epoch` while a rotation is due).
        """
        ALTER TABLE lists ADD COLUMN key_epoch bigint NOT NULL DEFAULT 0, ADD COLUMN push_epoch bigint NOT NULL DEFAULT 0;
        """,
        // 11: each encrypted list's newest snapshot, sealed on an owner's device (SnapshotStore).
        """
        CREATE TABLE snapshots(
            list bigint PRIMARY KEY REFERENCES lists(no) ON DELETE CASCADE,
            at_seq bigint NOT NULL,
            snapshot text NOT NULL,
            made bigint NOT NULL
        );
        """,
    ]

    /// Sets every list's items and bytes from its log (migration 3, on the log of then).
    static let recountUsage = """
        DELETE FROM list_items;
        INSERT INTO list_items(list, item) SELECT DISTINCT list, item FROM ops;
        UPDATE lists SET bytes = (SELECT coalesce(sum(coalesce(octet_length(value_text), 0) + 64), 0)
                FROM ops WHERE ops.list = lists.no),
            items = (SELECT count(*) FROM list_items WHERE list_items.list = lists.no);

        """

    /// Sets `lists.dropped` from the log of migration 2: every sequence number given out and no
    /// longer there.
    static let recountDropped =
        "UPDATE lists SET dropped = last_seq - (SELECT count(*) FROM ops WHERE ops.list = lists.no);\n"

    /// Brings the schema to the last version; returns the versions this call applied (empty when
    /// another instance had). Throws when the database has a newer schema than this build knows
    /// (an older build must not write to it).
    static func migrate(_ db: PostgresConnection) throws -> Range<Int> {
        try db.transaction {
            _ = try db.query("SELECT pg_advisory_xact_lock(\(lockKey))")
            try db.execute("CREATE TABLE IF NOT EXISTS basket_schema(version integer NOT NULL)")
            let rows = try db.query("SELECT max(version) FROM basket_schema")
            let found = Int(rows.int64(0, 0))
            guard found <= migrations.count else {
                throw StoreError.newerSchema(found: found, supported: migrations.count)
            }
            for version in found..<migrations.count { try db.execute(migrations[version]) }
            if found < migrations.count {
                _ = try db.query("DELETE FROM basket_schema")
                _ = try db.query("INSERT INTO basket_schema(version) VALUES ($1)", ["\(migrations.count)"])
            }
            return found..<migrations.count
        }
    }
}
