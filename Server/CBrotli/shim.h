#ifndef BASKET_CBROTLI_SHIM_H
#define BASKET_CBROTLI_SHIM_H
// Brotli (RFC 7932) from Debian's libbrotli-dev: the web client's files are sent in it to
// browsers that accept `br`, a fifth smaller than gzip.
#include <brotli/encode.h>
#include <brotli/decode.h>
#endif
