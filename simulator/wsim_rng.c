/* SPDX-License-Identifier: Apache-2.0 */
/* wsim_rng.c - the simulator's random stream: xoshiro256** seeded through
 * splitmix64 from (seed, stream), so every replication and every purpose
 * (workload, policy draws) has an independent, reproducible stream. */
#include "wsim.h"

#include <math.h>

#include "../lib/common/hash.h"

void wsim_rng_seed(struct wsim_rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xd1342543de82ef95ULL + 0x632be59bd9b4e019ULL);
    for (int i = 0; i < 4; i++)
        r->s[i] = acc_splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t wsim_rng_next(struct wsim_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double wsim_rng_uniform(struct wsim_rng *r)
{
    /* 53 random bits, shifted off zero: never 0, never 1. */
    return ((double)(wsim_rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

double wsim_rng_exp(struct wsim_rng *r, double mean)
{
    return -mean * log(wsim_rng_uniform(r));
}

int64_t wsim_rng_int(struct wsim_rng *r, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    uint64_t span = (uint64_t)(hi - lo) + 1;
    /* Rejection keeps it unbiased. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % span;
    uint64_t x;
    do {
        x = wsim_rng_next(r);
    } while (x >= limit);
    return lo + (int64_t)(x % span);
}

size_t wsim_rng_pick(struct wsim_rng *r, const double *cum, size_t n)
{
    double u = wsim_rng_uniform(r) * cum[n - 1];
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cum[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}
