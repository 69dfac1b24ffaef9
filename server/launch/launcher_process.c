/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_process.c - the hosts of sites with launch = batch: they stay in
 * the one mpiexec (one MPI_COMM_WORLD), and Hydra starts their proxies
 * through the site's batch system.
 *
 * mpiexec runs with `-launcher rsh -launcher-exec DIR/launch.sh`.  Measured
 * with MPICH 4.0.2: Hydra then runs `launch.sh HOST "/usr/bin/hydra_pmi_proxy"
 * --control-port ... --proxy-id N` once per host, the proxy's path in double
 * quotes (meant for a remote shell).  launch.sh takes the words apart again
 * and, for each host of a launch = batch site, execs the command the site's
 * adapter composed (process_command: srun --reservation=ID --nodelist=HOST
 * -N1 -n1, qsub -sync y -ar ID -l h=HOST -b y) with the proxy and its
 * arguments; other hosts go as the configured launcher would take them (fork:
 * here, ssh: ssh -x HOST).  launch.sh runs as mpiexec does, as the job's
 * account: the batch system takes the account from it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../lib/common/buf.h"
#include "launcher_int.h"

/* What the adapters are asked for, its last word dropped again: the proxy's
 * path is Hydra's to give. */
#define PLACEHOLDER "/usr/bin/hydra_pmi_proxy"

bool acc_launcher_has_batch(const struct acc_launcher *l, const struct acc_launch_hosts *hosts)
{
    for (size_t i = 0; i < hosts->n_comps; i++) {
        const struct acc_site_cfg *site = acc_config_site(l->cfg, hosts->comps[i].comp->site);
        if (site && site->batch)
            return true;
    }
    return false;
}

/* One host's case line: exec env ENV... COMMAND... "$@". */
static acc_err host_case(struct acc_launcher *l, struct acc_launcher_entry *e,
                         const struct acc_alloc_component *c, const char *host, const char *account,
                         struct acc_buf *b, struct acc_error *err)
{
    struct acc_job job = {.key = c->reservation,
                          .local_id = c->local_id,
                          .nodes = 1,
                          .ppn = c->ppn,
                          .executable = PLACEHOLDER,
                          .directory = e->run.directory,
                          .end = e->ag.end,
                          .host = host,
                          .user = account};
    struct acc_command cmd;
    if (!l->hooks.process_command)
        return acc_error_set(err, ACC_ERR_UNSUPPORTED, "no site can start processes here");
    acc_err rc = l->hooks.process_command(l->hooks.ctx, c->site, &job, &cmd, err);
    if (rc) {
        acc_error_prefix(err, "component %s, host %s", c->name, host);
        return rc;
    }
    if (cmd.argc < 2 || strcmp(cmd.argv[cmd.argc - 1], PLACEHOLDER) != 0) {
        acc_command_release(&cmd);
        return acc_error_set(err, ACC_ERR_INTERNAL,
                             "site %s: its process command does not end with the program", c->site);
    }
    acc_buf_putc(b, '\n');
    acc_buf_shell_quote(b, host);
    acc_buf_puts(b, ")\n    exec /usr/bin/env");
    for (size_t i = 0; i < cmd.n_env; i++) {
        acc_buf_putc(b, ' ');
        acc_buf_shell_quote(b, cmd.env[i]);
    }
    for (size_t i = 0; i + 1 < cmd.argc; i++) {
        acc_buf_putc(b, ' ');
        acc_buf_shell_quote(b, cmd.argv[i]);
    }
    acc_buf_puts(b, " \"$@\"\n    ;;");
    acc_command_release(&cmd);
    return ACC_OK;
}

acc_err acc_launcher_batch_script(struct acc_launcher *l, struct acc_launcher_entry *e,
                                  const struct acc_launch_hosts *hosts, const char *account,
                                  char *path, size_t len, struct acc_error *err)
{
    const char *launcher = l->cfg->launch.launcher ? l->cfg->launch.launcher : "fork";
    bool ssh = strcmp(launcher, "ssh") == 0;
    if ((!ssh && strcmp(launcher, "fork") != 0) || l->cfg->launch.launcher_exec)
        return acc_error_set(err, ACC_ERR_CONFIG,
                             "launch = batch needs [launch] launcher = fork or ssh, without "
                             "launcher_exec");
    struct acc_buf b = ACC_BUF_INIT;
    acc_buf_printf(&b,
                   "#!/bin/sh\n# written by accordd for agreement %s: Hydra's -launcher-exec\n"
                   "host=$1\nshift\n# Hydra quotes the proxy's path for a remote shell\n"
                   "eval \"set -- $*\"\ncase $host in",
                   e->id);
    acc_err rc = ACC_OK;
    for (size_t i = 0; !rc && i < hosts->n_comps; i++) {
        const struct acc_launch_comp *lc = &hosts->comps[i];
        const struct acc_site_cfg *site = acc_config_site(l->cfg, lc->comp->site);
        for (size_t k = 0; !rc && site && site->batch && k < lc->n_hosts; k++)
            rc = host_case(l, e, lc->comp, lc->hosts[k], account, &b, err);
    }
    acc_buf_printf(&b, "\n*)\n    %s\n    ;;\nesac\n",
                   ssh ? "exec ssh -x \"$host\" \"$@\"" : "exec \"$@\"");
    if (!rc && !acc_buf_ok(&b))
        rc = acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    if (!rc && !acc_launcher_write_file(e->run.directory, "launch.sh", acc_buf_str(&b), err))
        rc = ACC_ERR_IO;
    acc_buf_release(&b);
    if (rc)
        return rc;
    snprintf(path, len, "%s/launch.sh", e->run.directory);
    if (chmod(path, 0755) != 0)
        return acc_error_set(err, ACC_ERR_IO, "cannot make %s executable", path);
    return ACC_OK;
}
