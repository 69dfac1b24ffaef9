/* SPDX-License-Identifier: Apache-2.0 */
/* reservation.c - releasing what a reservation owns (reservation.h). */
#include "reservation.h"

#include <stdlib.h>
#include <string.h>

void acc_reservation_release(struct acc_reservation *r)
{
    if (!r)
        return;
    free(r->nodes);
    memset(r, 0, sizeof *r);
}
