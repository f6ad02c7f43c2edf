/* SPDX-License-Identifier: Apache-2.0 */
/* The shm provider's fabric file in /dev/shm (shm_fabric.h): who may own it, who removes it.
 *
 * Ownership. The name holds the user's uid, and only a regular file of this user, with one
 * link, is ever mapped (created O_EXCL|O_NOFOLLOW, mode 0600; a wider mode of our own file is
 * narrowed). /dev/shm is world-writable, so another user can create our name first: that file is
 * skipped with a WARN naming it, its owner and the fix, and the fabric lives at NAME+1 (..+7),
 * the first that is absent or ours; every process of the user scans the same order, so they
 * meet there. All eight taken: an error naming the file and the fix.
 *
 * Lifetime. Every process that maps the fabric holds a shared flock(2) on its own open file
 * description for as long as it keeps it. Closing (rail_shm_fabric_close, or at exit for the
 * ones never closed) tries to take the lock exclusively without waiting: only the last holder
 * gets it, and it removes the name (when the name is still this very file). An opener that opened
 * a name being removed sees a different or no file at that path once it holds its lock and starts
 * over. A holder killed with SIGKILL or leaving through _exit releases its lock in the kernel but
 * removes nothing: the next process of the user that opens that fabric finds a file nobody
 * holds, starts it from zeros (ports up, no endpoints), never from a dead run's state, and
 * removes it when it leaves last. No process removes a fabric it does not hold: flock(2) turns an
 * exclusive lock into a shared one in two steps, so a process that has just started a file from
 * zeros holds no lock for an instant, and a sweep of unheld files took such a file away from it
 * (its peer then opened a new one: "init failed" in ctest -j2). A forked child takes a lock of its
 * own description (pthread_atfork), so a parent leaving first does not remove a file the child
 * uses. */
#include "transport/shm_fabric.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

#define FABRIC_VERSION 1u
#define FABRIC_DIR     "/dev/shm"
#define FABRIC_PREFIX  "nccl-rail-shm-"
#define FABRIC_ALTS    8 /* NAME, NAME+1 .. NAME+7 */
#define MAX_HANDLES    16

struct fabric_handle {
    struct rail_shm_fabric *f;
    int fd;      /* holds the shared lock */
    int fork_fd; /* a second one, across fork() */
    pid_t pid;   /* the process the lock belongs to */
    dev_t dev;
    ino_t ino;
    char path[176];
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fabric_handle g_h[MAX_HANDLES];
static int g_hooks; /* atexit and pthread_atfork registered */

int rail_shm_fabric_path(const char *name, char *path, size_t len)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 64)
        return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return -EINVAL;
    }
    if (name[0] == '.')
        return -EINVAL;
    if (snprintf(path, len, FABRIC_DIR "/" FABRIC_PREFIX "%u-%s", (unsigned)geteuid(), name) >=
        (int)len)
        return -EINVAL;
    return 0;
}

/* path still names the file open at fd. */
static bool same_file(const char *path, int fd)
{
    struct stat a, b;
    return lstat(path, &a) == 0 && fstat(fd, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

/* pid is another process that has not exited (a zombie has). */
static bool other_alive(int32_t pid)
{
    char path[64], buf[256];
    if (pid <= 0 || pid == getpid() || (kill(pid, 0) != 0 && errno == ESRCH))
        return false;
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return true;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    const char *paren = strrchr(buf, ')');
    return !(paren && (paren[1] == ' ') && (paren[2] == 'Z' || paren[2] == 'X'));
}

/* Another process named in the file's endpoint registry is alive: a user that holds no lock (a
 * process of an earlier build, a harness mapping the file by itself) still uses it. */
static bool live_endpoint(int fd)
{
    struct stat st;
    const size_t size = sizeof(struct rail_shm_fabric);
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < size)
        return false;
    const struct rail_shm_fabric *f = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    if (f == MAP_FAILED)
        return false;
    bool live = false;
    if (atomic_load(&f->magic) == RAIL_SHM_MAGIC)
        for (int i = 0; i < RAIL_SHM_MAX_EP && !live; i++) {
            live = other_alive(atomic_load(&f->ep[i].pid));
        }
    munmap((void *)f, size);
    return live;
}

/* The last holder removes the name: the exclusive lock without waiting succeeds only when no
 * other description holds one (ours, shared, is given up by the attempt: we are leaving). */
static void release(int fd, const char *path)
{
    if (fd < 0)
        return;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 && same_file(path, fd) && !live_endpoint(fd))
        unlink(path);
    close(fd);
}

static void at_exit(void)
{
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_HANDLES; i++)
        if (g_h[i].f && g_h[i].pid == getpid()) {
            release(g_h[i].fd, g_h[i].path); /* the mapping stays: threads may still read it */
            g_h[i].fd = -1;
            g_h[i].pid = 0;
        }
    pthread_mutex_unlock(&g_lock);
}

/* Forking: the child maps the same file, so it must hold a lock of its own description, taken
 * before the fork (a parent leaving at once must already see it): the parent opens and locks a
 * second description per fabric, keeps none of them, and the child keeps them all. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_HANDLES; i++) {
        struct fabric_handle *h = &g_h[i];
        struct stat st;
        h->fork_fd = -1;
        if (!h->f || h->fd < 0)
            continue;
        int fd = open(h->path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0 && flock(fd, LOCK_SH) == 0 && fstat(fd, &st) == 0 && st.st_dev == h->dev &&
            st.st_ino == h->ino)
            h->fork_fd = fd;
        else if (fd >= 0)
            close(fd);
    }
}

static void fork_parent(void)
{
    for (int i = 0; i < MAX_HANDLES; i++)
        if (g_h[i].f && g_h[i].fork_fd >= 0) {
            close(g_h[i].fork_fd); /* the lock stays: the child's copy holds the description */
            g_h[i].fork_fd = -1;
        }
    pthread_mutex_unlock(&g_lock);
}

static void fork_child(void)
{
    for (int i = 0; i < MAX_HANDLES; i++) {
        struct fabric_handle *h = &g_h[i];
        if (!h->f)
            continue;
        if (h->fd >= 0)
            close(h->fd); /* the parent's description: its lock stays the parent's */
        h->fd = h->fork_fd;
        h->fork_fd = -1;
        h->pid = h->fd >= 0 ? getpid() : 0;
    }
    pthread_mutex_unlock(&g_lock);
}

enum { OPEN_OK = 0, OPEN_SQUATTED = 1 };

/* Opens path as this user's fabric file holding a shared lock: OPEN_OK with *fd, OPEN_SQUATTED
 * with *owner (another user's name), or -errno with the reason in err. */
static int open_locked(const char *path, int *fd_out, uid_t *owner, char *err, size_t errlen)
{
    const size_t size = sizeof(struct rail_shm_fabric);
    for (int tries = 0; tries < 16; tries++) {
        bool created = true;
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        struct stat st;
        if (fd < 0 && errno == EEXIST) {
            created = false;
            fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            if (fd < 0 && errno == ENOENT)
                continue; /* removed meanwhile */
        }
        if (fd < 0) {
            int e = errno;
            if (lstat(path, &st) == 0 && st.st_uid != geteuid()) {
                *owner = st.st_uid;
                return OPEN_SQUATTED;
            }
            snprintf(err, errlen, "cannot open %s: %s", path, strerror(e));
            return -e;
        }
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 0) {
            close(fd); /* removed meanwhile (its last user, or a sweep): start over */
            continue;
        }
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
            st.st_nlink != 1) {
            int ours = st.st_uid == geteuid();
            close(fd);
            if (!ours) {
                *owner = st.st_uid;
                return OPEN_SQUATTED;
            }
            snprintf(err, errlen, "%s is not a regular file with one link; remove it", path);
            return -EPERM;
        }
        if ((st.st_mode & 077) && fchmod(fd, 0600) != 0) {
            close(fd);
            continue;
        }
        bool alone = flock(fd, LOCK_EX | LOCK_NB) == 0 && (created || !live_endpoint(fd));
        if ((!alone && flock(fd, LOCK_SH) != 0) || !same_file(path, fd)) {
            close(fd);
            continue;
        }
        /* Nobody else holds it: a dead run's state (pulled cables, endpoints) starts over. */
        int rc = 0;
        if (alone && !created && ftruncate(fd, 0) != 0)
            rc = -errno;
        if (rc == 0 && (alone || (size_t)st.st_size < size) && ftruncate(fd, (off_t)size) != 0)
            rc = -errno;
        if (rc != 0) {
            snprintf(err, errlen, "cannot size %s: %s", path, strerror(-rc));
            close(fd);
            return rc;
        }
        /* Shared from now on; the conversion is not atomic, so check the name once more. */
        if (alone && (flock(fd, LOCK_SH) != 0 || !same_file(path, fd))) {
            close(fd);
            continue;
        }
        *fd_out = fd;
        return OPEN_OK;
    }
    snprintf(err, errlen, "%s keeps changing while it is opened", path);
    return -EAGAIN;
}

int rail_shm_fabric_open(const char *name, struct rail_shm_fabric **out, char *err, size_t errlen)
{
    char base[160], path[176];
    size_t size = sizeof(struct rail_shm_fabric);
    int fd = -1, rc = OPEN_SQUATTED, slot = -1;
    uid_t owner = 0;

    *out = NULL;
    if (rail_shm_fabric_path(name, base, sizeof(base)) < 0) {
        snprintf(err, errlen, "fabric name '%.80s' is not 1-64 of [A-Za-z0-9_.-]",
                 name ? name : "");
        return -EINVAL;
    }
    pthread_mutex_lock(&g_lock);
    if (!g_hooks) {
        g_hooks = 1;
        atexit(at_exit);
        pthread_atfork(fork_prepare, fork_parent, fork_child);
    }
    for (int i = 0; i < MAX_HANDLES && slot < 0; i++)
        if (!g_h[i].f)
            slot = i;
    pthread_mutex_unlock(&g_lock);
    if (slot < 0) {
        snprintf(err, errlen, "more than %d fabrics open in this process", MAX_HANDLES);
        return -EMFILE;
    }
    for (int k = 0; k < FABRIC_ALTS && rc == OPEN_SQUATTED; k++) {
        if (k == 0)
            snprintf(path, sizeof(path), "%s", base);
        else
            snprintf(path, sizeof(path), "%s+%d", base, k);
        rc = open_locked(path, &fd, &owner, err, errlen);
        if (rc == OPEN_SQUATTED)
            RAIL_WARN(NCCL_INIT | NCCL_NET,
                      "shm fabric: %s belongs to uid %u, not to this user (uid %u): not used%s; "
                      "its owner or root can remove it, or set NCCL_RAIL_SHM_FABRIC to another "
                      "name",
                      path, (unsigned)owner, (unsigned)geteuid(),
                      k + 1 < FABRIC_ALTS ? ", trying the next name" : "");
    }
    if (rc == OPEN_SQUATTED) {
        snprintf(err, errlen,
                 "%s and %s+1..+%d belong to other users; remove them (as root) or set "
                 "NCCL_RAIL_SHM_FABRIC to another name",
                 base, base, FABRIC_ALTS - 1);
        return -EPERM;
    }
    if (rc < 0)
        return rc;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        snprintf(err, errlen, "cannot map %s: %s", path, strerror(e));
        release(fd, path);
        return -e;
    }
    struct rail_shm_fabric *f = p;
    uint64_t zero = 0;
    if (atomic_compare_exchange_strong(&f->magic, &zero, RAIL_SHM_MAGIC)) {
        f->version = FABRIC_VERSION;
        f->size = (uint32_t)size;
    } else if (atomic_load(&f->magic) != RAIL_SHM_MAGIC) {
        snprintf(err, errlen, "%s is not a fabric file", path);
        munmap(p, size);
        close(fd);
        return -EPROTO;
    }
    struct stat st;
    fstat(fd, &st);
    pthread_mutex_lock(&g_lock);
    struct fabric_handle *h = &g_h[slot];
    if (h->f) /* taken meanwhile by another thread: the first free one */
        for (int i = 0; i < MAX_HANDLES; i++)
            if (!g_h[i].f) {
                h = &g_h[i];
                break;
            }
    if (h->f) {
        pthread_mutex_unlock(&g_lock);
        snprintf(err, errlen, "more than %d fabrics open in this process", MAX_HANDLES);
        munmap(p, size);
        release(fd, path);
        return -EMFILE;
    }
    *h = (struct fabric_handle){
        .f = f, .fd = fd, .pid = getpid(), .dev = st.st_dev, .ino = st.st_ino};
    snprintf(h->path, sizeof(h->path), "%s", path);
    pthread_mutex_unlock(&g_lock);
    *out = f;
    return 0;
}

int rail_shm_fabric_file(const struct rail_shm_fabric *f, char *path, size_t len)
{
    int rc = -ENOENT;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_HANDLES && rc; i++)
        if (f && g_h[i].f == f)
            rc = snprintf(path, len, "%s", g_h[i].path) < (int)len ? 0 : -ENAMETOOLONG;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

void rail_shm_fabric_close(struct rail_shm_fabric *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_HANDLES; i++) {
        struct fabric_handle *h = &g_h[i];
        if (h->f != f)
            continue;
        munmap(f, sizeof(*f));
        if (h->pid == getpid())
            release(h->fd, h->path);
        else if (h->fd >= 0)
            close(h->fd);
        memset(h, 0, sizeof(*h));
        h->fd = -1;
        break;
    }
    pthread_mutex_unlock(&g_lock);
}

int rail_shm_fabric_unlink(const char *name)
{
    char path[160];
    if (rail_shm_fabric_path(name, path, sizeof(path)) < 0)
        return -EINVAL;
    return unlink(path) == 0 ? 0 : -errno;
}
