/* The load bench's floor (tools/bench/load.py): the least a reader of advertising reports costs.
 *
 *   load_floor H4_SOCKET      connects, asks the controller to scan (LE Set Scan Enable), then reads
 *                             the H4 stream with one blocking read() at a time and walks the AD
 *                             structures of every LE Advertising Report; at SIGTERM prints
 *                             `{"reports":N,"ad_structures":M}` and exits.
 *
 * No threads, no allocation after start: what the kernel and one wake per read cost. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static volatile sig_atomic_t stopping = 0;

static void on_term(int signo) {
    (void)signo;
    stopping = 1;
}

static unsigned long long reports = 0, structures = 0, checksum = 0;

/* One LE Advertising Report event's parameters (after the subevent code). */
static void walk_reports(const uint8_t *p, size_t n) {
    if (n < 1) return;
    size_t count = p[0], o = 1;
    for (size_t r = 0; r < count; r++) {
        if (o + 9 > n) return;            /* event type, address type, address, data length */
        size_t length = p[o + 8];
        const uint8_t *ad = p + o + 9;
        if (o + 9 + length + 1 > n) return;   /* data, then RSSI */
        for (size_t a = 0; a < length;) {
            size_t l = ad[a];
            if (l == 0 || a + 1 + l > length) break;
            checksum += ad[a + 1];        /* the AD type, so the walk is not optimised away */
            structures++;
            a += 1 + l;
        }
        checksum += ad[length];           /* RSSI */
        reports++;
        o += 9 + length + 1;
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: load_floor H4_SOCKET\n");
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;              /* no SA_RESTART: the blocking read returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strncpy(addr.sun_path, argv[1], sizeof addr.sun_path - 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        perror("load_floor: connect");
        return 1;
    }
    static const uint8_t scan_enable[] = {0x01, 0x0C, 0x20, 0x02, 0x01, 0x00};
    if (write(fd, scan_enable, sizeof scan_enable) != (ssize_t)sizeof scan_enable) {
        perror("load_floor: write");
        return 1;
    }
    static uint8_t buffer[65536];
    size_t have = 0;
    while (!stopping) {
        ssize_t got = read(fd, buffer + have, sizeof buffer - have);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        have += (size_t)got;
        size_t o = 0;
        while (have - o >= 3) {
            if (buffer[o] != 0x04) {          /* only events are expected: resynchronise */
                o++;
                continue;
            }
            size_t length = buffer[o + 2];
            if (have - o < 3 + length) break;
            if (buffer[o + 1] == 0x3E && length >= 1 && buffer[o + 3] == 0x02)
                walk_reports(buffer + o + 4, length - 1);
            o += 3 + length;
        }
        memmove(buffer, buffer + o, have - o);
        have -= o;
    }
    printf("{\"reports\":%llu,\"ad_structures\":%llu,\"checksum\":%llu}\n", reports, structures, checksum);
    return 0;
}
