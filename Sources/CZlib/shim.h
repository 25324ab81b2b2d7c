#ifndef BASKET_CZLIB_SHIM_H
#define BASKET_CZLIB_SHIM_H
#include <zlib.h>

// deflateInit2 / inflateInit2 are macros: Swift cannot import them.
static inline int basket_deflate_init_gzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

static inline int basket_inflate_init_auto(z_stream *stream) {
    return inflateInit2(stream, 15 + 32);
}
#endif
