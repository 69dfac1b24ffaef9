/* sql_lock.c - one writer per database file: an exclusive advisory lock
 * (flock) on a lock file beside the database, PATH.lock, taken before the
 * database is opened and held until it is closed (sql_internal.h).
 *
 * Two daemons on one database each keep their own picture of it (the
 * calendars in memory, the open negotiations, what recovery may cancel), so
 * both would book the same nodes and each would release what the other
 * holds.  The second one must not start.
 *
 * Why a file of its own: SQLite locks the database with POSIX (fcntl)
 * locks, which a process loses on every descriptor of the file as soon as
 * it closes any one of them; a descriptor of ours on the database file
 * would drop the locks SQLite holds when closed.  SQLite never opens
 * PATH.lock.
 *
 * Why flock: its lock belongs to the open file description, not to the
 * process, so a second open of the same database in the same process is
 * refused too (two stores on one file in one process book twice just the
 * same); the kernel drops it when the holder dies, however it dies (kill -9
 * leaves nothing stale); and it is not inherited across exec (O_CLOEXEC).
 * The file is never removed: a program that removed it would let a third
 * one lock a new file while a second still holds the old one.
 *
 * The holder writes its pid into the file, so that a refusal names it.
 * Readers that take no lock (the sqlite3 shell, an audit) are not refused. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "sql_internal.h"

/* PATH.lock beside the file the path names: a symbolic link to the
 * database and the database itself share one lock.  A database not made
 * yet has no link to follow. */
static char *lock_path(const char *path)
{
    char *real = realpath(path, NULL);
    const char *base = real ? real : path;
    size_t n = strlen(base) + sizeof ".lock";
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s.lock", base);
    free(real);
    return p;
}

/* "pid 1234" of the holder, from the file; "its pid not written yet" when
 * it has just taken the lock. */
static void holder(int fd, char *out, size_t size)
{
    char buf[32] = "";
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    char *end = NULL;
    long pid = n > 0 ? strtol(buf, &end, 10) : 0;
    if (pid > 0 && end && (*end == '\n' || *end == '\0'))
        snprintf(out, size, "pid %ld", pid);
    else
        snprintf(out, size, "%s", "its pid not written yet");
}

/* The pid into the file.  Only for a refusal's message: a failure here
 * (a full disk) does not keep the database from being used. */
static void write_pid(int fd)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) == 0 && pwrite(fd, buf, (size_t)n, 0) != n && ftruncate(fd, 0) != 0)
        return; /* an unreadable pid is read as none */
}

acc_err sql_lock_take(struct acc_sql *db, struct acc_error *err)
{
    const char *label = db->opt.label, *path = db->opt.path;
    char *lp = lock_path(path);
    if (!lp)
        return acc_error_set(err, ACC_ERR_NOMEM, "out of memory");
    int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        acc_error_set(err, ACC_ERR_STORAGE, "%s %s: cannot open its lock file %s: %s", label, path,
                      lp, strerror(errno));
        free(lp);
        return ACC_ERR_STORAGE;
    }
    int rc;
    while ((rc = flock(fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR)
        ;
    if (rc != 0) {
        int e = errno;
        char who[48];
        holder(fd, who, sizeof who);
        if (e == EWOULDBLOCK)
            acc_error_set(err, ACC_ERR_STORAGE,
                          "%s %s is in use by another program (%s, lock file %s): one database "
                          "has one writer; stop the other one or give this one a database of "
                          "its own",
                          label, path, who, lp);
        else
            acc_error_set(err, ACC_ERR_STORAGE, "%s %s: cannot lock %s: %s", label, path, lp,
                          strerror(e));
        close(fd);
        free(lp);
        return ACC_ERR_STORAGE;
    }
    write_pid(fd);
    free(lp);
    db->lock_fd = fd;
    return ACC_OK;
}

void sql_lock_drop(struct acc_sql *db)
{
    if (db->lock_fd < 0)
        return;
    /* Its pid out first: a later refusal must not name a process that let
     * go.  Closing the last descriptor of the description unlocks it. */
    if (ftruncate(db->lock_fd, 0) != 0) {
        /* an old pid then names no holder: the lock itself is what counts */
    }
    close(db->lock_fd);
    db->lock_fd = -1;
}
