// Package backends is the plugin API between weft's scheduler/runtime and
// the code that executes ops on a device: Backend, Device, Buffer,
// Executable, and the registry where a backend registers itself in init()
// (the database/sql driver pattern: a program enables a backend by importing
// it).
//
// The scheduler and runtime talk to backends only through this API. This
// package must not know any particular backend, frontend or pass.
package backends
