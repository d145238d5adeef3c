#ifndef NEARBY_CRYPTO_H
#define NEARBY_CRYPTO_H
// AES-128 from OpenSSL's libcrypto, loaded at run time (nearby_crypto.c): only a gateway with
// [[identity]] entries maps it, the binary has no NEEDED entry for it, and the build needs no
// libssl-dev (the few EVP functions are declared in the C file). Only Sources/Radio/Privacy/AES128.swift
// imports this module.

#include <stdint.h>

/// The library file dlopen(3) looks for (Debian's libssl3, on every Raspberry Pi OS too).
#define NEARBY_CRYPTO_SONAME "libcrypto.so.3"

#pragma clang assume_nonnull begin

/// One AES-128 key, ready to encrypt: a libcrypto cipher context holding its key schedule.
struct nearby_aes128;

/// Loads libcrypto once (the first call; later calls return the first answer). 0 when loaded, -1
/// when the library or one of its functions is missing: nearby_crypto_load_error says which and why.
int nearby_crypto_load(void);
const char *_Nullable nearby_crypto_load_error(void);

/// An encryptor for `key` (16 bytes, most significant first as FIPS-197 writes it), or NULL when
/// libcrypto is not loaded or refuses the key.
struct nearby_aes128 *_Nullable nearby_aes128_new(const uint8_t *key);
/// Encrypts one 16-byte block (ECB, no padding) into `out`. 0 on success, -1 on failure.
int nearby_aes128_encrypt(struct nearby_aes128 *aes, const uint8_t *block, uint8_t *out);
void nearby_aes128_free(struct nearby_aes128 *_Nullable aes);

#pragma clang assume_nonnull end

#endif
