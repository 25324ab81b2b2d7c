#ifndef BASKET_CCRYPTO_SHIM_H
#define BASKET_CCRYPTO_SHIM_H
#include <openssl/sha.h>
#include <openssl/rand.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#endif
