/* SPDX-License-Identifier: Apache-2.0 */
/* tc_kernel.c - the kernel through iproute2's `tc`: one `tc -batch` per read
 * of a device and per change set of a namespace, each under a time limit. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../../lib/common/proc.h"
#include "tc_internal.h"

/* argv of `tc [-n NETNS] OPTS... -batch -`. */
static void make_argv(const char *netns, const char *opt, const char **argv)
{
    size_t i = 0;
    argv[i++] = "tc";
    if (netns && strcmp(netns, "-") != 0) {
        argv[i++] = "-n";
        argv[i++] = netns;
    }
    argv[i++] = opt;
    argv[i++] = "-batch";
    argv[i++] = "-";
    argv[i] = NULL;
}

/* The first line of tc's complaint, for a message. */
static void first_words(const struct acc_proc_result *r, char *out, size_t size)
{
    const char *s = r->err && r->err[0] ? r->err : (r->out ? r->out : "");
    size_t n = strcspn(s, "\n");
    /* "Command failed -:N" alone says little: take the line before it too */
    if (strncmp(s, "Command failed", 14) == 0 && s[n] == '\n') {
        s += n + 1;
        n = strcspn(s, "\n");
    }
    snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), s);
}

static acc_err run(const char *netns, const char *opt, const char *input, int64_t timeout_ms,
                   struct acc_proc_result *res, const char *what, struct acc_error *err)
{
    const char *argv[8];
    make_argv(netns, opt, argv);
    memset(res, 0, sizeof *res);
    /* tc may exit before reading all its input (a namespace that does not
     * exist): the write must fail with EPIPE, not kill the process, whether
     * or not the host program ignores SIGPIPE.  Blocked in this thread only,
     * and a SIGPIPE raised meanwhile is taken before unblocking. */
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    acc_err rc = acc_proc_run(argv, NULL, input, timeout_ms, TC_MAX_OUTPUT, res, err);
    if (!sigismember(&old, SIGPIPE)) {
        struct timespec zero = {0, 0};
        sigset_t pending;
        sigpending(&pending);
        if (sigismember(&pending, SIGPIPE))
            sigtimedwait(&pipe_set, NULL, &zero);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    if (rc == ACC_ERR_TIMEOUT)
        return acc_error_set(err, ACC_ERR_TIMEOUT,
                             "tc %s in namespace %s: no answer within %lld ms", what, netns,
                             (long long)timeout_ms);
    if (rc)
        return acc_error_set(err, ACC_ERR_ADAPTER, "tc %s in namespace %s: cannot run tc: %s", what,
                             netns, err ? err->msg : "?");
    if (res->status != 0) {
        char words[200];
        first_words(res, words, sizeof words);
        return acc_error_set(err, ACC_ERR_ADAPTER, "tc %s in namespace %s failed (exit %d): %s",
                             what, netns, res->status, words);
    }
    return ACC_OK;
}

acc_err tc_kernel_read(const char *netns, const char *dev, int64_t timeout_ms,
                       struct tc_dev_state *out, struct acc_error *err)
{
    char input[3 * (TC_NAME_MAX + 32)];
    snprintf(input, sizeof input, "qdisc show dev %s\nclass show dev %s\nfilter show dev %s\n", dev,
             dev, dev);
    struct acc_proc_result res;
    char what[TC_NAME_MAX + 16];
    snprintf(what, sizeof what, "show dev %s", dev);
    memset(out, 0, sizeof *out);
    acc_err rc = run(netns, "-s", input, timeout_ms, &res, what, err);
    if (!rc)
        rc = tc_parse_show(res.out ? res.out : "", out, err);
    acc_proc_result_release(&res);
    return rc;
}

acc_err tc_kernel_apply(const char *netns, const char *batch, int64_t timeout_ms,
                        struct acc_error *err)
{
    struct acc_proc_result res;
    acc_err rc = run(netns, "-force", batch, timeout_ms, &res, "change", err);
    acc_proc_result_release(&res);
    return rc;
}
