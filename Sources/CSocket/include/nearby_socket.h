#ifndef NEARBY_SOCKET_H
#define NEARBY_SOCKET_H
// No system header included, only declared: a type an included header defines (timespec through
// <sys/types.h>) would belong to this module in Swift, and every SystemCall file using it would then
// have to import CSocket. pid_t is an int and uid_t, gid_t unsigned ints on Linux.
struct pollfd;
struct timespec;

// The GNU extensions SystemCall's Descriptor needs. Swift's Glibc module is built without _GNU_SOURCE,
// so it shows none of them; these wrappers are compiled with it (socket.c). Each returns like the
// call it wraps: -1 with errno set on failure.

// ppoll(2) without a signal mask: poll with a nanosecond timeout (NULL waits forever).
int nearby_ppoll(struct pollfd *fds, unsigned long count, const struct timespec *timeout);

// accept4(2) with SOCK_CLOEXEC (and SOCK_NONBLOCK when nonblocking is not 0): the accepted socket
// is set up in the same call.
int nearby_accept_cloexec(int fd, int nonblocking);

// pipe2(2) with O_CLOEXEC (and O_NONBLOCK when nonblocking is not 0).
int nearby_pipe_cloexec(int ends[2], int nonblocking);

// SO_PEERCRED's struct ucred, under a name of our own.
struct nearby_peer_credentials {
    int pid;
    unsigned int uid;
    unsigned int gid;
};
int nearby_peer_credentials(int fd, struct nearby_peer_credentials *credentials);

#endif
