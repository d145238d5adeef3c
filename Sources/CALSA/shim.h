#ifndef NEARBY_CALSA_SHIM_H
#define NEARBY_CALSA_SHIM_H
#include <alsa/asoundlib.h>

/* alsa-lib prints its own diagnostics to stderr; every failure also comes back to us as a -errno
   that ALSAPCM turns into a typed error naming the device and the call, so the printing is only
   noise in the journal. The handler type is variadic, which Swift cannot implement. */
static void nearby_alsa_quiet_handler(const char *file, int line, const char *function, int err,
                                      const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline int nearby_alsa_silence_errors(void) {
    return snd_lib_error_set_handler(nearby_alsa_quiet_handler);
}

/* The start threshold: with snd_pcm_set_params' default (the whole buffer), a capture stream read in
   chunks smaller than the buffer never starts on a hw: device and snd_pcm_readi fails with EIO.
   snd_pcm_sw_params_alloca is a macro, hence this helper. */
static inline int nearby_alsa_set_start_threshold(snd_pcm_t *pcm, snd_pcm_uframes_t frames) {
    snd_pcm_sw_params_t *params;
    snd_pcm_sw_params_alloca(&params);
    int err = snd_pcm_sw_params_current(pcm, params);
    if (err < 0) return err;
    err = snd_pcm_sw_params_set_start_threshold(pcm, params, frames);
    if (err < 0) return err;
    return snd_pcm_sw_params(pcm, params);
}

#endif
