#ifndef BASKET_CSQLITE_SHIM_H
#define BASKET_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a function-pointer cast macro that Swift cannot import.
static inline sqlite3_destructor_type basket_sqlite_transient(void) { return SQLITE_TRANSIENT; }

static inline int basket_sqlite_bind_text(sqlite3_stmt *stmt, int index, const char *text, int length) {
    return sqlite3_bind_text(stmt, index, text, length, SQLITE_TRANSIENT);
}

static inline int basket_sqlite_bind_blob(sqlite3_stmt *stmt, int index, const void *bytes, int length) {
    return sqlite3_bind_blob(stmt, index, bytes, length, SQLITE_TRANSIENT);
}
#endif
