/* Reproduces the capture start problem of Sources/Modem/ALSAPCM.swift on a real hw: device (see
 * docs/system-test.md, "What fails today"). In the guest, after `modprobe snd-aloop`:
 *   cc -o /tmp/cap alsa-capture-start.c -lasound
 *   /tmp/cap hw:Loopback,1,0 1024         -> readi error -5 (EIO): start threshold = buffer (4800)
 *   /tmp/cap hw:Loopback,1,0 1024 fix     -> reads every chunk: start threshold set to 1
 */
#include <alsa/asoundlib.h>
#include <stdio.h>
#include <time.h>
int main(int argc, char **argv) {
    snd_pcm_t *pcm; int err;
    int chunk = argc > 2 ? atoi(argv[2]) : 1024;
    if ((err = snd_pcm_open(&pcm, argv[1], SND_PCM_STREAM_CAPTURE, 0)) < 0) { printf("open %s\n", snd_strerror(err)); return 1; }
    if ((err = snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 1, 48000, 1, 100000)) < 0) { printf("set_params %s\n", snd_strerror(err)); return 1; }
    if (argc > 3) {
        snd_pcm_sw_params_t *sw; snd_pcm_sw_params_alloca(&sw);
        snd_pcm_sw_params_current(pcm, sw);
        snd_pcm_uframes_t st; snd_pcm_sw_params_get_start_threshold(sw, &st); printf("start_threshold was %lu\n", st);
        snd_pcm_sw_params_set_start_threshold(pcm, sw, 1);
        if ((err = snd_pcm_sw_params(pcm, sw)) < 0) { printf("sw_params %s\n", snd_strerror(err)); return 1; }
    }
    short buf[65536]; long total = 0;
    struct timespec t0, t; clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 200; i++) {
        snd_pcm_sframes_t n = snd_pcm_readi(pcm, buf, chunk);
        clock_gettime(CLOCK_MONOTONIC, &t);
        double el = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
        if (n < 0) { printf("%.3f readi error %ld %s state=%d\n", el, n, snd_strerror(n), snd_pcm_state(pcm)); int r = snd_pcm_recover(pcm, n, 1); printf("  recover %d\n", r); if (r < 0) return 2; continue; }
        total += n;
        if (i % 20 == 0) printf("%.3f read %ld total %ld\n", el, n, total);
    }
    return 0;
}
