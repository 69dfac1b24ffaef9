/* SPDX-License-Identifier: Apache-2.0 */
/* hash.h - the two non-cryptographic hashes of the tree, once: splitmix64
 * (a 64-bit mixer and random stream) and FNV-1a (64-bit, of a string).
 *
 * Their exact bits are part of outputs: the simulated sites' background
 * load and local ids, accord-sim's random streams and results, the
 * policies' random ties, the planner's seeds.  Changing either changes
 * those, so both stay as published (splitmix64: Steele, Lea and Flood,
 * "Fast splittable pseudorandom number generators", 2014; FNV-1a: Fowler,
 * Noll and Vo, 64-bit offset basis and prime).  Static inline: each is a
 * few instructions in hot loops (hash maps, the simulator).
 */
#ifndef ACC_HASH_H
#define ACC_HASH_H

#include <stddef.h>
#include <stdint.h>

/* The golden-ratio increment of splitmix64; also spreads small seeds. */
#define ACC_GOLDEN64 0x9e3779b97f4a7c15ULL

#define ACC_FNV1A64_BASIS 1469598103934665603ULL /* 0xcbf29ce484222325 */
#define ACC_FNV1A64_PRIME 1099511628211ULL       /* 0x100000001b3 */

/* The next 64 bits of the splitmix64 stream whose state is *state. */
static inline uint64_t acc_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += ACC_GOLDEN64);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* FNV-1a of n bytes at p (binary keys: addresses). */
static inline uint64_t acc_fnv1a64_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = ACC_FNV1A64_BASIS;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * ACC_FNV1A64_PRIME;
    return h;
}

/* FNV-1a of the bytes of s (up to its NUL). */
static inline uint64_t acc_fnv1a64(const char *s)
{
    uint64_t h = ACC_FNV1A64_BASIS;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * ACC_FNV1A64_PRIME;
    return h;
}

#endif
