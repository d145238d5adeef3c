#ifndef NEARBY_VERSION_H
#define NEARBY_VERSION_H

// The version `nearby-gateway --version` prints. A plain `swift build` says 0.0.0-dev; scripts/package
// builds with NEARBY_GATEWAY_VERSION=<version> in the environment (from `git describe`), which
// Package.swift turns into a define for this target only, so the packaged binary names the package it
// came in. A C string because Swift has no build-time string constants.
const char *nearby_gateway_version(void);

#endif
