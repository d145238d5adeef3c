#ifndef NEARBY_CMOSQUITTO_SHIM_H
#define NEARBY_CMOSQUITTO_SHIM_H
// libmosquitto (Debian's libmosquitto-dev). Only Sources/Gateway/MQTT/Mosquitto.swift imports it.
#include <mosquitto.h>
#endif
