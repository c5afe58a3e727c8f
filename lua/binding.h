/*
 * binding.h — what a module of the Lua binding (tide.core) sees: every layer below it.
 *
 *   state.h    runtime.c gc.c trace.c <- state.c: the per-state record, errors, tracing
 *   args.h     userdata.c <- args.c options.c record.c: tensor userdata, arguments, autograd
 *   tensor.h   device.c format.c <- tensor.c: the Tensor and Device types
 *   modules.h  op_families.c views.c creation.c io.c ... context.c: one file a concern
 *   module.c   luaopen_tide_core: opens every module
 *
 * A file includes the header of its own layer; it may call the files below it, never a file
 * above or beside it (make check-layering, spec/support/layering_check.sh).
 */
#ifndef TIDE_LUA_BINDING_H
#define TIDE_LUA_BINDING_H

#include "modules.h"

#endif /* TIDE_LUA_BINDING_H */
