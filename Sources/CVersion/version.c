#include "nearby_version.h"

#ifndef NEARBY_GATEWAY_VERSION
#define NEARBY_GATEWAY_VERSION "0.0.0-dev"
#endif

const char *nearby_gateway_version(void) { return NEARBY_GATEWAY_VERSION; }
