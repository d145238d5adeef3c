/*
 * LD_PRELOAD shim for BlueZ's btvirt on kernels without AF_ALG (no crypto sockets).
 *
 * btvirt's LE controllers create AES/CMAC sockets at start-up (bt_crypto_new) and refuse to exist
 * without them. Advertising and scanning never use the crypto, so we hand out ordinary UNIX
 * sockets for AF_ALG and make bind/setsockopt/accept on them succeed. Nothing else is touched.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/socket.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif

#define MAX_FDS 1024
static unsigned char fake_fd[MAX_FDS];

static int is_fake(int fd) { return fd >= 0 && fd < MAX_FDS && fake_fd[fd]; }

static int mark(int fd) {
    if (fd >= 0 && fd < MAX_FDS) fake_fd[fd] = 1;
    return fd;
}

int socket(int domain, int type, int protocol) {
    static int (*real_socket)(int, int, int);
    if (!real_socket) real_socket = dlsym(RTLD_NEXT, "socket");
    if (domain != AF_ALG) return real_socket(domain, type, protocol);
    return mark(real_socket(AF_UNIX, SOCK_SEQPACKET | (type & SOCK_CLOEXEC), 0));
}

int bind(int fd, const struct sockaddr *addr, socklen_t len) {
    static int (*real_bind)(int, const struct sockaddr *, socklen_t);
    if (!real_bind) real_bind = dlsym(RTLD_NEXT, "bind");
    return is_fake(fd) ? 0 : real_bind(fd, addr, len);
}

int setsockopt(int fd, int level, int name, const void *value, socklen_t len) {
    static int (*real_setsockopt)(int, int, int, const void *, socklen_t);
    if (!real_setsockopt) real_setsockopt = dlsym(RTLD_NEXT, "setsockopt");
    return is_fake(fd) ? 0 : real_setsockopt(fd, level, name, value, len);
}

int accept(int fd, struct sockaddr *addr, socklen_t *len) {
    static int (*real_accept)(int, struct sockaddr *, socklen_t *);
    static int (*real_socket)(int, int, int);
    if (!real_accept) real_accept = dlsym(RTLD_NEXT, "accept");
    if (!real_socket) real_socket = dlsym(RTLD_NEXT, "socket");
    if (!is_fake(fd)) return real_accept(fd, addr, len);
    return mark(real_socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
}

int close(int fd) {
    static int (*real_close)(int);
    if (!real_close) real_close = dlsym(RTLD_NEXT, "close");
    if (fd >= 0 && fd < MAX_FDS) fake_fd[fd] = 0;
    return real_close(fd);
}
