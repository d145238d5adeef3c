// dlopen(3) of libmosquitto, once, on the first bridge (or check-config of an [mqtt] section): linked
// normally, it and its libssl/libcrypto would be mapped into every gateway, with or without [mqtt].
#include "nearby_mosquitto.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#if __has_include(<mosquitto.h>)
// Where libmosquitto-dev is installed (the development machines and CI), the declarations of
// nearby_mosquitto.h are checked against the library's own: a libmosquitto whose API changed is a
// compile error here, not a wrong call at run time. (__typeof__ of a declaration references no symbol.)
#include <mosquitto.h>
#include <stddef.h>

#define SAME_TYPE(field, function) \
    _Static_assert(__builtin_types_compatible_p(__typeof__(((struct nearby_mosquitto_api *)0)->field), \
                                                __typeof__(&function)), #field " is not " #function "'s type")
SAME_TYPE(new_client, mosquitto_new);
SAME_TYPE(destroy, mosquitto_destroy);
SAME_TYPE(user_data_set, mosquitto_user_data_set);
SAME_TYPE(connect_callback_set, mosquitto_connect_callback_set);
SAME_TYPE(disconnect_callback_set, mosquitto_disconnect_callback_set);
SAME_TYPE(username_pw_set, mosquitto_username_pw_set);
SAME_TYPE(will_set, mosquitto_will_set);
SAME_TYPE(tls_set, mosquitto_tls_set);
SAME_TYPE(connect_async, mosquitto_connect_async);
SAME_TYPE(socket, mosquitto_socket);
SAME_TYPE(want_write, mosquitto_want_write);
SAME_TYPE(loop_read, mosquitto_loop_read);
SAME_TYPE(loop_write, mosquitto_loop_write);
SAME_TYPE(loop_misc, mosquitto_loop_misc);
SAME_TYPE(publish, mosquitto_publish);
SAME_TYPE(subscribe, mosquitto_subscribe);
SAME_TYPE(disconnect, mosquitto_disconnect);
SAME_TYPE(connack_string, mosquitto_connack_string);
SAME_TYPE(strerror, mosquitto_strerror);
// The message callback's argument is our copy of struct mosquitto_message: the function's type with
// the library's struct, and the struct field for field.
_Static_assert(__builtin_types_compatible_p(__typeof__(&mosquitto_message_callback_set),
                   void (*)(struct mosquitto *, void (*)(struct mosquitto *, void *, const struct mosquitto_message *))),
               "mosquitto_message_callback_set changed");
#define SAME_FIELD(name) \
    _Static_assert(offsetof(struct nearby_mosquitto_message, name) == offsetof(struct mosquitto_message, name) \
                   && __builtin_types_compatible_p(__typeof__(((struct nearby_mosquitto_message *)0)->name), \
                                                   __typeof__(((struct mosquitto_message *)0)->name)), \
                   "struct mosquitto_message." #name " changed");
SAME_FIELD(mid) SAME_FIELD(topic) SAME_FIELD(payload) SAME_FIELD(payloadlen) SAME_FIELD(qos) SAME_FIELD(retain)
_Static_assert(sizeof(struct nearby_mosquitto_message) == sizeof(struct mosquitto_message), "struct mosquitto_message changed");
_Static_assert(NEARBY_MOSQ_ERR_SUCCESS == MOSQ_ERR_SUCCESS && NEARBY_MOSQ_ERR_ERRNO == MOSQ_ERR_ERRNO, "MOSQ_ERR_* changed");
#endif

static struct nearby_mosquitto_api api;
static const struct nearby_mosquitto_api *loaded;
static char load_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int resolve(void *library, const char *name, void **slot) {
    dlerror();
    *slot = dlsym(library, name);
    if (*slot) return 1;
    const char *why = dlerror();
    snprintf(load_error, sizeof load_error, "%s has no %s: %s", NEARBY_MOSQUITTO_SONAME, name, why ? why : "symbol is NULL");
    return 0;
}

#define RESOLVE(field, function) resolve(library, #function, (void **)&api.field)

static void load(void) {
    void *library = dlopen(NEARBY_MOSQUITTO_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error, "cannot load %s (Debian package libmosquitto1): %s",
                 NEARBY_MOSQUITTO_SONAME, why ? why : "unknown dlopen error");
        return;
    }
    int (*lib_init)(void) = NULL;
    int ok = resolve(library, "mosquitto_lib_init", (void **)&lib_init)
        && RESOLVE(new_client, mosquitto_new) && RESOLVE(destroy, mosquitto_destroy)
        && RESOLVE(user_data_set, mosquitto_user_data_set)
        && RESOLVE(connect_callback_set, mosquitto_connect_callback_set)
        && RESOLVE(disconnect_callback_set, mosquitto_disconnect_callback_set)
        && RESOLVE(message_callback_set, mosquitto_message_callback_set)
        && RESOLVE(username_pw_set, mosquitto_username_pw_set) && RESOLVE(will_set, mosquitto_will_set)
        && RESOLVE(tls_set, mosquitto_tls_set) && RESOLVE(connect_async, mosquitto_connect_async)
        && RESOLVE(socket, mosquitto_socket) && RESOLVE(want_write, mosquitto_want_write)
        && RESOLVE(loop_read, mosquitto_loop_read) && RESOLVE(loop_write, mosquitto_loop_write)
        && RESOLVE(loop_misc, mosquitto_loop_misc) && RESOLVE(publish, mosquitto_publish)
        && RESOLVE(subscribe, mosquitto_subscribe) && RESOLVE(disconnect, mosquitto_disconnect)
        && RESOLVE(connack_string, mosquitto_connack_string) && RESOLVE(strerror, mosquitto_strerror);
    if (!ok) {
        dlclose(library);
        return;
    }
    // Not thread-safe in libmosquitto, hence here, under pthread_once. The library stays loaded.
    lib_init();
    loaded = &api;
}

const struct nearby_mosquitto_api *nearby_mosquitto_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *nearby_mosquitto_load_error(void) {
    pthread_once(&once, load);
    return loaded ? NULL : load_error;
}
