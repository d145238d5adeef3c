#ifndef NEARBY_SOCKET_H
#define NEARBY_SOCKET_H
#include <poll.h>
#include <time.h>
#include <sys/types.h>

// The GNU extensions the socket broker needs. Swift's Glibc module is built without _GNU_SOURCE,
// so it shows none of them; these wrappers are compiled with it (socket.c). Each returns like the
// call it wraps: -1 with errno set on failure.

// ppoll(2) without a signal mask: poll with a nanosecond timeout (NULL waits forever).
int nearby_ppoll(struct pollfd *fds, nfds_t count, const struct timespec *timeout);

// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC: the accepted socket is set up in the same call.
int nearby_accept_nonblocking(int fd);

// SO_PEERCRED's struct ucred, under a name of our own.
struct nearby_peer_credentials {
    pid_t pid;
    uid_t uid;
    gid_t gid;
};
int nearby_peer_credentials(int fd, struct nearby_peer_credentials *credentials);

#endif
