/* clients.h - open connections per client address ([server]
 * client_connections).  A connection opened beyond a client's limit is
 * marked; the server answers its request with 429 and closes it. */
#ifndef ACC_CLIENTS_H
#define ACC_CLIENTS_H

#include <stdbool.h>

struct sockaddr;
struct acc_clients;
struct acc_client;

struct acc_clients *acc_clients_new(unsigned limit);
void acc_clients_free(struct acc_clients *t);

/* Counts a new connection of the address (NULL when out of memory). */
struct acc_client *acc_clients_open(struct acc_clients *t, const struct sockaddr *sa);
/* Whether the client had its limit of connections when this one opened. */
bool acc_client_over_limit(const struct acc_client *c);
void acc_clients_close(struct acc_clients *t, struct acc_client *c);

#endif
