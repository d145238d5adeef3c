// dlopen(3) of libcrypto, once, on the first identity key: linked normally, every gateway would map
// it, and building would need libssl-dev for four declarations.
#include "nearby_crypto.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// OpenSSL 3's own declarations (<openssl/evp.h>), written out: the types are opaque to us, and these
// signatures are OpenSSL's stable ABI for libcrypto.so.3.
typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;
typedef struct evp_cipher_st EVP_CIPHER;
typedef struct engine_st ENGINE;

static struct {
    EVP_CIPHER_CTX *(*ctx_new)(void);
    void (*ctx_free)(EVP_CIPHER_CTX *ctx);
    const EVP_CIPHER *(*aes_128_ecb)(void);
    int (*encrypt_init)(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *type, ENGINE *impl, const unsigned char *key,
                        const unsigned char *iv);
    int (*set_padding)(EVP_CIPHER_CTX *ctx, int padding);
    int (*encrypt_update)(EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl, const unsigned char *in, int inl);
} api;
static int loaded = -1;
static char load_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int resolve(void *library, const char *name, void **slot) {
    dlerror();
    *slot = dlsym(library, name);
    if (*slot) return 1;
    const char *why = dlerror();
    snprintf(load_error, sizeof load_error, "%s has no %s: %s", NEARBY_CRYPTO_SONAME, name, why ? why : "symbol is NULL");
    return 0;
}

static void load(void) {
    void *library = dlopen(NEARBY_CRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error, "cannot load %s (Debian package libssl3): %s", NEARBY_CRYPTO_SONAME,
                 why ? why : "unknown dlopen error");
        return;
    }
    int ok = resolve(library, "EVP_CIPHER_CTX_new", (void **)&api.ctx_new)
        && resolve(library, "EVP_CIPHER_CTX_free", (void **)&api.ctx_free)
        && resolve(library, "EVP_aes_128_ecb", (void **)&api.aes_128_ecb)
        && resolve(library, "EVP_EncryptInit_ex", (void **)&api.encrypt_init)
        && resolve(library, "EVP_CIPHER_CTX_set_padding", (void **)&api.set_padding)
        && resolve(library, "EVP_EncryptUpdate", (void **)&api.encrypt_update);
    if (!ok) {
        dlclose(library);
        return;
    }
    loaded = 0;   // the library stays loaded
}

int nearby_crypto_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *nearby_crypto_load_error(void) {
    pthread_once(&once, load);
    return loaded == 0 ? NULL : load_error;
}

struct nearby_aes128 *nearby_aes128_new(const uint8_t *key) {
    if (nearby_crypto_load() != 0) return NULL;
    EVP_CIPHER_CTX *ctx = api.ctx_new();
    if (!ctx) return NULL;
    // The key schedule is computed once here; each block afterwards is one EncryptUpdate.
    if (api.encrypt_init(ctx, api.aes_128_ecb(), NULL, key, NULL) != 1 || api.set_padding(ctx, 0) != 1) {
        api.ctx_free(ctx);
        return NULL;
    }
    return (struct nearby_aes128 *)ctx;
}

int nearby_aes128_encrypt(struct nearby_aes128 *aes, const uint8_t *block, uint8_t *out) {
    int length = 0;
    // ECB without padding: a whole block in is a whole block out, nothing held back in the context.
    if (api.encrypt_update((EVP_CIPHER_CTX *)aes, out, &length, block, 16) != 1 || length != 16) return -1;
    return 0;
}

void nearby_aes128_free(struct nearby_aes128 *aes) {
    if (aes && loaded == 0) api.ctx_free((EVP_CIPHER_CTX *)aes);
}
