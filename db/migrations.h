/* SPDX-License-Identifier: Apache-2.0 */
/* migrations.h - the files db/migrations/NNNN_name.sql in name order, compiled in;
 * migration i brings the schema (PRAGMA user_version) from i to i + 1. */
#ifndef ACC_MIGRATIONS_H
#define ACC_MIGRATIONS_H

#include "../lib/common/embed.h"

extern const struct acc_embedded acc_migrations[];
extern const size_t acc_migrations_count;
/* db/migrations/postgres/NNNN_name.sql: PostgreSQL's text of the migrations
 * of the same name where SQLite's is not PostgreSQL's. */
extern const struct acc_embedded acc_pg_migrations[];
extern const size_t acc_pg_migrations_count;

#endif
