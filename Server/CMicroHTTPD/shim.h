#ifndef BASKET_CMICROHTTPD_SHIM_H
#define BASKET_CMICROHTTPD_SHIM_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <sys/epoll.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <microhttpd.h>

// Percent-decodes a URL or query value in place, as libmicrohttpd does by default, except one
// holding an encoded NUL ("%00"): decoded, it would cut the path short ("/v1/lists/ID%00/ops"
// would reach the route of "/v1/lists/ID"), so it is left as sent and matches no route.
static size_t basket_unescape(void *cls, struct MHD_Connection *connection, char *value)
{
    (void) cls;
    (void) connection;
    for (const char *p = value; p[0] != '\0'; p++) {
        if (p[0] == '%' && p[1] == '0' && p[2] == '0') return strlen(value);
    }
    return MHD_http_unescape(value);
}

// MHD_start_daemon is variadic: Swift cannot call it. This wrapper fixes the options we use: one
// daemon driven by the caller's own loop (no internal thread; see HTTPListener), on a listening
// socket it shares with the caller's other daemons. The connection limits are the caller's too
// (`accept_policy` refuses, `notify_connection` counts): libmicrohttpd's own count only one daemon.
static inline struct MHD_Daemon *basket_mhd_start(
    unsigned int flags, int listen_fd,
    MHD_AccessHandlerCallback handler, void *handler_cls,
    MHD_RequestCompletedCallback completed, void *completed_cls,
    MHD_AcceptPolicyCallback accept_policy, MHD_NotifyConnectionCallback notify_connection, void *connection_cls,
    unsigned int connection_timeout_seconds, unsigned int connection_limit, size_t connection_memory_limit)
{
    return MHD_start_daemon(flags, 0, accept_policy, connection_cls, handler, handler_cls,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket) listen_fd,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
        MHD_OPTION_NOTIFY_CONNECTION, notify_connection, connection_cls,
        MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
        MHD_OPTION_UNESCAPE_CALLBACK, basket_unescape, NULL,
        MHD_OPTION_END);
}

// The epoll descriptor a daemon without an internal thread waits on; -1 if none.
// MHD_get_daemon_info is variadic.
static inline int basket_mhd_epoll_fd(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD);
    return info == NULL ? -1 : info->epoll_fd;
}

// The daemon that serves a connection. MHD_get_connection_info is variadic.
static inline struct MHD_Daemon *basket_mhd_connection_daemon(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_DAEMON);
    return info == NULL ? NULL : info->daemon;
}

// A client address's group for per-address limits as two 64-bit words: an IPv4 address (as its
// IPv4-mapped IPv6 form), or an IPv6 address's /64 network (the low word 0); 0 on success.
// The socket of a connection, or -1.
static inline int basket_mhd_connection_fd(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

static inline int basket_address_key(const struct sockaddr *address, uint64_t *high, uint64_t *low)
{
    if (address == NULL) return -1;
    if (address->sa_family == AF_INET) {
        *high = 0;
        *low = 0xffff00000000ULL | (uint64_t) ntohl(((const struct sockaddr_in *) address)->sin_addr.s_addr);
        return 0;
    }
    if (address->sa_family == AF_INET6) {
        const unsigned char *bytes = ((const struct sockaddr_in6 *) address)->sin6_addr.s6_addr;
        uint64_t h = 0, l = 0;
        for (int i = 0; i < 8; i++) h = (h << 8) | bytes[i];
        for (int i = 8; i < 16; i++) l = (l << 8) | bytes[i];
        *high = h;
        // IPv4-mapped addresses stay whole; any other IPv6 address counts as its /64 network,
        // which one subscriber commonly holds whole.
        *low = (h == 0 && (l >> 32) == 0xffff) ? l : 0;
        return 0;
    }
    return -1;
}

// The peer's address of a connection, as basket_address_key makes it; 0 on success.
static inline int basket_mhd_connection_key(struct MHD_Connection *connection, uint64_t *high, uint64_t *low)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL) return -1;
    return basket_address_key(info->client_addr, high, low);
}

// The peer's address as text (IPv4 or IPv6) into `out`, and its group as basket_address_key makes
// it into `high` and `low` (`*grouped` set to 1 when it could); 0 when the text was written. One
// connection-info look-up for both. MHD_get_connection_info is variadic.
static inline int basket_mhd_client_address(
    struct MHD_Connection *connection, char *out, socklen_t length, uint64_t *high, uint64_t *low, int *grouped)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    *grouped = 0;
    if (info == NULL || info->client_addr == NULL) return -1;
    const struct sockaddr *address = info->client_addr;
    *grouped = basket_address_key(address, high, low) == 0;
    if (address->sa_family == AF_INET) {
        return inet_ntop(AF_INET, &((const struct sockaddr_in *) address)->sin_addr, out, length) ? 0 : -1;
    }
    if (address->sa_family == AF_INET6) {
        return inet_ntop(AF_INET6, &((const struct sockaddr_in6 *) address)->sin6_addr, out, length) ? 0 : -1;
    }
    return -1;
}

// Sets a connection's idle timeout in seconds (0: none). MHD_set_connection_option is variadic.
static inline void basket_mhd_set_timeout(struct MHD_Connection *connection, unsigned int seconds)
{
    (void) MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds);
}
#endif
