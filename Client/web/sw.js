// The service worker: keeps this version of the app (the page and every file) so that Basket
// starts without a network, and shows push notifications with the app closed, in words it
// writes from the message and this phone's copy of the list. The API (/v1/…) is never cached:
// the app keeps its data itself. The server serves it as one script with what it imports
// (WebBundler), as it serves app.js.
import { openedNames, openedShops, pushMessage, pushText } from "./push-text.js";
import { open } from "./store.js";
import { ListKeys } from "./seal.js";

const VERSION = "__BASKET_VERSION__";
const CACHE = "basket-" + VERSION;
/** @type {string[]} */
// @ts-expect-error: the server writes the list of this version's files here (WebApp.swift).
const ASSETS = __BASKET_ASSETS__;
/** This worker's scope, typed as what it is. */
const worker = /** @type {ServiceWorkerGlobalScope} */ (/** @type {unknown} */ (self));

worker.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      await cache.addAll(["/", ...ASSETS]);
      await worker.skipWaiting();
    })(),
  );
});

worker.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        if (name.startsWith("basket-") && name !== CACHE) await caches.delete(name);
      }
      await worker.clients.claim();
    })(),
  );
});

worker.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.origin !== worker.location.origin) return;
  if (url.pathname.startsWith("/a/")) {
    // Versioned files never change: the cache answers, the network only for what it lacks (a
    // catalogue file, fetched when its language is first needed), which is then kept.
    event.respondWith(
      caches.match(event.request).then(
        (hit) =>
          hit ??
          fetch(event.request).then(async (response) => {
            if (response.ok && url.pathname.startsWith(`/a/${VERSION}/`)) {
              await (await caches.open(CACHE)).put(event.request, response.clone());
            }
            return response;
          }),
      ),
    );
  } else if (url.pathname === "/") {
    // The page: this version's from the cache at once; the network refreshes the service
    // worker itself when a new version is served (the browser checks sw.js on every start).
    event.respondWith(caches.match("/").then((hit) => hit ?? fetch(event.request)));
  }
});

worker.addEventListener("push", (event) => {
  event.waitUntil(
    (async () => {
      /** @type {unknown} */
      let data = null;
      try {
        data = event.data?.json();
      } catch {
        data = null;
      }
      const message = pushMessage(data);
      if (message === null) return;
      /** @type {{ title: string | null, names: Map<string, string>, keys: string | null }} */
      let known = { title: null, names: new Map(), keys: null };
      try {
        const store = await open();
        known = await store.names(message.list, message.events.flatMap((e) => e.items));
        store.db.close();
      } catch {
        // No copy of the list on this phone (or it cannot be read): the counts still say it.
      }
      // An encrypted list's shop names come sealed: opened here with the phone's keys, or left out.
      let keys;
      try {
        // Kept as the invite's secret (k1.) or as keys (K1.), as the keyring takes them.
        const text = known.keys;
        keys = text === null ? undefined : text.startsWith("k1.") ? await ListKeys.fromInviteSecret(message.list, text) : await ListKeys.fromStorageText(message.list, text);
      } catch {
        keys = undefined;
      }
      if (keys !== undefined || message.events.some((e) => e.shop !== undefined)) {
        const statuses = message.events.map((e) => ({ who: e.who, shop: e.shop ?? null, since: 0, until: 0, ended: null, bought: null }));
        const opened = await openedShops(statuses, message.list, keys);
        message.events.forEach((e, i) => {
          const shop = opened[i].shop;
          if (shop === null) delete e.shop;
          else e.shop = shop;
        });
      }
      // Items the phone's copy lacks yet are named from the message's sealed names.
      for (const [item, name] of await openedNames(message.events, message.list, keys)) {
        if (!known.names.has(item)) known.names.set(item, name);
      }
      const { title, body } = pushText(message, known.title, known.names);
      await worker.registration.showNotification(title, {
        body,
        tag: `basket-${message.list}`,
        data: { list: message.list },
        icon: "/a/" + VERSION + "/icon-192.png",
      });
    })(),
  );
});

worker.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const list = /** @type {{ list?: string }} */ (event.notification.data ?? {}).list;
  event.waitUntil(
    (async () => {
      const url = list && /^[0-9a-f]{32}$/.test(list) ? `/#/list/${list}` : "/";
      const open = await worker.clients.matchAll({ type: "window" });
      const client = open[0];
      if (client) {
        await client.focus();
        client.postMessage({ open: list ?? null });
      } else {
        await worker.clients.openWindow(url);
      }
    })(),
  );
});
