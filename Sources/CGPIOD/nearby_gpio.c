// nearby_gpio.h over libgpiod 1.6 or 2.x, chosen by the <gpiod.h> found at build time: 1.6 defines
// GPIOD_LINE_BULK_MAX_LINES (its line-bulk API), 2.x has no line bulks at all. One binary per
// release rather than dlopen at run time: each Debian release ships exactly one libgpiod, the
// package is built per release anyway, and a compile-time choice keeps every call type-checked.
// _GNU_SOURCE (for scandir's versionsort) comes from Package.swift.
#include "nearby_gpio.h"

#include <dirent.h>
#include <errno.h>
#include <gpiod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef GPIOD_LINE_BULK_MAX_LINES
#define NEARBY_GPIOD_V1 1
#else
#define NEARBY_GPIOD_V1 0
#endif

struct nearby_gpio_chip {
    struct gpiod_chip *chip;
    char *label;
    unsigned int num_lines;
};

#if NEARBY_GPIOD_V1
struct nearby_gpio_line {
    struct gpiod_line *line; // owned by its chip in 1.6
};
#else
struct nearby_gpio_line {
    struct gpiod_line_request *request;
    unsigned int offset;
    struct gpiod_edge_event_buffer *events; // NULL for outputs
};
#endif

int nearby_gpio_api_major(void) { return NEARBY_GPIOD_V1 ? 1 : 2; }

const char *nearby_gpio_library_version(void) {
#if NEARBY_GPIOD_V1
    return gpiod_version_string();
#else
    return gpiod_api_version();
#endif
}

// --- chips ---------------------------------------------------------------------------------------

nearby_gpio_chip *nearby_gpio_chip_open(const char *path) {
    struct gpiod_chip *raw = gpiod_chip_open(path);
    if (!raw) return NULL;
    const char *label = NULL;
    unsigned int lines = 0;
#if NEARBY_GPIOD_V1
    label = gpiod_chip_label(raw);
    lines = gpiod_chip_num_lines(raw);
    char *copy = strdup(label ? label : "");
#else
    struct gpiod_chip_info *info = gpiod_chip_get_info(raw);
    if (!info) {
        int saved = errno;
        gpiod_chip_close(raw);
        errno = saved;
        return NULL;
    }
    label = gpiod_chip_info_get_label(info);
    lines = (unsigned int)gpiod_chip_info_get_num_lines(info);
    char *copy = strdup(label ? label : "");
    gpiod_chip_info_free(info);
#endif
    nearby_gpio_chip *chip = malloc(sizeof *chip);
    if (!copy || !chip) {
        free(copy);
        free(chip);
        gpiod_chip_close(raw);
        errno = ENOMEM;
        return NULL;
    }
    chip->chip = raw;
    chip->label = copy;
    chip->num_lines = lines;
    return chip;
}

void nearby_gpio_chip_close(nearby_gpio_chip *chip) {
    if (!chip) return;
    gpiod_chip_close(chip->chip);
    free(chip->label);
    free(chip);
}

const char *nearby_gpio_chip_label(const nearby_gpio_chip *chip) { return chip->label; }

unsigned int nearby_gpio_chip_num_lines(const nearby_gpio_chip *chip) { return chip->num_lines; }

static int is_gpiochip(const struct dirent *entry) { return strncmp(entry->d_name, "gpiochip", 8) == 0; }

// libgpiod 2 has no open-by-label, so both versions walk /dev the same way: chips in natural order
// (gpiochip2 before gpiochip10), the first with the label wins. When no chip has it, ENOENT; when
// a chip could not be opened (EACCES), that errno instead, since the label may be on that chip.
nearby_gpio_chip *nearby_gpio_chip_open_by_label(const char *label) {
    struct dirent **entries = NULL;
    int count = scandir("/dev", &entries, is_gpiochip, versionsort);
    if (count < 0) return NULL;
    nearby_gpio_chip *found = NULL;
    int unopened = 0;
    for (int i = 0; i < count; i++) {
        if (!found) {
            char path[300];
            snprintf(path, sizeof path, "/dev/%s", entries[i]->d_name);
            nearby_gpio_chip *chip = nearby_gpio_chip_open(path);
            if (!chip) {
                if (errno == EACCES || errno == EPERM) unopened = errno;
            } else if (strcmp(chip->label, label) == 0) {
                found = chip;
            } else {
                nearby_gpio_chip_close(chip);
            }
        }
        free(entries[i]);
    }
    free(entries);
    if (!found) errno = unopened ? unopened : ENOENT;
    return found;
}

// --- lines ---------------------------------------------------------------------------------------

#if NEARBY_GPIOD_V1

static nearby_gpio_line *wrap(struct gpiod_line *raw) {
    nearby_gpio_line *line = malloc(sizeof *line);
    if (!line) {
        gpiod_line_release(raw);
        errno = ENOMEM;
        return NULL;
    }
    line->line = raw;
    return line;
}

static struct gpiod_line *chip_line(nearby_gpio_chip *chip, unsigned int offset) {
    if (offset >= chip->num_lines) {
        errno = EINVAL;
        return NULL;
    }
    return gpiod_chip_get_line(chip->chip, offset);
}

nearby_gpio_line *nearby_gpio_request_output(nearby_gpio_chip *chip, unsigned int offset, const char *consumer,
                                             int active_low, int initial) {
    struct gpiod_line *raw = chip_line(chip, offset);
    if (!raw) return NULL;
    int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    if (gpiod_line_request_output_flags(raw, consumer, flags, initial ? 1 : 0) < 0) return NULL;
    return wrap(raw);
}

nearby_gpio_line *nearby_gpio_request_edges(nearby_gpio_chip *chip, unsigned int offset, const char *consumer,
                                            int active_low, enum nearby_gpio_bias bias) {
    struct gpiod_line *raw = chip_line(chip, offset);
    if (!raw) return NULL;
    int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    switch (bias) {
    case NEARBY_GPIO_BIAS_AS_IS: break;
    case NEARBY_GPIO_BIAS_DISABLED: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE; break;
    case NEARBY_GPIO_BIAS_PULL_UP: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP; break;
    case NEARBY_GPIO_BIAS_PULL_DOWN: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN; break;
    }
    if (gpiod_line_request_both_edges_events_flags(raw, consumer, flags) < 0) return NULL;
    return wrap(raw);
}

int nearby_gpio_line_set(nearby_gpio_line *line, int value) { return gpiod_line_set_value(line->line, value ? 1 : 0); }

int nearby_gpio_line_get(nearby_gpio_line *line) { return gpiod_line_get_value(line->line); }

int nearby_gpio_line_wait_edges(nearby_gpio_line *line, int64_t timeout_ns) {
    struct timespec wait = {.tv_sec = timeout_ns / 1000000000, .tv_nsec = timeout_ns % 1000000000};
    int ready = gpiod_line_event_wait(line->line, &wait);
    if (ready <= 0) return ready;
    // Drain what is pending so the next wait blocks again; the debouncer reads the settled level,
    // not the edges.
    struct timespec none = {0, 0};
    do {
        struct gpiod_line_event event;
        if (gpiod_line_event_read(line->line, &event) < 0) return -1;
    } while (gpiod_line_event_wait(line->line, &none) == 1);
    return 1;
}

void nearby_gpio_line_release(nearby_gpio_line *line) {
    if (!line) return;
    gpiod_line_release(line->line);
    free(line);
}

#else // libgpiod 2.x

// One line, one request: settings → line config → request config → request. Frees what it made
// and keeps the errno of the call that failed.
static nearby_gpio_line *request_one(nearby_gpio_chip *chip, unsigned int offset, const char *consumer,
                                     struct gpiod_line_settings *settings, int with_events) {
    nearby_gpio_line *line = NULL;
    struct gpiod_line_config *line_config = NULL;
    struct gpiod_request_config *request_config = NULL;
    struct gpiod_line_request *request = NULL;
    struct gpiod_edge_event_buffer *events = NULL;
    int saved = 0;
    if (offset >= chip->num_lines) {
        saved = EINVAL;
        goto out;
    }
    line_config = gpiod_line_config_new();
    request_config = gpiod_request_config_new();
    if (!line_config || !request_config) {
        saved = ENOMEM;
        goto out;
    }
    if (gpiod_line_config_add_line_settings(line_config, &offset, 1, settings) < 0) {
        saved = errno;
        goto out;
    }
    gpiod_request_config_set_consumer(request_config, consumer);
    if (with_events && !(events = gpiod_edge_event_buffer_new(16))) {
        saved = ENOMEM;
        goto out;
    }
    request = gpiod_chip_request_lines(chip->chip, request_config, line_config);
    if (!request) {
        saved = errno;
        goto out;
    }
    line = malloc(sizeof *line);
    if (!line) {
        saved = ENOMEM;
        gpiod_line_request_release(request);
        goto out;
    }
    line->request = request;
    line->offset = offset;
    line->events = events;
    events = NULL;
out:
    gpiod_edge_event_buffer_free(events);
    gpiod_request_config_free(request_config);
    gpiod_line_config_free(line_config);
    gpiod_line_settings_free(settings);
    if (!line) errno = saved;
    return line;
}

nearby_gpio_line *nearby_gpio_request_output(nearby_gpio_chip *chip, unsigned int offset, const char *consumer,
                                             int active_low, int initial) {
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    if (!settings) {
        errno = ENOMEM;
        return NULL;
    }
    gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT);
    gpiod_line_settings_set_active_low(settings, active_low != 0);
    gpiod_line_settings_set_output_value(settings, initial ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
    return request_one(chip, offset, consumer, settings, 0);
}

nearby_gpio_line *nearby_gpio_request_edges(nearby_gpio_chip *chip, unsigned int offset, const char *consumer,
                                            int active_low, enum nearby_gpio_bias bias) {
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    if (!settings) {
        errno = ENOMEM;
        return NULL;
    }
    gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT);
    gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_BOTH);
    gpiod_line_settings_set_active_low(settings, active_low != 0);
    enum gpiod_line_bias mapped = GPIOD_LINE_BIAS_AS_IS;
    switch (bias) {
    case NEARBY_GPIO_BIAS_AS_IS: mapped = GPIOD_LINE_BIAS_AS_IS; break;
    case NEARBY_GPIO_BIAS_DISABLED: mapped = GPIOD_LINE_BIAS_DISABLED; break;
    case NEARBY_GPIO_BIAS_PULL_UP: mapped = GPIOD_LINE_BIAS_PULL_UP; break;
    case NEARBY_GPIO_BIAS_PULL_DOWN: mapped = GPIOD_LINE_BIAS_PULL_DOWN; break;
    }
    gpiod_line_settings_set_bias(settings, mapped);
    return request_one(chip, offset, consumer, settings, 1);
}

int nearby_gpio_line_set(nearby_gpio_line *line, int value) {
    return gpiod_line_request_set_value(line->request, line->offset,
                                        value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
}

int nearby_gpio_line_get(nearby_gpio_line *line) {
    enum gpiod_line_value value = gpiod_line_request_get_value(line->request, line->offset);
    return value == GPIOD_LINE_VALUE_ERROR ? -1 : (value == GPIOD_LINE_VALUE_ACTIVE ? 1 : 0);
}

int nearby_gpio_line_wait_edges(nearby_gpio_line *line, int64_t timeout_ns) {
    if (!line->events) {
        errno = EINVAL;
        return -1;
    }
    int ready = gpiod_line_request_wait_edge_events(line->request, timeout_ns);
    if (ready <= 0) return ready;
    // Drain what is pending (the buffer holds 16 at a time) so the next wait blocks again.
    do {
        if (gpiod_line_request_read_edge_events(line->request, line->events, 16) < 0) return -1;
    } while (gpiod_line_request_wait_edge_events(line->request, 0) == 1);
    return 1;
}

void nearby_gpio_line_release(nearby_gpio_line *line) {
    if (!line) return;
    gpiod_line_request_release(line->request);
    gpiod_edge_event_buffer_free(line->events);
    free(line);
}

#endif
