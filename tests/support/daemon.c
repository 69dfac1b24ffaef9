/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "http_client.h"

/* daemon_start; with out, standard error too and at log level info, all of
 * it up to the "listening on" line into out. */
static pid_t start(const char *accordd, const char *ini, const char *db, char *base,
                   size_t base_size, char *out, size_t out_size)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        /* Dies with the test: a test that failed (or was killed at its
         * time limit) before it stopped the daemon left it running, on
         * the test's stderr, which held ctest up until its time limit. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(127);
        dup2(fd[1], STDOUT_FILENO);
        if (out)
            dup2(fd[1], STDERR_FILENO);
        close(fd[0]);
        close(fd[1]);
        execl(accordd, "accordd", "--config", ini, "--db", db, "--listen", "127.0.0.1:0",
              "--log-level", out ? "info" : "error", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char buf[4096] = "";
    size_t used = 0;
    base[0] = '\0';
    while (used + 1 < sizeof buf) {
        struct pollfd p = {fd[0], POLLIN, 0};
        if (poll(&p, 1, 20000) <= 0)
            break;
        ssize_t n = read(fd[0], buf + used, sizeof buf - used - 1);
        if (n <= 0)
            break;
        used += (size_t)n;
        buf[used] = '\0';
        const char *at = strstr(buf, "listening on ");
        const char *nl = at ? strchr(at, '\n') : NULL;
        if (nl) {
            at += strlen("listening on ");
            snprintf(base, base_size, "%.*s", (int)(nl - at), at);
            break;
        }
    }
    close(fd[0]);
    if (out)
        snprintf(out, out_size, "%s", buf);
    return base[0] ? pid : -1;
}

pid_t daemon_start(const char *accordd, const char *ini, const char *db, char *base,
                   size_t base_size)
{
    return start(accordd, ini, db, base, base_size, NULL, 0);
}

pid_t daemon_start_logged(const char *accordd, const char *ini, const char *db, char *base,
                          size_t base_size, char *out, size_t out_size)
{
    return start(accordd, ini, db, base, base_size, out, out_size);
}

char *daemon_call(const char *base, const char *method, const char *path, const char *body,
                  long *status)
{
    char u[512];
    snprintf(u, sizeof u, "%s%s", base, path);
    struct http_reply r;
    const char *hdr[] = {"Content-Type: application/xml", NULL};
    if (http_do(method, u, body, body ? strlen(body) : 0, hdr, &r) != 0) {
        *status = -1;
        return NULL;
    }
    *status = r.status;
    char *b = r.body;
    r.body = NULL;
    http_reply_free(&r);
    return b;
}

const char daemon_offer[] =
    "<wsag:AgreementOffer xmlns:wsag=\"http://schemas.ggf.org/graap/2007/03/ws-agreement\" "
    "xmlns:co=\"urn:accord:coalloc:1\"><wsag:Name>alpha-beta</wsag:Name><wsag:Context>"
    "<wsag:AgreementInitiator>tester</wsag:AgreementInitiator>"
    "<wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>"
    "<wsag:Terms><wsag:All>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"schedule\" wsag:ServiceName=\"metajob\">"
    "<co:Schedule><co:Duration>PT1H</co:Duration></co:Schedule></wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"a\" wsag:ServiceName=\"metajob\"><co:Component>"
    "<co:Site>alpha</co:Site><co:Nodes>4</co:Nodes></co:Component>"
    "</wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"b\" wsag:ServiceName=\"metajob\"><co:Component>"
    "<co:Site>beta</co:Site><co:Nodes>4</co:Nodes></co:Component>"
    "</wsag:ServiceDescriptionTerm>"
    "<wsag:ServiceDescriptionTerm wsag:Name=\"ab\" wsag:ServiceName=\"metajob\"><co:Link>"
    "<co:Between>a</co:Between><co:And>b</co:And><co:Bandwidth>100</co:Bandwidth></co:Link>"
    "</wsag:ServiceDescriptionTerm>"
    "</wsag:All></wsag:Terms></wsag:AgreementOffer>";
