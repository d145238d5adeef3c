#ifndef NEARBY_MOSQUITTO_H
#define NEARBY_MOSQUITTO_H
// libmosquitto, loaded at run time (nearby_mosquitto.c): a gateway without [mqtt] never maps it, nor
// the libssl/libcrypto it pulls in, and the binary has no NEEDED entry for it (docs/mqtt.md).
// Calling a mosquitto_* function directly would not link. What the wrapper needs of <mosquitto.h>
// (an opaque handle, one struct, two error codes) is declared here, so building needs no
// libmosquitto-dev: the README's packages suffice. nearby_mosquitto.c checks these declarations
// against <mosquitto.h> wherever that header is installed. libmosquitto.so.1's ABI is stable (the
// soname has not changed since 1.x). Only Sources/MQTT/Mosquitto.swift imports this module.

#include <stdbool.h>

/// <mosquitto.h>'s opaque client handle.
struct mosquitto;

/// <mosquitto.h>'s `struct mosquitto_message`, field for field (the message callback's argument).
struct nearby_mosquitto_message {
    int mid;
    char *_Nullable topic;
    void *_Nullable payload;
    int payloadlen;
    int qos;
    bool retain;
};

/// The two `enum mosq_err_t` values the wrapper tells apart from the rest (mosquitto_strerror names
/// every code).
#define NEARBY_MOSQ_ERR_SUCCESS 0
#define NEARBY_MOSQ_ERR_ERRNO 14

/// The library file dlopen(3) looks for (Debian's libmosquitto1).
#define NEARBY_MOSQUITTO_SONAME "libmosquitto.so.1"

#pragma clang assume_nonnull begin

typedef void (*_Nonnull nearby_mosquitto_connect_cb)(struct mosquitto *_Nullable, void *_Nullable, int);
typedef void (*_Nonnull nearby_mosquitto_message_cb)(struct mosquitto *_Nullable, void *_Nullable, const struct nearby_mosquitto_message *_Nullable);

/// Exactly the libmosquitto functions the wrapper calls, resolved by dlsym(3); where <mosquitto.h> is
/// installed, nearby_mosquitto.c checks at compile time that each field has the type it declares.
struct nearby_mosquitto_api {
    struct mosquitto *_Nullable (*_Nonnull new_client)(const char *id, bool clean_session, void *_Nullable obj);
    void (*_Nonnull destroy)(struct mosquitto *mosq);
    void (*_Nonnull user_data_set)(struct mosquitto *mosq, void *_Nullable obj);
    void (*_Nonnull connect_callback_set)(struct mosquitto *mosq, nearby_mosquitto_connect_cb on_connect);
    void (*_Nonnull disconnect_callback_set)(struct mosquitto *mosq, nearby_mosquitto_connect_cb on_disconnect);
    void (*_Nonnull message_callback_set)(struct mosquitto *mosq, nearby_mosquitto_message_cb on_message);
    int (*_Nonnull username_pw_set)(struct mosquitto *mosq, const char *_Nullable username, const char *_Nullable password);
    int (*_Nonnull will_set)(struct mosquitto *mosq, const char *topic, int payloadlen, const void *_Nullable payload, int qos, bool retain);
    int (*_Nonnull tls_set)(struct mosquitto *mosq, const char *_Nullable cafile, const char *_Nullable capath,
                   const char *_Nullable certfile, const char *_Nullable keyfile,
                   int (*_Nullable pw_callback)(char *buf, int size, int rwflag, void *_Nullable userdata));
    int (*_Nonnull connect_async)(struct mosquitto *mosq, const char *host, int port, int keepalive);
    int (*_Nonnull socket)(struct mosquitto *mosq);
    bool (*_Nonnull want_write)(struct mosquitto *mosq);
    int (*_Nonnull loop_read)(struct mosquitto *mosq, int max_packets);
    int (*_Nonnull loop_write)(struct mosquitto *mosq, int max_packets);
    int (*_Nonnull loop_misc)(struct mosquitto *mosq);
    int (*_Nonnull publish)(struct mosquitto *mosq, int *_Nullable mid, const char *topic, int payloadlen,
                   const void *_Nullable payload, int qos, bool retain);
    int (*_Nonnull subscribe)(struct mosquitto *mosq, int *_Nullable mid, const char *sub, int qos);
    int (*_Nonnull disconnect)(struct mosquitto *mosq);
    const char *_Nonnull (*_Nonnull connack_string)(int connack_code);
    const char *_Nonnull (*_Nonnull strerror)(int mosq_errno);
};

/// Loads libmosquitto once (the first call; later calls return the first answer) and calls
/// mosquitto_lib_init. NULL when the library or one of its functions is missing: then
/// nearby_mosquitto_load_error says which and why (dlerror's text).
const struct nearby_mosquitto_api *_Nullable nearby_mosquitto_load(void);
const char *_Nullable nearby_mosquitto_load_error(void);

#pragma clang assume_nonnull end

#endif
