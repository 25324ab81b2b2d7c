#ifndef BASKET_CPOSTGRES_SHIM_H
#define BASKET_CPOSTGRES_SHIM_H
#include <libpq-fe.h>

// PG_DIAG_SQLSTATE is a character constant macro ('C'): spelled out for Swift.
static inline const char *basket_pq_sqlstate(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_SQLSTATE);
}
#endif
