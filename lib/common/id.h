/* SPDX-License-Identifier: Apache-2.0 */
/* id.h - random, unguessable identifiers for agreements. */
#ifndef ACC_ID_H
#define ACC_ID_H

#include <stdbool.h>

#include "error.h"

/* 80 random bits from OpenSSL's CSPRNG in lowercase base32: 16 characters. */
#define ACC_ID_LEN 16

acc_err acc_id_new(char out[ACC_ID_LEN + 1], struct acc_error *err);

/* True when s has the form of an id (so that garbage never reaches SQL). */
bool acc_id_valid(const char *s);

#endif
