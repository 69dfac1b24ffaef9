/* SPDX-License-Identifier: Apache-2.0 */
/* sql_lock.c - one writer per database file: an exclusive advisory lock
 * (flock) on a lock file beside the database, PATH.lock, and one on the
 * database file itself, both taken before the database is opened and held
 * until it is closed (sql_internal.h).
 *
 * Two daemons on one database each keep their own picture of it (the
 * calendars in memory, the open negotiations, what recovery may cancel), so
 * both would book the same nodes and each would release what the other
 * holds.  The second one must not start.
 *
 * Why two locks: PATH.lock goes with the name, the lock on the file with
 * the file.  A hard link (ln accord.db other.db) is another name of the
 * same file, with another PATH.lock beside it: only the file's own lock
 * sees that other.db is in use (SQLite would even give it a write-ahead log
 * of its own, other.db-wal, and the two logs would corrupt the file).  A
 * name whose file is replaced (a restore renamed over it) while a daemon
 * still has the old one is the same name: only PATH.lock sees that.  A
 * symbolic link is both: its PATH.lock goes beside the file it points to,
 * and its file is that file.  A database not made yet is made empty by the
 * lock's open (SQLite takes an empty file for a new database), so that two
 * names of a file being made still meet on one file.
 *
 * SQLite locks the database with POSIX (fcntl) locks, which a process
 * loses on every descriptor of the file as soon as it closes any one of
 * them.  flock locks are another kind: SQLite's and ours never conflict,
 * and the sqlite3 shell and other readers are not refused.  But our
 * descriptor of the database file must not be closed while this process
 * has SQLite connections to it: it is opened before the first connection
 * and closed after the last (sql_lock_drop comes last in acc_sql_close),
 * and a second open in this process of a file it holds (through another
 * name) is refused before a descriptor is opened, from the list of the
 * files it holds.  SQLite never opens PATH.lock.
 *
 * Why flock: its lock belongs to the open file description, not to the
 * process, so a second open of the same database in the same process is
 * refused too (two stores on one file in one process book twice just the
 * same); the kernel drops it when the holder dies, however it dies (kill -9
 * leaves nothing stale); and it is not inherited across exec (O_CLOEXEC).
 * The lock file is never removed: a program that removed it would let a
 * third one lock a new file while a second still holds the old one.
 *
 * The holder writes its pid into the lock file, so that a refusal names
 * it; a refusal on the file itself names the pid /proc/locks gives for its
 * lock and, when /proc lets us see it, the name the holder opened it by.
 * Readers that take no lock (the sqlite3 shell, an audit) are not refused. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

/* ------------------------------------------------------- the file itself */

/* The databases of this process whose file it holds, by held_next. */
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static struct acc_sql *held;

static struct acc_sql *held_by_us(dev_t dev, ino_t ino)
{
    pid_t self = getpid();
    struct acc_sql *d = held;
    while (d && (d->file_dev != dev || d->file_ino != ino || d->file_pid != self))
        d = d->held_next;
    return d;
}

/* The pid of the process with a flock on the file (dev, ino), from
 * /proc/locks ("1: FLOCK  ADVISORY  WRITE 4711 fe:00:1234 0 EOF"); 0 when
 * none is seen (a pid of another pid namespace is shown as none). */
static long flock_holder(dev_t dev, ino_t ino)
{
    FILE *f = fopen("/proc/locks", "re");
    char line[256], kind[16];
    long pid = 0, p;
    unsigned maj, min;
    unsigned long long i;
    while (f && !pid && fgets(line, sizeof line, f)) {
        if (sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%llu", kind, &p, &maj, &min, &i) == 5 &&
            strcmp(kind, "FLOCK") == 0 && maj == major(dev) && min == minor(dev) &&
            i == (unsigned long long)ino && p > 0)
            pid = p;
    }
    if (f)
        fclose(f);
    return pid;
}

/* The name process pid has the file (dev, ino) open by, into out ("" when
 * /proc does not show it: another user's process). */
static void name_in(long pid, dev_t dev, ino_t ino, char *out, size_t size)
{
    char dir[64], fd_path[384];
    out[0] = '\0';
    snprintf(dir, sizeof dir, "/proc/%ld/fd", pid);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && !out[0] && (e = readdir(d))) {
        struct stat st;
        snprintf(fd_path, sizeof fd_path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || stat(fd_path, &st) != 0 || st.st_dev != dev || st.st_ino != ino)
            continue;
        ssize_t n = readlink(fd_path, out, size - 1);
        out[n > 0 ? n : 0] = '\0';
    }
    if (d)
        closedir(d);
}

static acc_err file_refused(const struct acc_sql *db, long pid, const char *as,
                            struct acc_error *err)
{
    char who[48] = "its pid not known";
    if (pid > 0)
        snprintf(who, sizeof who, "pid %ld", pid);
    return acc_error_set(err, ACC_ERR_STORAGE,
                         "%s %s is in use by another program (%s, which has the same file open "
                         "%s%s): one database has one writer; stop the other one or give this "
                         "one a database of its own",
                         db->opt.label, db->opt.path, who, as[0] ? "as " : "under another name",
                         as);
}

/* The exclusive flock on the database file itself into db->file_fd, under
 * held_lock. */
static acc_err file_lock(struct acc_sql *db, struct acc_error *err)
{
    const char *file = db->url; /* the path itself, not the one shown */
    /* This process's own, first: the check needs no descriptor, whose
     * close would drop the locks of the SQLite connections of the other
     * open. */
    struct stat st;
    struct acc_sql *mine = stat(file, &st) == 0 ? held_by_us(st.st_dev, st.st_ino) : NULL;
    if (mine)
        return file_refused(db, (long)getpid(), mine->opt.path, err);
    int fd = open(file, O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || fstat(fd, &st) != 0) {
        acc_error_set(err, ACC_ERR_STORAGE, "%s %s: cannot open it to lock it: %s", db->opt.label,
                      db->opt.path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return ACC_ERR_STORAGE;
    }
    /* Another name of a file of ours, made between the stat and the open:
     * the descriptor is left open, since closing it would drop the SQLite
     * locks of the other open (one descriptor lost, in so rare a race). */
    if ((mine = held_by_us(st.st_dev, st.st_ino)))
        return file_refused(db, (long)getpid(), mine->opt.path, err);
    int rc;
    while ((rc = flock(fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR)
        ;
    if (rc != 0) {
        int e = errno;
        if (e == EWOULDBLOCK) {
            long pid = flock_holder(st.st_dev, st.st_ino);
            char as[PATH_MAX] = "";
            if (pid > 0)
                name_in(pid, st.st_dev, st.st_ino, as, sizeof as);
            file_refused(db, pid, as, err);
        } else {
            acc_error_set(err, ACC_ERR_STORAGE, "%s %s: cannot lock it: %s", db->opt.label,
                          db->opt.path, strerror(e));
        }
        close(fd); /* no connection of this process to the file: nothing lost */
        return ACC_ERR_STORAGE;
    }
    db->file_fd = fd;
    db->file_dev = st.st_dev;
    db->file_ino = st.st_ino;
    db->file_pid = getpid();
    db->held_next = held;
    held = db;
    return ACC_OK;
}

static void file_unlock(struct acc_sql *db)
{
    if (db->file_fd < 0)
        return;
    pthread_mutex_lock(&held_lock);
    struct acc_sql **p = &held;
    while (*p && *p != db)
        p = &(*p)->held_next;
    if (*p)
        *p = db->held_next;
    pthread_mutex_unlock(&held_lock);
    close(db->file_fd);
    db->file_fd = -1;
}

/* ------------------------------------------------------------ both locks */

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
    pthread_mutex_lock(&held_lock);
    acc_err r = file_lock(db, err);
    pthread_mutex_unlock(&held_lock);
    if (r)
        sql_lock_drop(db);
    return r;
}

void sql_lock_drop(struct acc_sql *db)
{
    /* The file's first: a daemon starting meanwhile takes PATH.lock first,
     * and finds the file free once it has that. */
    file_unlock(db);
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
