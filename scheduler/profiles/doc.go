// Package profiles holds the bundled device profiles: one JSON file per
// system-on-chip (CPU and GPU entries), embedded in the binary. It owns the
// data only; the schema, parsing and validation live in package scheduler
// (scheduler.Profile) and are documented in docs/profiles.md.
//
// Every number names its source; figures that are not published by the
// vendor are marked as estimates in the entry's "estimate" field, with the
// derivation.
//
// profiles must not know anything but the standard library.
package profiles
