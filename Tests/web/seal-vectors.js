// Checks Tests/Vectors/seal-v1.json against the web client's seal.js, sealed.js and
// platform-crypto.js, in the browser (WebCrypto): the same ids, seals, refusals, account
// secrets, recovery codes, envelopes and invite secrets as the Swift. Returns the count of each
// kind checked and every failure.
async ({ vectors, base }) => {
  const seal = await import(base + "seal.js");
  const snapshots = await import(base + "snapshot.js");
  const conversion = await import(base + "conversion.js");
  const sealed = await import(base + "sealed.js");
  const platform = await import(base + "platform-crypto.js");
  const { hex, fromHex } = await import(base + "sha256.js");
  const failures = [];
  const checked = {};
  const count = (kind) => (checked[kind] = (checked[kind] ?? 0) + 1);
  const fail = (kind, about, expected, got) => failures.push({ kind, about, expected, got });
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  /** Operations alike whatever the order of their keys. */
  const sameOps = (a, b) => Array.isArray(a) && Array.isArray(b) && same(a.map((op) => Object.entries(op).sort()), b.map((op) => Object.entries(op).sort()));
  const epochs = new Map(Object.entries(vectors.epochs).map(([e, k]) => [Number(e), fromHex(k)]));
  const keys = await seal.ListKeys.make(vectors.list, fromHex(vectors.identity), epochs, 1);

  for (const c of vectors.ids) {
    count("ids");
    const item = await keys.itemID(c.key);
    const shop = await keys.shopID(c.key);
    if (item !== c.item || shop !== c.shop) fail("ids", c.key, [c.item, c.shop], [item, shop]);
  }
  for (const c of vectors.plaintexts) {
    count("plaintexts");
    const made = hex(sealed.plaintext(c.value));
    if (made !== c.plaintext) fail("plaintexts", c.value, c.plaintext, made);
    const back = sealed.valueOfPlaintext(fromHex(c.plaintext));
    if (back !== c.value) fail("plaintexts", "read back", c.value, back);
  }
  for (const c of vectors.seals) {
    count("seals");
    const place = sealed.shopPlace(c.op.list, c.op.value);
    if (c.about.includes("Sealed.shopPlace") && !Object.keys(c.op).every((key) => same(place[key], c.op[key]))) {
      fail("seals", c.about + ": the place", c.op, place);
    }
    const made = await keys.seal(c.op, c.epoch);
    if (!same(made, c.sealed)) fail("seals", c.about, c.sealed, made);
    if (!sealed.isWellFormed(c.sealed)) fail("seals", c.about + ": well formed", true, false);
    const opened = await keys.open(c.sealed);
    if (!same(opened, c.op)) fail("seals", c.about + ": opened", c.op, opened);
  }
  for (const c of vectors.refused) {
    count("refused");
    try {
      const opened = await keys.open(c.sealed);
      fail("refused", c.about, c.error, opened);
    } catch (error) {
      if (error.code !== c.error) fail("refused", c.about, c.error, String(error.code ?? error));
    }
  }
  for (const c of vectors.accounts) {
    count("accounts");
    const made = await seal.stretch(c.password, c.account, c.iterations);
    if (hex(made.login) !== c.login || hex(made.wrap) !== c.wrap) fail("accounts", c.account, [c.login, c.wrap], [hex(made.login), hex(made.wrap)]);
  }
  for (const c of vectors.wraps) {
    count("wraps");
    const made = await seal.wrap(fromHex(c.secret), fromHex(c.key), c.purpose, fromHex(c.nonce));
    if (made !== c.wrapped) fail("wraps", c.purpose, c.wrapped, made);
    const back = hex(await seal.unwrap(c.wrapped, fromHex(c.key), c.purpose));
    if (back !== c.secret) fail("wraps", c.purpose + ": unwrapped", c.secret, back);
    try {
      await seal.unwrap(c.wrapped, fromHex(c.key), c.purpose + "!");
      fail("wraps", c.purpose + ": another purpose", "forged", "opened");
    } catch (error) {
      if (error.code !== "forged") fail("wraps", c.purpose + ": another purpose", "forged", String(error));
    }
  }
  for (const c of vectors.recovery) {
    count("recovery");
    const code = seal.recoveryCode(fromHex(c.bytes));
    if (code !== c.code) fail("recovery", c.bytes, c.code, code);
    for (const typed of [c.code, ...c.typed]) {
      const key = hex(await seal.recoveryKey(typed));
      if (key !== c.key) fail("recovery", typed, c.key, key);
      const secret = await seal.recoverySecret(typed);
      if (secret !== c.secret) fail("recovery secret", typed, c.secret, secret);
    }
  }
  for (const bad of vectors.badCodes) {
    count("badCodes");
    try {
      seal.recoveryBytes(bad);
      fail("badCodes", bad, "badKey", "read");
    } catch (error) {
      if (error.code !== "badKey") fail("badCodes", bad, "badKey", String(error));
    }
  }
  for (const c of vectors.envelopes) {
    count("envelopes");
    const recipient = await platform.x25519KeyPair(fromHex(c.recipient));
    const ephemeral = await platform.x25519KeyPair(fromHex(c.ephemeral));
    if (hex(recipient.publicKey) !== c.recipientPublic || hex(ephemeral.publicKey) !== c.ephemeralPublic) {
      fail("envelopes", "public keys", [c.recipientPublic, c.ephemeralPublic], [hex(recipient.publicKey), hex(ephemeral.publicKey)]);
    }
    const made = await seal.sealEnvelope(keys, recipient.publicKey, ephemeral, fromHex(c.nonce));
    if (made !== c.envelope) fail("envelopes", "sealed", c.envelope, made);
    const opened = await seal.openEnvelope(c.envelope, vectors.list, recipient);
    const got = [hex(opened.identity), opened.current, [...opened.epochs].map(([e, k]) => [e, hex(k)])];
    const expected = [vectors.identity, 1, Object.entries(vectors.epochs).map(([e, k]) => [Number(e), k])];
    if (!same(got, expected)) fail("envelopes", "opened", expected, got);
    const stranger = await platform.generateX25519KeyPair();
    try {
      await seal.openEnvelope(c.envelope, vectors.list, stranger);
      fail("envelopes", "a stranger", "forged", "opened");
    } catch (error) {
      if (error.code !== "forged") fail("envelopes", "a stranger", "forged", String(error));
    }
  }
  {
    count("invite");
    if (keys.inviteSecret !== vectors.invite) fail("invite", "secret", vectors.invite, keys.inviteSecret);
    const joined = await seal.ListKeys.fromInviteSecret(vectors.list, vectors.invite);
    if (joined.current !== 1 || (await joined.itemID("milk")) !== vectors.ids[0].item) fail("invite", "joined", vectors.ids[0].item, await joined.itemID("milk"));
    for (const bad of vectors.badInvites) {
      count("badInvites");
      try {
        await seal.ListKeys.fromInviteSecret(vectors.list, bad);
        fail("badInvites", bad, "badKey", "read");
      } catch (error) {
        if (error.code !== "badKey") fail("badInvites", bad, "badKey", String(error));
      }
    }
  }
  for (const c of vectors.snapshots) {
    count("snapshots");
    try {
      const opened = await snapshots.openSnapshot(keys, c.snapshot, c.cursor);
      if (c.error !== undefined || !sameOps(opened, c.ops)) fail("snapshots", c.about, c.ops ?? c.error, opened);
    } catch (error) {
      if (error.code !== c.error) fail("snapshots", c.about, c.error, String(error.code ?? error));
    }
  }
  {
    // Sealed here (gzip's bytes are the browser's own: opened, not compared), opened here and padded.
    count("snapshotRoundTrip");
    const state = vectors.snapshots[0].ops;
    const text = await snapshots.sealSnapshot(keys, state, 42);
    const back = await snapshots.openSnapshot(keys, text, 42);
    if (!sameOps(back, state)) fail("snapshotRoundTrip", "opened", state, back);
    const payload = sealed.parseSnapshot(text)?.payload;
    if (payload === undefined || (payload.length - 28) % snapshots.SNAPSHOT_BUCKET !== 0) fail("snapshotRoundTrip", "padded", 0, payload?.length);
  }
  for (const c of vectors.conversions) {
    count("conversions");
    const made = await conversion.converted(keys, c.ops, c.known);
    if (!sameOps(made, c.converted)) fail("conversions", c.about, c.converted, made);
  }
  return { checked, failures };
};
