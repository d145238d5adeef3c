#ifndef NEARBY_CGPIOD_SHIM_H
#define NEARBY_CGPIOD_SHIM_H
#include <gpiod.h>
#endif
