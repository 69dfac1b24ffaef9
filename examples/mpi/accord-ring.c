/* SPDX-License-Identifier: Apache-2.0 */
/* accord-ring - a small MPI program to check a meta-job end to end.
 *
 * Every rank prints one line saying which component (Accord sets
 * ACCORD_COMPONENT per MPMD segment), host and network namespace it runs in;
 * then a token travels once around all ranks and every rank gathers every
 * other's "component@host".  Rank 0 prints the summary line
 *
 *     RING OK ranks=6 components=trace:2,partrace:2,viz:2 token=15
 *
 * (RING FAIL when the token came back wrong), which tests look for.
 *
 * Options, for tests of the launcher:
 *   --exit=N   every rank finishes MPI, then exits with status N
 *   --hang     every rank finishes the ring, then sleeps until killed
 *   --sleep=S  sleep S seconds before MPI_Finalize
 *
 * Built with mpicc.mpich beside accordd; accordd puts its own directory
 * first in the jobs' PATH, so an offer may name it just "accord-ring". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG_LEN 96

/* Appends "name:count" for each run of equal component names in tags. */
static void summarise(const char *tags, int n, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n;) {
        const char *t = tags + (size_t)i * TAG_LEN;
        size_t len = strcspn(t, "@");
        int j = i + 1;
        while (j < n && strncmp(tags + (size_t)j * TAG_LEN, t, len) == 0 &&
               tags[(size_t)j * TAG_LEN + len] == '@')
            j++;
        int w = snprintf(out + used, size - used, "%s%.*s:%d", used ? "," : "", (int)len, t, j - i);
        if (w < 0 || (size_t)w >= size - used)
            break;
        used += (size_t)w;
        i = j;
    }
}

int main(int argc, char **argv)
{
    int exit_code = 0, hang = 0, sleep_s = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--exit=", 7) == 0)
            exit_code = atoi(argv[i] + 7);
        else if (strcmp(argv[i], "--hang") == 0)
            hang = 1;
        else if (strncmp(argv[i], "--sleep=", 8) == 0)
            sleep_s = atoi(argv[i] + 8);
    }

    MPI_Init(&argc, &argv);
    int rank, size, len;
    char host[MPI_MAX_PROCESSOR_NAME];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);

    const char *component = getenv("ACCORD_COMPONENT");
    const char *hydra_host = getenv("MPIR_CVAR_CH3_INTERFACE_HOSTNAME"); /* set by Hydra */
    char netns[64] = "?";
    ssize_t nl = readlink("/proc/self/ns/net", netns, sizeof netns - 1);
    if (nl > 0)
        netns[nl] = '\0';
    /* One write per line, so that ranks' lines do not interleave. */
    char line[2048];
    int used = snprintf(line, sizeof line, "rank %d/%d component %s host %s netns %s pid %d args",
                        rank, size, component ? component : "-", hydra_host ? hydra_host : host,
                        netns, (int)getpid());
    for (int i = 1; i < argc && used > 0 && (size_t)used < sizeof line; i++)
        used += snprintf(line + used, sizeof line - (size_t)used, " [%s]", argv[i]);
    fprintf(stdout, "%.*s\n", (int)sizeof line - 2, line);
    fflush(stdout);

    /* The token starts at 0 and every rank but 0 adds its rank. */
    int token = 0;
    if (size > 1) {
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token += rank;
            MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
        }
    }

    char tag[TAG_LEN];
    snprintf(tag, sizeof tag, "%.40s@%.50s", component ? component : "-",
             hydra_host ? hydra_host : host);
    char *all = malloc((size_t)size * TAG_LEN);
    if (!all)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Allgather(tag, TAG_LEN, MPI_CHAR, all, TAG_LEN, MPI_CHAR, MPI_COMM_WORLD);
    if (rank == 0) {
        char summary[1024];
        summarise(all, size, summary, sizeof summary);
        int expect = size * (size - 1) / 2;
        printf("RING %s ranks=%d components=%s token=%d\n", token == expect ? "OK" : "FAIL", size,
               summary, token);
        fflush(stdout);
    }
    free(all);

    while (hang)
        pause();
    if (sleep_s > 0)
        sleep((unsigned)sleep_s);
    MPI_Finalize();
    return exit_code;
}
