#ifndef BASKET_CCRYPTO_SHIM_H
#define BASKET_CCRYPTO_SHIM_H
#include <openssl/sha.h>
#include <openssl/rand.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/ec.h>
#include <openssl/bn.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/core_names.h>
#include <openssl/err.h>

// Selections for EVP_PKEY_fromdata: macros built of other macros, which Swift does not import.
static const int basket_pkey_public_key = EVP_PKEY_PUBLIC_KEY;
static const int basket_pkey_keypair = EVP_PKEY_KEYPAIR;

// Parameter names for OSSL_PARAM_BLD, which keeps the name's pointer until it makes the
// parameters: C strings that live as long as the program (a Swift string passed for a
// `const char *` lives only during the call).
static const char *const basket_param_group = OSSL_PKEY_PARAM_GROUP_NAME;
static const char *const basket_param_public_key = OSSL_PKEY_PARAM_PUB_KEY;
static const char *const basket_param_private_key = OSSL_PKEY_PARAM_PRIV_KEY;
static const char *const basket_group_p256 = "P-256";
static const char *const basket_key_type_ec = "EC";  // EVP_PKEY_CTX_new_from_name keeps it too
#endif
