/* SPDX-License-Identifier: Apache-2.0 */
/* test_slurm_jobs.c - the slurm adapter's jobs against recorded Slurm
 * outputs: sbatch into the reservation with the job's variables exported,
 * where a job stands (scontrol show job), scancel, exit codes read
 * strictly.  Part of test_slurm (its suite "slurm_jobs"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "buf.h"
#include "http_client.h" /* read_file */
#include "slurm_fake.h"
#include "testutil.h"

static void test_submit(void)
{
    scene("submit");
    put("sbatch.out", "4242\n");
    struct acc_adapter *ad = open_slurm(NULL);
    const char *args[] = {"--steps=500", "two words", "it's"};
    struct acc_job job = {.key = "acc-j",
                          .local_id = "acc-j",
                          .nodes = 2,
                          .ppn = 4,
                          .executable = "/opt/metatrace/trace",
                          .args = args,
                          .n_args = 3,
                          .end = acc_now() + 3600};
    char id[64];
    struct acc_error err;
    ACC_ASSERT_OK(acc_adapter_submit(ad, &job, id, sizeof id, &err));
    CU_ASSERT_STRING_EQUAL(id, "4242");
    char *c = calls();
    CU_ASSERT_PTR_NOT_NULL(strstr(c, "sbatch --parsable --reservation=acc-j --nodes=2 "
                                     "--ntasks-per-node=4 --time=60"));
    free(c);
    char path[512];
    snprintf(path, sizeof path, "%s/sbatch.stdin", scenario);
    char *script = read_file(path, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(script);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(script, "exec '/opt/metatrace/trace' '--steps=500' 'two words' 'it'\\''s'"));
    free(script);
    acc_adapter_close(ad);
}

/* A job for one host (a Hydra proxy) is pinned to it. */
static void test_submit_host(void)
{
    scene("submit-host");
    put("sbatch.out", "4243\n");
    struct acc_adapter *ad = open_slurm(NULL);
    struct acc_job job = {.key = "acc-h",
                          .nodes = 1,
                          .ppn = 1,
                          .executable = "/usr/bin/hydra_pmi_proxy",
                          .end = acc_now() + 60,
                          .host = "sitea-n02"};
    char id[64];
    struct acc_error err;
    ACC_ASSERT_OK(acc_adapter_submit(ad, &job, id, sizeof id, &err));
    char *c = calls();
    CU_ASSERT_PTR_NOT_NULL(strstr(c, "--ntasks-per-node=1 --time=1 --nodelist=sitea-n02 "));
    free(c);
    job.host = "a b";
    CU_ASSERT_EQUAL(acc_adapter_submit(ad, &job, id, sizeof id, &err), ACC_ERR_INVALID);
    acc_adapter_close(ad);
}

/* The process command: srun into the reservation on the host, with the
 * adapter's SLURM_CONF; nothing is run; bad jobs are refused. */
static void test_process_command(void)
{
    scene("process");
    struct acc_adapter *ad = open_slurm(NULL);
    CU_ASSERT_TRUE(acc_adapter_has(ad, ACC_CAP_PROCESS));
    const char *args[] = {"--control-port", "10.0.0.1:5000"};
    struct acc_job job = {.key = "acc-p",
                          .local_id = "acc-p",
                          .executable = "/usr/bin/hydra_pmi_proxy",
                          .args = args,
                          .n_args = 2,
                          .directory = "/shared/jobs/p1",
                          .end = acc_now() + 600,
                          .host = "sitea-n03",
                          .user = "alice"};
    struct acc_command cmd;
    struct acc_error err;
    ACC_ASSERT_OK(acc_adapter_process_command(ad, &job, &cmd, &err));
    struct acc_buf b = ACC_BUF_INIT;
    for (size_t i = 0; i < cmd.argc; i++)
        acc_buf_printf(&b, "%s%s", i ? " " : "", cmd.argv[i]);
    const char *line = acc_buf_str(&b);
    CU_ASSERT_PTR_NOT_NULL(strstr(line, "/srun --reservation=acc-p --nodelist=sitea-n03 -N1 -n1 "
                                        "--job-name=accord-acc-p --chdir=/shared/jobs/p1 "
                                        "--time=10 /usr/bin/hydra_pmi_proxy --control-port "
                                        "10.0.0.1:5000"));
    CU_ASSERT_PTR_NULL(strstr(line, "--uid")); /* the caller runs it as the account */
    bool has_conf = false, tz = false;
    for (size_t i = 0; i < cmd.n_env; i++) {
        has_conf |= strncmp(cmd.env[i], "SLURM_CONF=", 11) == 0;
        tz |= strcmp(cmd.env[i], "TZ=UTC") == 0;
    }
    CU_ASSERT_TRUE(has_conf && tz);
    acc_buf_release(&b);
    acc_command_release(&cmd);
    struct acc_job bad = job;
    bad.host = NULL;
    CU_ASSERT_EQUAL(acc_adapter_process_command(ad, &bad, &cmd, &err), ACC_ERR_INVALID);
    bad = job;
    bad.executable = "hydra_pmi_proxy";
    CU_ASSERT_EQUAL(acc_adapter_process_command(ad, &bad, &cmd, &err), ACC_ERR_INVALID);
    bad = job;
    bad.local_id = NULL;
    CU_ASSERT_EQUAL(acc_adapter_process_command(ad, &bad, &cmd, &err), ACC_ERR_INVALID);
    bad = job;
    bad.user = "al ice";
    CU_ASSERT_EQUAL(acc_adapter_process_command(ad, &bad, &cmd, &err), ACC_ERR_INVALID);
    acc_adapter_close(ad);
}

/* The job's variables are exported by the script, quoted. */
static void test_submit_env(void)
{
    scene("submit-env");
    put("sbatch.out", "77;sitea\n");
    struct acc_adapter *ad = open_slurm(NULL);
    const char *env[] = {"ACCORD_COMPONENT=a b", "PATH=/opt/x:/usr/bin", "bad", NULL};
    struct acc_job job = {.key = "acc-e",
                          .nodes = 1,
                          .ppn = 1,
                          .executable = "prog",
                          .end = acc_now() + 60,
                          .env = env};
    char id[64];
    ACC_ASSERT_OK(acc_adapter_submit(ad, &job, id, sizeof id, NULL));
    CU_ASSERT_STRING_EQUAL(id, "77");
    char path[512];
    snprintf(path, sizeof path, "%s/sbatch.stdin", scenario);
    char *script = read_file(path, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(script);
    CU_ASSERT_PTR_NOT_NULL(strstr(script, "export ACCORD_COMPONENT='a b'\n"
                                          "export PATH='/opt/x:/usr/bin'\nexec 'prog'\n"));
    CU_ASSERT_PTR_NULL(strstr(script, "bad"));
    free(script);
    acc_adapter_close(ad);
}

/* Where a job stands, from scontrol show job; scancel. */
static void test_job_status_and_cancel(void)
{
    scene("job-status");
    struct acc_adapter *ad = open_slurm(NULL);
    struct acc_job_status st;
    struct acc_error err;
    put("scontrol-show.1.out", "JobId=5 JobName=sbatch JobState=RUNNING Reason=None "
                               "ExitCode=0:0 RunTime=00:00:03\n");
    put("scontrol-show.2.out", "JobId=5 JobName=sbatch JobState=FAILED Reason=NonZeroExitCode "
                               "ExitCode=3:0 RunTime=00:00:04\n");
    put("scontrol-show.3.out", "JobId=5 JobState=CANCELLED ExitCode=0:15\n");
    put("scontrol-show.4.err", "slurm_load_jobs error: Invalid job id specified\n");
    put("scontrol-show.4.rc", "1\n");
    put("scontrol-show.5.err", "slurm_load_jobs error: Unable to contact slurm controller "
                               "(connect failure)\n");
    put("scontrol-show.5.rc", "1\n");
    put("scontrol-show.6.out", "JobId=5 JobName=x\n");
    ACC_ASSERT_OK(acc_adapter_job_status(ad, "5", &st, &err));
    CU_ASSERT_FALSE(st.done);
    CU_ASSERT_STRING_EQUAL(st.state, "RUNNING");
    ACC_ASSERT_OK(acc_adapter_job_status(ad, "5", &st, &err));
    CU_ASSERT_TRUE(st.done);
    CU_ASSERT_EQUAL(st.exit_status, 3);
    CU_ASSERT_EQUAL(st.signal, 0);
    ACC_ASSERT_OK(acc_adapter_job_status(ad, "5", &st, &err));
    CU_ASSERT_TRUE(st.done);
    CU_ASSERT_EQUAL(st.signal, 15);
    ACC_ASSERT_OK(acc_adapter_job_status(ad, "5", &st, &err)); /* forgotten: ended, unknown */
    CU_ASSERT_TRUE(st.done);
    CU_ASSERT_EQUAL(st.exit_status, -1);
    CU_ASSERT_EQUAL(acc_adapter_job_status(ad, "5", &st, &err), ACC_ERR_UNAVAILABLE);
    CU_ASSERT_EQUAL(acc_adapter_job_status(ad, "5", &st, &err), ACC_ERR_ADAPTER);
    char *c = calls();
    CU_ASSERT_PTR_NOT_NULL(strstr(c, "scontrol show job -o 5"));
    free(c);

    put("scancel.1.err", "scancel: error: Kill job error on job id 5: Invalid job id specified\n");
    put("scancel.1.rc", "1\n");
    put("scancel.2.err", "scancel: error: Kill job error on job id 5: Unable to contact slurm "
                         "controller (connect failure)\n");
    put("scancel.2.rc", "1\n");
    ACC_ASSERT_OK(acc_adapter_job_cancel(ad, "5", &err));
    CU_ASSERT_EQUAL(acc_adapter_job_cancel(ad, "5", &err), ACC_ERR_UNAVAILABLE);
    acc_adapter_close(ad);
}

/* An exit code that is not "status:signal" is an adapter error, never a
 * status of 0 (that is, success). */
static void test_job_exit_code_strict(void)
{
    scene("job-exit-code");
    struct acc_adapter *ad = open_slurm(NULL);
    struct acc_job_status st;
    struct acc_error err;
    static const char *const garbage[] = {"x:y",   "3",    "3:",    ":0",  "-1:0",
                                          "256:0", "3:0x", "3:999", "+3:0"};
    size_t n = sizeof garbage / sizeof garbage[0];
    for (size_t i = 0; i < n; i++) {
        char file[64];
        snprintf(file, sizeof file, "scontrol-show.%zu.out", i + 1);
        put(file, "JobId=5 JobName=x JobState=FAILED Reason=NonZeroExitCode ExitCode=%s\n",
            garbage[i]);
    }
    put("scontrol-show.10.out", "JobId=5 JobState=COMPLETED ExitCode=255:127 RunTime=00:00:01\n");
    put("scontrol-show.11.out", "JobId=5 JobState=COMPLETED RunTime=00:00:01\n");
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(acc_adapter_job_status(ad, "5", &st, &err), ACC_ERR_ADAPTER);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "ExitCode"));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, garbage[i]));
        CU_ASSERT_NOT_EQUAL(st.exit_status, 0);
    }
    ACC_ASSERT_OK(acc_adapter_job_status(ad, "5", &st, &err));
    CU_ASSERT_TRUE(st.done);
    CU_ASSERT_EQUAL(st.exit_status, 255);
    CU_ASSERT_EQUAL(st.signal, 127);
    /* No exit code at all: ended, status unknown. */
    ACC_ASSERT_OK(acc_adapter_job_status(ad, "5", &st, &err));
    CU_ASSERT_TRUE(st.done);
    CU_ASSERT_EQUAL(st.exit_status, -1);
    acc_adapter_close(ad);
}

const struct acc_test_case acc_slurm_jobs_tests[] = {
    {"submit: exported variables", test_submit_env},
    {"submit: one host pinned with --nodelist", test_submit_host},
    {"process_command: srun into the reservation on the host", test_process_command},
    {"job status and cancel", test_job_status_and_cancel},
    {"job exit codes are read strictly", test_job_exit_code_strict},
    {"submit into the reservation", test_submit},
    {NULL, NULL},
};
