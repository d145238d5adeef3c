#ifndef NEARBY_GPIO_H
#define NEARBY_GPIO_H
// The few GPIO operations the gateway needs, implemented over libgpiod 1.6 (Debian 12) or 2.x
// (Debian 13), whichever <gpiod.h> this is compiled against (nearby_gpio.c). Swift sees only this
// header, so the Swift wrapper (Gateway/LEDs/GPIOChip.swift) is the same for both versions.
//
// Convention, for every function: failure is -1 or NULL with errno set, like libgpiod itself.

#include <stdint.h>

typedef struct nearby_gpio_chip nearby_gpio_chip;
typedef struct nearby_gpio_line nearby_gpio_line;

enum nearby_gpio_bias {
    NEARBY_GPIO_BIAS_AS_IS = 0,
    NEARBY_GPIO_BIAS_DISABLED = 1,
    NEARBY_GPIO_BIAS_PULL_UP = 2,
    NEARBY_GPIO_BIAS_PULL_DOWN = 3,
};

/// The major version of the libgpiod API this was compiled against: 1 or 2.
int nearby_gpio_api_major(void);
/// The version string of the libgpiod loaded at run time ("1.6.3", "2.2.1").
const char *nearby_gpio_library_version(void);

/// Opens a chip by device path (/dev/gpiochipN).
nearby_gpio_chip *nearby_gpio_chip_open(const char *path);
/// Opens the first chip (in /dev/gpiochipN order) whose label is `label`; ENOENT when none has it.
nearby_gpio_chip *nearby_gpio_chip_open_by_label(const char *label);
void nearby_gpio_chip_close(nearby_gpio_chip *chip);
/// The kernel's label of the chip; valid until the chip is closed.
const char *nearby_gpio_chip_label(const nearby_gpio_chip *chip);
unsigned int nearby_gpio_chip_num_lines(const nearby_gpio_chip *chip);

/// Requests `offset` as an output with an initial value; active_low inverts it in the kernel.
nearby_gpio_line *nearby_gpio_request_output(nearby_gpio_chip *chip, unsigned int offset, const char *consumer,
                                             int active_low, int initial);
/// Requests `offset` as an input reporting both edges.
nearby_gpio_line *nearby_gpio_request_edges(nearby_gpio_chip *chip, unsigned int offset, const char *consumer,
                                            int active_low, enum nearby_gpio_bias bias);
/// Drives an output line: 0 or 1 (logical, after active-low). Returns 0 or -1.
int nearby_gpio_line_set(nearby_gpio_line *line, int value);
/// Reads a line's logical value: 0, 1 or -1.
int nearby_gpio_line_get(nearby_gpio_line *line);
/// Waits up to `timeout_ns` for edges; consumes every pending one. 1: edges seen, 0: timeout, -1: error.
int nearby_gpio_line_wait_edges(nearby_gpio_line *line, int64_t timeout_ns);
/// Hands the line back to the kernel and frees it. The chip must still be open (libgpiod 1.6 lines
/// belong to their chip).
void nearby_gpio_line_release(nearby_gpio_line *line);

#endif
