#ifndef BASKET_CMICROHTTPD_SHIM_H
#define BASKET_CMICROHTTPD_SHIM_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
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

// MHD_start_daemon is variadic: Swift cannot call it. This wrapper fixes the options we use.
static inline struct MHD_Daemon *basket_mhd_start(
    unsigned int flags, int listen_fd,
    MHD_AccessHandlerCallback handler, void *handler_cls,
    MHD_RequestCompletedCallback completed, void *completed_cls,
    unsigned int thread_pool_size, unsigned int connection_timeout_seconds,
    unsigned int connection_limit, size_t connection_memory_limit, unsigned int per_ip_connection_limit)
{
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket) listen_fd,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
        MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
        MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_connection_limit,
        MHD_OPTION_UNESCAPE_CALLBACK, basket_unescape, NULL,
        MHD_OPTION_END);
}

// The peer's address as text (IPv4 or IPv6) into `out`; 0 on success. MHD_get_connection_info is variadic.
static inline int basket_mhd_client_address(struct MHD_Connection *connection, char *out, socklen_t length)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return -1;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        return inet_ntop(AF_INET, &((const struct sockaddr_in *) address)->sin_addr, out, length) ? 0 : -1;
    }
    if (address->sa_family == AF_INET6) {
        return inet_ntop(AF_INET6, &((const struct sockaddr_in6 *) address)->sin6_addr, out, length) ? 0 : -1;
    }
    return -1;
}
#endif
